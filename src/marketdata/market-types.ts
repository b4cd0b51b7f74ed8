/**
 * Types shared by the market-data service and the APIs that read quotes and candles. The stored
 * shapes (and the interval list the candles table holds) are the storage layer's records, named
 * here as market data speaks of them.
 */
import { CANDLE_INTERVALS, type CandleInterval, type CandleRecord } from '../storage/candle-store.ts';
import type { QuoteRecord } from '../storage/quote-store.ts';

export const INTERVALS = CANDLE_INTERVALS;
export type Interval = CandleInterval;

export const INTERVAL_MS: Record<Interval, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
};

/** One OHLCV bar. Prices and volume are exact decimal strings; openTime is ms since the epoch (UTC-aligned). */
export type Candle = CandleRecord;

/** Latest quote of a symbol. Prices are decimal strings in USD; timestamp is ms since the epoch. */
export type Quote = QuoteRecord;

/** Anything that answers the latest quote from memory (the live service or a cache fed by storage). */
export interface QuoteReader {
  getQuote(symbol: string): Quote | undefined;
}

/** A pin in force (price-pins.ts): the simulator quotes `price` (two decimals) for `symbol` since `setAt` (ms). */
export interface PricePin {
  symbol: string;
  price: string;
  setAt: number;
}
