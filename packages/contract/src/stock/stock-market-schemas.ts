/**
 * Market data (seed §4A): config, symbols, quotes, K-lines, underlying quotes, corporate actions.
 * A quote and a candle are also what the `quotes` and `klines:<interval>` streams push.
 */
import { PageQueryProps } from '../common/paging.ts';
import { VISIBLE_ASCII_OR_EMPTY_PATTERN } from '../common/patterns.ts';
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static, type TSchema } from '../common/schema-kit.ts';
import {
  STOCK_CORPORATE_ACTION_STATUSES,
  STOCK_CORPORATE_ACTION_TYPES,
  STOCK_DIVIDEND_STATUSES,
  STOCK_DEFAULT_KLINE_LIMIT,
  STOCK_DEFAULT_PRICE_ADJUSTMENT,
  STOCK_KLINE_INTERVALS,
  STOCK_MARKET_SESSIONS,
  STOCK_MARKET_STATUSES,
  STOCK_MAX_KLINE_LIMIT,
  STOCK_MAX_UNIX_SECONDS,
  STOCK_PRICE_ADJUSTMENTS,
  STOCK_SYMBOL_MAX_LENGTH,
} from './stock-enums.ts';
import { StockAddressOut, StockDecimalNumberOut, StockNullableDecimalNumberOut } from './stock-schemas.ts';

const StaleFlag = () =>
  Type.Boolean({
    description:
      'true when the quote is older than the executor fills against (EXECUTOR_QUOTE_MAX_AGE_MS, default 30 s): the market data stopped, and a market order would wait, then be rejected',
  });

// ------------------------------------------------------------------ config

export const StockCashTokenConfigSchema = Type.Object({
  tokenAddress: StockAddressOut(),
  symbol: Type.String(),
  decimals: Type.Integer(),
  enabled: Type.Boolean(),
  minAmount: DecimalOut(),
  withdrawBuffer: DecimalOut({ description: 'token amount that can still be withdrawn instantly' }),
  cashierBalance: DecimalOut(),
});
export type StockCashTokenConfig = Static<typeof StockCashTokenConfigSchema>;

export const StockCashierBufferSchema = Type.Object({
  creditBuffer: DecimalOut({ description: 'mUSD that can still be credited instantly' }),
  totalQueuedDeposits: DecimalOut({ description: 'mUSD of deposits waiting for the operator' }),
  totalQueuedWithdrawals: DecimalOut({ description: 'mUSD of withdrawals waiting for the operator' }),
  feeBalance: DecimalOut({ description: 'fees collected, mUSD' }),
  treasuryBalance: DecimalOut({ description: 'the platform account that is the counterparty of settlements, mUSD' }),
});
export type StockCashierBuffer = Static<typeof StockCashierBufferSchema>;

export const StockFeeConfigSchema = Type.Object({
  marketFeeBps: Type.Integer({ description: 'fee on market orders, basis points of the fill notional' }),
  limitFeeBps: Type.Integer({ description: 'fee on limit orders, basis points of the fill notional' }),
});
export type StockFeeConfig = Static<typeof StockFeeConfigSchema>;

/** `exchangeFeeConfig` of `GET config`: the fees, and the chain and product they are of (anchored-reference.md §4.1). */
export const StockExchangeFeeConfigSchema = Type.Object({
  ...StockFeeConfigSchema.properties,
  chainId: Type.Integer({ description: 'the chain the fees are of (CHAIN_ID)' }),
  productType: Type.String({ description: 'the product the fees are of (STOCK_PRODUCT, what x-api-p carries)' }),
});
export type StockExchangeFeeConfig = Static<typeof StockExchangeFeeConfigSchema>;

/**
 * One call of an owner change scheduled in a venue's timelock and not yet executed or cancelled
 * (docs/security.md, "Owner and upgrader"): what will change, on which contract, and from when.
 */
export const StockScheduledChangeSchema = Type.Object({
  operationId: Type.String({ description: 'the timelock operation id (bytes32 hex); a batch operation has one entry per call' }),
  index: Type.Integer({ description: 'the call\'s index in its operation' }),
  contract: Type.String({ description: 'the venue contract called, `venue.path` as the deployment names it (`stock.stockRouter`, `stock.stocks.AAPL`, `perp.marginVault`, `stock.timelock`), or its address' }),
  target: Type.String({ description: 'the contract\'s address' }),
  function: Type.Optional(Type.String({ description: 'the function called (absent when the selector is not one of the venue\'s)' })),
  args: Type.Optional(Type.Array(Type.String(), { description: 'its arguments as strings: addresses, decimal integers, JSON for tuples' })),
  data: Type.String({ description: 'the call data, hex' }),
  readyAt: Millis({ description: 'when it may be executed (chain time), ms since the epoch' }),
  timelock: Type.String({ description: 'the timelock that executes it' }),
});
export type StockScheduledChange = Static<typeof StockScheduledChangeSchema>;

