/**
 * Portfolio (seed §4A): a wallet's One Click state, its balances (also the `balances` stream) and
 * its stock positions, read from chain state.
 */
import { AddressIn, DecimalOut, Millis, Nullable, Type, type Static } from '../common/schema-kit.ts';
import { StockOneClickStatusSchema } from './stock-one-click-schemas.ts';
import { StockAddressOut, StockNullableDecimalNumberOut } from './stock-schemas.ts';

/** `GET users/{userId}`: Anchored's `userId` and `userAddress` (anchored-reference.md §4.2) and tokex's fields. */
export const StockUserInfoSchema = Type.Object({
  userId: StockAddressOut(),
  userAddress: StockAddressOut({ description: 'the wallet (userId is the wallet address too)' }),
  address: StockAddressOut(),
  oneClick: Type.Object(StockOneClickStatusSchema.properties, {
    description: "the wallet's delegation on the One Click router: delegatee is whoever it delegates to (the zero address for none)",
  }),
  boundToKey: Type.Boolean({ description: "whether this wallet is the calling key's bound userAddress" }),
  timestamp: Millis(),
});
export type StockUserInfo = Static<typeof StockUserInfoSchema>;

export const StockBalanceQuerySchema = Type.Object({ spenderAddress: Type.Optional(AddressIn()) });
export type StockBalanceQuery = Static<typeof StockBalanceQuerySchema>;

/**
 * A row of `tokenBalances`: every listed stock token, then every cash token (`isStock: false`), with
 * Anchored's fields (anchored-reference.md §4.2) and tokex's.
 */
export const StockTokenBalanceSchema = Type.Object({
  symbol: Type.String({ description: "the token's symbol (a stock token's is its ticker)" }),
  tokenAddress: StockAddressOut(),
  decimals: Type.Integer(),
  walletBalance: DecimalOut(),
  exchangeBalance: DecimalOut({ description: 'free stock held at the exchange (Stock.stockBalance); 0 for a cash token' }),
  lockedExchangeBalance: DecimalOut({ description: 'stock locked by open sell orders; 0 for a cash token' }),
  walletAllowance: DecimalOut({ description: 'the wallet\'s allowance to spenderAddress (0 toward the default, the zero address)' }),
  address: StockAddressOut({ description: 'the token (the same as tokenAddress)' }),
  name: Type.String({ description: "the token's name" }),
  stockSymbol: Nullable(Type.String(), { description: 'the stock ticker; null for a cash token' }),
  isStock: Type.Boolean(),
  price: StockNullableDecimalNumberOut({ description: "a stock's last price, USD; null for a cash token or without a quote" }),
});
export type StockTokenBalance = Static<typeof StockTokenBalanceSchema>;

export const StockCashTokenBalanceSchema = Type.Object({
  symbol: Type.String(),
  tokenAddress: StockAddressOut(),
  decimals: Type.Integer(),
  walletBalance: DecimalOut(),
  walletAllowance: Type.Optional(DecimalOut()),
});
export type StockCashTokenBalance = Static<typeof StockCashTokenBalanceSchema>;

/** tokex's mUSD figures of a wallet, `mUsdDetail` of the balance (before issue 30 they were `mUsdBalance`). */
export const StockMusdDetailSchema = Type.Object({
  available: DecimalOut({ description: 'what a buy or a withdrawal can use (Cashier balance)' }),
  locked: DecimalOut({ description: 'locked by open buy orders' }),
  total: DecimalOut(),
});
export type StockMusdDetail = Static<typeof StockMusdDetailSchema>;

/**
 * `GET users/{userId}/balance` and the `balances` stream. The mUSD balance is answered under both of
 * the spellings Anchored's documentation uses (`musdBalance`, `mUsdBalance`: anchored-reference.md §4.2).
 */
export const StockBalanceSchema = Type.Object({
  userId: StockAddressOut(),
  chainId: Type.Integer(),
  productType: Type.String(),
  address: StockAddressOut({ description: 'the wallet' }),
  musdBalance: DecimalOut({ description: 'available mUSD (mUsdDetail.available)' }),
  mUsdBalance: DecimalOut({ description: 'the same as musdBalance' }),
  mUsdDetail: StockMusdDetailSchema,
  tokenBalances: Type.Array(StockTokenBalanceSchema),
  cashTokenBalances: Type.Array(StockCashTokenBalanceSchema),
  spenderAddress: StockAddressOut({ description: 'whose allowances walletAllowance reports; the zero address unless given' }),
});
export type StockBalance = Static<typeof StockBalanceSchema>;

/** A row of `GET users/{userId}/positions`. */
export const StockPositionSchema = Type.Object({
  symbol: Type.String(),
  tokenAddress: StockAddressOut(),
  quantity: DecimalOut({ description: 'exchange (free + locked) plus wallet' }),
  exchangeQuantity: DecimalOut(),
  lockedQuantity: DecimalOut(),
  walletQuantity: DecimalOut(),
  lastPrice: DecimalOut(),
  marketValue: DecimalOut({ description: 'quantity × lastPrice, USD' }),
  lastPriceTime: Type.Optional(
    Nullable(Type.Integer(), { description: 'the time of the quote lastPrice comes from (ms); null without a quote' }),
  ),
  lastPriceStale: Type.Optional(Type.Boolean({ description: 'true when there is no quote or it is stale (as `GET prices/{symbol}` says)' })),
});
export type StockPosition = Static<typeof StockPositionSchema>;
