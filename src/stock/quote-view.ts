/**
 * Quotes and candles as the API shows them, for the REST routes and the streams alike: a quote
 * (`GET prices/{symbol}`, the `quotes` stream) with its token's on-chain context, and a candle.
 */
import { INTERVAL_MS, type Quote } from '../marketdata/market-types.ts';
import type { CandleRecord } from '../storage/candle-store.ts';
import type { MarketConfigView, StockListing } from './stock-deps.ts';

export function quoteView(listing: StockListing, quote: Quote, cfg: MarketConfigView, open: boolean) {
  let totalSupply = '0';
  for (const s of cfg.stocks) {
    if (s.symbol === listing.symbol) {
      totalSupply = s.totalSupply;
      break;
    }
  }
  return {
    symbol: listing.symbol,
    bid: quote.bid,
    ask: quote.ask,
    last: quote.last,
    timestamp: quote.timestamp,
    marketStatus: open ? ('open' as const) : ('closed' as const),
    token: { address: listing.address, decimals: listing.decimals, totalSupply },
  };
}

/** A candle as `GET prices/{symbol}/history` and the `klines:<interval>` stream show it. */
export function candleView(c: CandleRecord) {
  return { openTime: c.openTime, closeTime: c.openTime + INTERVAL_MS[c.interval] - 1, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume };
}
