/**
 * Portfolio (seed §4A): a wallet's One Click state, its balances (also the `balances` stream) and
 * its stock positions, read from chain state.
 */
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { STOCK_ONE_CLICK_STATUSES } from './stock-enums.ts';
import { StockAddressOut } from './stock-schemas.ts';

/** `GET users/{userId}`. */
export const StockUserInfoSchema = Type.Object({
  userId: StockAddressOut(),
  address: StockAddressOut(),
  oneClick: Type.Object({ status: StringEnum(STOCK_ONE_CLICK_STATUSES), delegatee: StockAddressOut() }),
  boundToKey: Type.Boolean({ description: "whether this wallet is the calling key's bound userAddress" }),
  timestamp: Millis(),
});
export type StockUserInfo = Static<typeof StockUserInfoSchema>;

export const StockBalanceQuerySchema = Type.Object({ spenderAddress: Type.Optional(AddressIn()) });
export type StockBalanceQuery = Static<typeof StockBalanceQuerySchema>;

export const StockTokenBalanceSchema = Type.Object({
  symbol: Type.String(),
  tokenAddress: StockAddressOut(),
  decimals: Type.Integer(),
  walletBalance: DecimalOut(),
  exchangeBalance: DecimalOut({ description: 'free stock held at the exchange (Stock.stockBalance)' }),
  lockedExchangeBalance: DecimalOut({ description: 'stock locked by open sell orders' }),
  walletAllowance: Type.Optional(DecimalOut({ description: 'allowance to spenderAddress; present only when it was given' })),
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

/** `GET users/{userId}/balance` and the `balances` stream. */
export const StockBalanceSchema = Type.Object({
  userId: StockAddressOut(),
  mUsdBalance: Type.Object({ available: DecimalOut(), locked: DecimalOut(), total: DecimalOut() }),
  tokenBalances: Type.Array(StockTokenBalanceSchema),
  cashTokenBalances: Type.Array(StockCashTokenBalanceSchema),
  spenderAddress: Type.Optional(StockAddressOut()),
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
