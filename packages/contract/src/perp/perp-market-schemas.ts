/**
 * Market data (docs/perp-api.md "Market data"): server time, instruments and their rules, the book,
 * 24-hour tickers with mark, index, funding and open interest, candles, the public trade tape and
 * the funding rate history.
 */
import { PageQueryProps } from '../common/paging.ts';
import { DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { KLINE_INTERVALS, KLINE_TYPES, ORDER_SIDES } from './perp-enums.ts';
import { SymbolParam, TimeRangeProps } from './perp-schemas.ts';

export const ServerTimeSchema = Type.Object({ serverTime: Millis() });
export type ServerTime = Static<typeof ServerTimeSchema>;

export const InstrumentsQuerySchema = Type.Object(
  { symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 33, description: 'only this instrument (e.g. BTC-USD)' })) },
  { additionalProperties: false },
);
export type InstrumentsQuery = Static<typeof InstrumentsQuerySchema>;

export const InstrumentSchema = Type.Object({
  symbol: Type.String({ description: 'e.g. BTC-USD' }),
  base: Type.String(),
  quote: Type.String(),
  tickSize: DecimalOut({ description: 'price step (quote per base)' }),
  lotSize: DecimalOut({ description: 'size step (base units)' }),
  minSize: DecimalOut({ description: 'smallest order size (base units)' }),
  maxSize: DecimalOut({ description: 'largest order size (base units)' }),
  maxLeverage: DecimalOut({ description: 'highest leverage an account may choose' }),
  initialMarginRatio: DecimalOut({ description: 'floor of the initial margin, a fraction of notional (0.02 = 2%)' }),
  maintenanceMarginRatio: DecimalOut({ description: 'maintenance margin, a fraction of notional' }),
  makerFeeRate: DecimalOut({ description: 'fraction of notional' }),
  takerFeeRate: DecimalOut({ description: 'fraction of notional' }),
  fundingInterval: Type.Integer({ description: 'milliseconds between funding payments' }),
});
export type Instrument = Static<typeof InstrumentSchema>;

export const DepthQuerySchema = Type.Object(
  { symbol: SymbolParam, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'levels per side (default 50)' })) },
  { additionalProperties: false },
);
export type DepthQuery = Static<typeof DepthQuerySchema>;

/** `[price, size]`. */
const DepthLevel = Type.Array(Type.String(), { minItems: 2, maxItems: 2, description: '[price, size]' });

export const DepthSchema = Type.Object({
  symbol: Type.String(),
  /** Best first. */
  bids: Type.Array(DepthLevel),
  asks: Type.Array(DepthLevel),
  seq: Type.Integer({ description: 'the engine event seq the book is at' }),
  ts: Millis(),
});
export type Depth = Static<typeof DepthSchema>;

export const TickersQuerySchema = Type.Object({ symbol: Type.Optional(SymbolParam) }, { additionalProperties: false });
export type TickersQuery = Static<typeof TickersQuerySchema>;

const PriceOrNull = () => Nullable(Type.String());

export const TickerSchema = Type.Object({
  symbol: Type.String(),
  lastPrice: PriceOrNull(),
  open24h: PriceOrNull(),
  high24h: PriceOrNull(),
  low24h: PriceOrNull(),
  volume24h: DecimalOut({ description: 'base units traded in the last 24 hours' }),
  turnover24h: DecimalOut({ description: 'USD traded in the last 24 hours' }),
  trades24h: Type.Integer(),
  bestBid: PriceOrNull(),
  bestAsk: PriceOrNull(),
  markPrice: PriceOrNull(),
  indexPrice: PriceOrNull(),
  fundingRate: DecimalOut({ description: 'the last funding rate applied, per interval (0.0001 = 0.01 %)' }),
  nextFundingTime: Millis(),
  openInterest: DecimalOut({ description: 'base units held long (= short)' }),
  ts: Millis(),
  markTime: Nullable(Type.Integer(), { description: 'when the mark was last set (ms); null before the first' }),
  indexTime: Nullable(Type.Integer(), { description: "the time of the index's market-data quote (ms); null before the first" }),
  stale: Type.Boolean({
    description:
      "true when there is no mark or index yet, the index is older than the instrument's indexStaleMs (default 30 s: liquidation pauses) or the mark older than its markStaleMs (default 60 s: market orders are refused), as of `ts`",
  }),
});
export type Ticker = Static<typeof TickerSchema>;

export const KlinesQuerySchema = Type.Object(
  {
    symbol: SymbolParam,
    interval: StringEnum(KLINE_INTERVALS),
    type: Type.Optional(StringEnum(KLINE_TYPES, { description: 'default trade' })),
    ...TimeRangeProps,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'default 100: the newest candles of the range' })),
  },
  { additionalProperties: false },
);
export type KlinesQuery = Static<typeof KlinesQuerySchema>;

export const KlineSchema = Type.Object({
  openTime: Millis(),
  open: DecimalOut(),
  high: DecimalOut(),
  low: DecimalOut(),
  close: DecimalOut(),
  volume: DecimalOut(),
  turnover: DecimalOut(),
  trades: Type.Integer(),
});
export type Kline = Static<typeof KlineSchema>;

export const MarketTradesQuerySchema = Type.Object({ symbol: SymbolParam, ...TimeRangeProps, ...PageQueryProps }, { additionalProperties: false });
export type MarketTradesQuery = Static<typeof MarketTradesQuerySchema>;

/** A trade of the public tape (`GET market-trades`, the `trades` stream): the taker's side. */
export const MarketTradeSchema = Type.Object({
  id: Type.String({ description: "the trade's id: the engine event seq of the fill (decimal string)" }),
  symbol: Type.String(),
  price: DecimalOut(),
  size: DecimalOut({ description: 'base units' }),
  side: StringEnum(ORDER_SIDES, { description: "the taker's side" }),
  ts: Millis(),
  liquidation: Type.Boolean({ description: "true when the taker was the engine's liquidation order of an account" }),
});
export type MarketTrade = Static<typeof MarketTradeSchema>;

export const FundingRatesQuerySchema = Type.Object(
  { symbol: SymbolParam, ...TimeRangeProps, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'default 100' })) },
  { additionalProperties: false },
);
export type FundingRatesQuery = Static<typeof FundingRatesQuerySchema>;

export const FundingRateSchema = Type.Object({
  symbol: Type.String(),
  fundingRate: DecimalOut(),
  fundingTime: Millis(),
  markPrice: DecimalOut(),
});
export type FundingRate = Static<typeof FundingRateSchema>;
