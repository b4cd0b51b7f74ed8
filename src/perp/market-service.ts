/**
 * Market data of the perpetual venue (docs/perp-api.md "Market data"): the book and the prices from
 * the engine's live state, 24-hour statistics and candles from the projected candles, funding rates
 * from their history. The funding rate a ticker shows is the last one applied; the next funding
 * time is the next multiple of the interval since the epoch (workers/funding-task.ts).
 */
import type { Depth, FundingRate, Kline, MarketTrade, Page as ListPage, Ticker } from '@tokex/contract';
import { NotFoundError, notListed } from '../errors/app-error.ts';
import type { Db } from '../storage/database.ts';
import type { CandleInterval } from '../storage/candle-store.ts';
import type { InstrumentSpec } from './engine/instruments.ts';
import type { PerpVenue } from './perp-venue.ts';
import { fundingRateBody, priceFreshness, priceOf, rateOf, sizeOf, usd } from './perp-views.ts';
import { klineBody, tradeBody } from './perp-views.ts';
import { listPerpCandles, type PerpCandleKind } from './store/perp-candle-store.ts';
import { listFundingRates, listMarketTrades, type Page, type TimeRange } from './store/perp-history-store.ts';
import { fundingTimeAt } from './workers/funding-task.ts';
import { venueNow } from '../lib/venue-clock.ts';

const DAY = 86_400_000;

/** `db`: where the projection's history is (it reads nothing else; storage-wiring.ts openHistoryDatabase). */
export function createMarketService(opts: { db: Db; venue: PerpVenue; fundingIntervalMs?: number; now?: () => number }) {
  const { db, venue } = opts;
  const now = opts.now ?? venueNow;
  const spec = (symbol: string): InstrumentSpec => {
    const s = venue.engine().instrument(symbol);
    if (s === undefined) throw new NotFoundError('symbol', { reason: notListed(String(symbol)) });
    return s;
  };

  async function ticker(s: InstrumentSpec, t: number): Promise<Ticker> {
    const engine = venue.engine();
    const prices = engine.prices(s.symbol)!;
    const bba = engine.bestBidAsk(s.symbol)!;
    const day = await listPerpCandles(db, { symbol: s.symbol, kind: 'trade', interval: '1m', startTime: Math.floor((t - DAY) / 60_000) * 60_000 + 60_000, endTime: t, limit: 1_440 });
    let high: number | undefined;
    let low: number | undefined;
    let volume = 0;
    let turnover = 0n;
    let trades = 0;
    for (const c of day) {
      high = high === undefined || c.highTicks > high ? c.highTicks : high;
      low = low === undefined || c.lowTicks < low ? c.lowTicks : low;
      volume += c.volumeLots;
      turnover += c.turnover;
      trades += c.trades;
    }
    const interval = opts.fundingIntervalMs ?? s.fundingIntervalMs;
    const price = (ticks: number | undefined) => (ticks === undefined || ticks <= 0 ? null : priceOf(s, ticks));
    return {
      symbol: s.symbol,
      lastPrice: price(prices.lastTradePriceTicks),
      open24h: price(day[0]?.openTicks),
      high24h: price(high),
      low24h: price(low),
      volume24h: sizeOf(s, volume),
      turnover24h: usd(turnover),
      trades24h: trades,
      bestBid: price(bba.bidTicks),
      bestAsk: price(bba.askTicks),
      markPrice: price(prices.markPriceTicks),
      indexPrice: price(prices.indexPriceTicks),
      fundingRate: rateOf(prices.lastFundingRateE9),
      nextFundingTime: fundingTimeAt(t, interval) + interval,
      openInterest: sizeOf(s, engine.openInterest(s.symbol) ?? 0),
      ts: t,
      ...priceFreshness(s, prices, t),
    };
  }

  return {
    depth(symbol: string, limit: number): Depth {
      const s = spec(symbol);
      const engine = venue.engine();
      const d = engine.depth(s.symbol, limit)!;
      const level = ([p, l]: [number, number]) => [priceOf(s, p), sizeOf(s, l)];
      return { symbol: s.symbol, bids: d.bids.map(level), asks: d.asks.map(level), seq: engine.lastSeq, ts: now() };
    },

    async tickers(symbol?: string): Promise<Ticker[]> {
      const t = now();
      const list = symbol === undefined ? venue.engine().instrumentList() : [spec(symbol)];
      return Promise.all(list.map((s) => ticker(s, t)));
    },

    async klines(q: { symbol: string; interval: CandleInterval; type: PerpCandleKind; startTime?: number; endTime?: number; limit: number }): Promise<Kline[]> {
      const s = spec(q.symbol);
      const rows = await listPerpCandles(db, { symbol: s.symbol, kind: q.type, interval: q.interval, startTime: q.startTime, endTime: q.endTime, limit: q.limit });
      return rows.map((c) => klineBody(s, c));
    },

    /** The instrument's trades, newest first; `side` is the taker's (as the `trades` stream gives them). */
    async marketTrades(q: Page & TimeRange & { symbol: string }): Promise<ListPage<MarketTrade>> {
      const s = spec(q.symbol);
      const r = await listMarketTrades(db, { ...q, symbol: s.symbol });
      return {
        total: r.total,
        rows: r.rows.map((t) => tradeBody(s, t)),
      };
    },

    async fundingRates(q: { symbol: string; startTime?: number; endTime?: number; limit: number }): Promise<FundingRate[]> {
      const s = spec(q.symbol);
      return (await listFundingRates(db, { ...q, symbol: s.symbol })).map((r) => fundingRateBody(s, r));
    },
  };
}

export type MarketService = ReturnType<typeof createMarketService>;
