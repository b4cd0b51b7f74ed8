/**
 * Market data (seed §4A): config, symbols, quotes, K-lines, underlying quotes, corporate actions.
 * A quote and a candle are also what the `quotes` and `klines:<interval>` streams push.
 */
import { PageQueryProps } from '../common/paging.ts';
import { DecimalOut, Millis, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import {
  STOCK_CORPORATE_ACTION_TYPES,
  STOCK_DEFAULT_KLINE_INTERVAL,
  STOCK_DEFAULT_KLINE_LIMIT,
  STOCK_KLINE_INTERVALS,
  STOCK_MARKET_STATUSES,
  STOCK_MAX_KLINE_LIMIT,
  STOCK_SYMBOL_MAX_LENGTH,
} from './stock-enums.ts';
import { StockAddressOut, StockTimeRangeProps } from './stock-schemas.ts';

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

/** `GET config`: the on-chain market configuration, as cached (`blockNumber` and `updatedAt` say when). */
export const StockConfigSchema = Type.Object({
  chainId: Type.Integer(),
  product: Type.String(),
  cashierBuffer: StockCashierBufferSchema,
  exchangeFeeConfig: StockFeeConfigSchema,
  cashierTokenConfig: Type.Array(StockCashTokenConfigSchema),
  blockNumber: Type.String(),
  updatedAt: Millis(),
});
export type StockConfig = Static<typeof StockConfigSchema>;

// ------------------------------------------------------------------ symbols, quotes, candles

export const StockSymbolSchema = Type.Object({
  symbol: Type.String(),
  name: Type.String(),
  underlying: Type.String(),
  exchange: Type.String(),
  address: StockAddressOut(),
  decimals: Type.Integer(),
  tradable: Type.Boolean(),
});
export type StockSymbol = Static<typeof StockSymbolSchema>;

/** `GET prices/{symbol}` and the `quotes` stream: a quote with its token's on-chain context. */
export const StockQuoteSchema = Type.Object({
  symbol: Type.String(),
  bid: DecimalOut(),
  ask: DecimalOut(),
  last: DecimalOut(),
  timestamp: Millis(),
  marketStatus: StringEnum(STOCK_MARKET_STATUSES),
  token: Type.Object({ address: StockAddressOut(), decimals: Type.Integer(), totalSupply: DecimalOut() }),
  stale: StaleFlag(),
});
export type StockQuote = Static<typeof StockQuoteSchema>;

export const StockCandleSchema = Type.Object({
  openTime: Millis(),
  closeTime: Millis(),
  open: DecimalOut(),
  high: DecimalOut(),
  low: DecimalOut(),
  close: DecimalOut(),
  volume: DecimalOut(),
});
export type StockCandle = Static<typeof StockCandleSchema>;

export const StockPriceHistoryQuerySchema = Type.Object({
  interval: Type.Optional(StringEnum(STOCK_KLINE_INTERVALS, { default: STOCK_DEFAULT_KLINE_INTERVAL })),
  ...StockTimeRangeProps,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: STOCK_MAX_KLINE_LIMIT, default: STOCK_DEFAULT_KLINE_LIMIT })),
});
export type StockPriceHistoryQuery = Static<typeof StockPriceHistoryQuerySchema>;

export const StockPriceHistorySchema = Type.Object({
  symbol: Type.String(),
  interval: Type.String(),
  candles: Type.Array(StockCandleSchema),
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

export const StockCorporateActionSchema = Type.Object({
  symbol: Type.String(),
  type: StringEnum(STOCK_CORPORATE_ACTION_TYPES),
  exDate: Type.String({ description: 'YYYY-MM-DD' }),
  ratio: Type.Optional(Type.String()),
  amount: Type.Optional(DecimalOut()),
  currency: Type.Optional(Type.String()),
});
export type StockCorporateAction = Static<typeof StockCorporateActionSchema>;

export const StockCorporateActionQuerySchema = Type.Object({
  symbol: Type.Optional(Type.String({ maxLength: STOCK_SYMBOL_MAX_LENGTH })),
  ...PageQueryProps,
});
export type StockCorporateActionQuery = Static<typeof StockCorporateActionQuerySchema>;
