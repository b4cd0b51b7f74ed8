/** Types shared by the market-data service, its stores and the APIs that read quotes and candles. */

export const INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type Interval = (typeof INTERVALS)[number];

export const INTERVAL_MS: Record<Interval, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
};

/** One OHLCV bar. Prices and volume are exact decimal strings; openTime is ms since the epoch (UTC-aligned). */
export interface Candle {
  symbol: string;
  interval: Interval;
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

/** Latest quote of a symbol. Prices are decimal strings in USD; timestamp is ms since the epoch. */
export interface Quote {
  symbol: string;
  bid: string;
  ask: string;
  last: string;
  timestamp: number;
}

/** Anything that answers the latest quote from memory (the live service or a cache fed by storage). */
export interface QuoteReader {
  getQuote(symbol: string): Quote | undefined;
}