/** `GET config`: the on-chain market configuration, as cached (`blockNumber` and `updatedAt` say when). */
export const StockConfigSchema = Type.Object({
  chainId: Type.Integer(),
  product: Type.String(),
  productType: Type.String({ description: 'the same as product, under the name Anchored gives it elsewhere' }),
  cashierBuffer: StockCashierBufferSchema,
  exchangeFeeConfig: StockExchangeFeeConfigSchema,
  cashierTokenConfig: Type.Array(StockCashTokenConfigSchema),
  blockNumber: Type.String(),
  updatedAt: Millis(),
  scheduled: Type.Array(StockScheduledChangeSchema, { description: 'owner changes and upgrades waiting in the venues\' timelocks, soonest first (empty for a venue without a timelock)' }),
});
export type StockConfig = Static<typeof StockConfigSchema>;

// ------------------------------------------------------------------ symbols, quotes, candles

/**
 * A row of `GET symbols`: tokex's fields (`symbol` to `tradable`) and Anchored's (anchored-reference.md
 * §4.1). The 24-hour figures come from the 1-minute candles of the 24 hours before
 * `lastUpdateTimestamp` (docs/stock-api.md, "Answers").
 */
export const StockSymbolSchema = Type.Object({
  symbol: Type.String(),
  name: Type.String(),
  underlying: Type.String(),
  exchange: Type.String(),
  address: StockAddressOut(),
  decimals: Type.Integer(),
  tradable: Type.Boolean(),
  contractAddress: StockAddressOut({ description: 'the token contract (the same as address)' }),
  contractSymbol: Type.String({ description: "the token's ERC-20 symbol()" }),
  contractName: Type.String({ description: "the token's ERC-20 name()" }),
  onChainDecimals: Type.Integer({ description: "the token's ERC-20 decimals()" }),
  fractionable: Type.Boolean({ description: 'fractions of a share trade (us-sessions: per symbol, STOCK_SESSION_FLAGS; otherwise true: every token has 18 decimals)' }),
  overnightTradable: Type.Boolean({ description: 'orders fill in the overnight session (us-sessions: per symbol, STOCK_SESSION_FLAGS; other calendars: true unless nyse)' }),
  fractionalEhEnabled: Type.Boolean({ description: 'fractional quantities fill in the extended sessions (overnight, pre-market, after-hours) too' }),
  price: StockNullableDecimalNumberOut({ description: 'the last price (the quote\'s last), USD; null without a quote' }),
  change24H: StockNullableDecimalNumberOut({ description: 'price minus the open of the first 1-minute candle of the 24 hours; null without a candle in them' }),
  change24HPercent: StockNullableDecimalNumberOut({ description: 'change24H as a percentage of that open, 2 decimals (half away from zero)' }),
  volume24H: StockDecimalNumberOut({ description: 'shares traded in the 24 hours: the sum of their 1-minute candles\' volumes' }),
  logoUrl: Type.String({ description: 'empty: tokex has no logos' }),
  pdfUrl: Type.String({ description: 'empty: tokex has no prospectus documents' }),
  lastUpdateTimestamp: Type.Integer({ description: 'when the 24-hour figures were computed (they are cached a few seconds), Unix seconds' }),
});
export type StockSymbol = Static<typeof StockSymbolSchema>;

/** The trading session on when the quote was answered (docs/stock-api.md, "Trading sessions"). */
const MarketSession = () =>
  StringEnum(STOCK_MARKET_SESSIONS, {
    description: 'the US session on now: overnight, pre-market, regular or after-hours under MARKET_CALENDAR=us-sessions; regular or closed under the other calendars',
  });

/** `basicInfo` of `GET prices/{symbol}`: the underlying's quote, the same on every chain. */
export const StockQuoteBasicInfoSchema = Type.Object({
  symbol: Type.String(),
  name: Type.String(),
  underlying: Type.String(),
  exchange: Type.String(),
  bid: DecimalOut(),
  ask: DecimalOut(),
  last: DecimalOut(),
  timestamp: Millis(),
  marketStatus: StringEnum(STOCK_MARKET_STATUSES),
  session: MarketSession(),
  stale: StaleFlag(),
});
export type StockQuoteBasicInfo = Static<typeof StockQuoteBasicInfoSchema>;

/** `onChain` of `GET prices/{symbol}`: the token of this chain and product (never null: a listed symbol has one). */
export const StockQuoteOnChainSchema = Type.Object({
  contractAddress: StockAddressOut(),
  contractSymbol: Type.String(),
  contractName: Type.String(),
  decimals: Type.Integer(),
  onChainDecimals: Type.Integer(),
  totalSupply: DecimalOut(),
  tradable: Type.Boolean(),
});
export type StockQuoteOnChain = Static<typeof StockQuoteOnChainSchema>;

/**
 * `GET prices/{symbol}` and the `quotes` stream: a quote with its token's on-chain context, as
 * tokex's fields at the top and as Anchored's `{basicInfo, onChain}` (anchored-reference.md §4.1).
 */
export const StockQuoteSchema = Type.Object({
  symbol: Type.String(),
  bid: DecimalOut(),
  ask: DecimalOut(),
  last: DecimalOut(),
  timestamp: Millis(),
  marketStatus: StringEnum(STOCK_MARKET_STATUSES),
  session: MarketSession(),
  token: Type.Object({ address: StockAddressOut(), decimals: Type.Integer(), totalSupply: DecimalOut() }),
  stale: StaleFlag(),
  basicInfo: StockQuoteBasicInfoSchema,
  onChain: StockQuoteOnChainSchema,
});
export type StockQuote = Static<typeof StockQuoteSchema>;

/** A candle's five figures in one representation (`volume` as given: it may say more). */
function candleFigures<T extends TSchema>(figure: () => T, volume: T) {
  return { open: figure(), high: figure(), low: figure(), close: figure(), volume };
}

/** A candle's figures as exact decimal strings: what tokex answered at the candle's top level before it took Anchored's numbers. */
export const StockCandleExactSchema = Type.Object(candleFigures(DecimalOut, DecimalOut()));
export type StockCandleExact = Static<typeof StockCandleExactSchema>;

/**
 * A K-line bar. Anchored documents `open` and `high` as numbers (anchored-reference.md §4.1, the rest
 * of its table is cut), so all five figures are JSON numbers printed from the exact decimal's digits
 * on REST; `exact` holds the same figures as decimal strings, which a client parsing JSON into
 * doubles reads without loss (docs/stock-api.md, "Price history").
 */
export const StockCandleSchema = Type.Object({
  openTime: Millis(),
  closeTime: Millis(),
  ...candleFigures(StockDecimalNumberOut, StockDecimalNumberOut({ description: 'shares traded: exact decimal printed as a JSON number' })),
  exact: StockCandleExactSchema,
});
export type StockCandle = Static<typeof StockCandleSchema>;

/**
 * `GET prices/{symbol}/history` as Anchored documents it (anchored-reference.md §4.1): times in Unix
 * seconds, `endTime` and `interval` required. A time above 4294967295 is refused as milliseconds.
 */
export const StockPriceHistoryQuerySchema = Type.Object({
  interval: StringEnum(STOCK_KLINE_INTERVALS, { description: '3m and 1w are rolled up from the 1m and 1d candles' }),
  startTime: Type.Optional(
    Type.Integer({ minimum: 0, description: `Unix seconds: the first \`limit\` candles opening at or after it (at most ${STOCK_MAX_UNIX_SECONDS})` }),
  ),
  endTime: Type.Integer({
    minimum: 0,
    description: `Unix seconds: candles opening at or before it; without startTime the latest \`limit\` of them (at most ${STOCK_MAX_UNIX_SECONDS}: a larger value is taken for milliseconds and refused)`,
  }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: STOCK_MAX_KLINE_LIMIT, default: STOCK_DEFAULT_KLINE_LIMIT })),
  adjustment: Type.Optional(
    StringEnum(STOCK_PRICE_ADJUSTMENTS, {
      default: STOCK_DEFAULT_PRICE_ADJUSTMENT,
      description: 'prices before each ex-date of the corporate-action table back-adjusted: split, dividend, all (both) or raw (spin-off: raw, the table has no spin-offs)',
    }),
  ),
});
export type StockPriceHistoryQuery = Static<typeof StockPriceHistoryQuerySchema>;

export const StockPriceHistorySchema = Type.Object({
  symbol: Type.String(),
  interval: Type.String(),
  adjustment: StringEnum(STOCK_PRICE_ADJUSTMENTS, { description: 'the adjustment applied' }),
  candles: Type.Array(StockCandleSchema, {
    description: 'ascending by openTime; adjusted prices and volumes are rounded half up to 8 decimals (docs/stock-api.md)',
  }),
});
export type StockPriceHistory = Static<typeof StockPriceHistorySchema>;

export const StockUnderlyingPriceSchema = Type.Object({
  symbol: Type.String(),
  underlying: Type.String(),
  exchange: Type.String(),
  price: DecimalOut(),
  timestamp: Millis(),
  marketStatus: StringEnum(STOCK_MARKET_STATUSES),
  stale: StaleFlag(),
});
export type StockUnderlyingPrice = Static<typeof StockUnderlyingPriceSchema>;

// ------------------------------------------------------------------ corporate actions

/** What an applied dividend paid, all amounts exact (docs/corporate-actions.md, "Amounts"). */
export const StockDividendTotalsSchema = Type.Object({
  recordBlock: Type.Integer({ description: 'block whose balances made the holders of record' }),
  withholdingBps: Type.Integer({ description: 'withholding in basis points (DIVIDEND_WITHHOLDING_BPS when applied)' }),
  sharesOfRecord: DecimalOut({ description: 'wallet plus exchange balances of every holder at the record block' }),
  grossAmount: DecimalOut({ description: 'amount per share × shares of record, in the cash token, rounded down' }),
  withholdingAmount: DecimalOut({ description: 'grossAmount − netAmount' }),
  netAmount: DecimalOut({ description: 'paid to the holders together, exactly (the sum of their DIVIDEND operations)' }),
  holders: Type.Integer(),
  cashToken: StockAddressOut(),
  distributor: StockAddressOut(),
  distributionId: Nullable(Type.String()),
  merkleRoot: Type.String(),
});
export type StockDividendTotals = Static<typeof StockDividendTotalsSchema>;

/** A holder's DIVIDEND operation: its share of an applied dividend, paid in the cash token. */
export const StockDividendOperationSchema = Type.Object({
  operationId: Type.String(),
  operationType: Type.Literal('DIVIDEND'),
  operationStatus: StringEnum(STOCK_DIVIDEND_STATUSES),
  userAddress: StockAddressOut(),
  symbol: Type.String(),
  stockAddress: StockAddressOut(),
  shares: DecimalOut({ description: 'shares of record (wallet plus exchange balance at the record block)' }),
  amount: DecimalOut({ description: 'cash token paid, net of withholding' }),
  tokenAddress: StockAddressOut({ description: 'the cash token' }),
  txHash: Nullable(Type.String(), { description: 'the transaction that paid it (the operator\'s push or the holder\'s own claim)' }),
  distributor: StockAddressOut(),
  distributionId: Nullable(Type.String()),
  proof: Type.Array(Type.String(), { description: "the leaf's Merkle proof, for DividendDistributor.claim" }),
  createdAt: Millis(),
  updatedAt: Millis(),
  paidAt: Nullable(Millis()),
});
export type StockDividendOperation = Static<typeof StockDividendOperationSchema>;

export const StockCorporateActionSchema = Type.Object({
  symbol: Type.String(),
  type: StringEnum(STOCK_CORPORATE_ACTION_TYPES),
  exDate: Type.String({ description: 'YYYY-MM-DD' }),
  ratio: Type.Optional(Type.String()),
  effectiveAt: Type.Optional(
    Type.Integer({ description: 'a split this venue applies: when its quotes, balances and orders move to the new shares (ms): 00:00 New York on the ex-date, or 5 s after one added on its ex-date, at the next minute' }),
  ),
  amount: Type.Optional(DecimalOut()),
  currency: Type.Optional(Type.String()),
  recordDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD; absent: the ex-date' })),
  status: Type.Optional(StringEnum(STOCK_CORPORATE_ACTION_STATUSES)),
  txHash: Type.Optional(Nullable(Type.String(), { description: 'the transaction that applied it; null before, and for an action that predates the venue' })),
  reason: Type.Optional(Nullable(Type.String(), { description: 'why it failed' })),
  dividend: Type.Optional(Nullable(StockDividendTotalsSchema)),
  operations: Type.Optional(Type.Array(StockDividendOperationSchema, { description: "the DIVIDEND operations of the asked wallet (userAddress, default the key's bound wallet)" })),
});
export type StockCorporateAction = Static<typeof StockCorporateActionSchema>;

export const StockCorporateActionQuerySchema = Type.Object({
  symbol: Type.Optional(Type.String({ maxLength: STOCK_SYMBOL_MAX_LENGTH, pattern: VISIBLE_ASCII_OR_EMPTY_PATTERN })),
  userAddress: Type.Optional(AddressIn({ description: "wallet whose DIVIDEND operations the rows carry (default: the key's bound wallet)" })),
  ...PageQueryProps,
});
export type StockCorporateActionQuery = Static<typeof StockCorporateActionQuerySchema>;
