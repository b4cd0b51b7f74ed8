/**
 * Feeds the perpetual venue's streams from the engine's durable events (docs/streams.md): runs
 * beside the engine, one per venue. It starts an epoch with what the engine holds (books, marks,
 * every account's open orders, positions and balance), then folds each turn's events:
 *
 * - orders and fills with the history's own fold (projection/event-projection.ts), so a streamed
 *   order is the `orders/history` row it becomes;
 * - public trades and trade candles from the same fold;
 * - the book as the levels that changed since the last published book (a diff of the engine's
 *   aggregated levels of the symbols the events touched, top DEPTH_LEVELS a side);
 * - marks on each mark and funding event;
 * - the positions and balance of every account an event names, from the engine's state.
 *
 * Each second, tickers of the symbols that moved, and the positions and balances of the holders
 * of a symbol whose mark moved (their unrealised PnL), are published too.
 */
import { OPEN_ORDER_STATUSES } from '@tokex/contract';
import type { Logger } from '../../lib/logger.ts';
import type { Db } from '../../storage/database.ts';
import { INTERVALS } from '../../marketdata/market-types.ts';
import type { PublishedUpdate, StreamPublisher } from '../../streams/stream-publisher.ts';
import type { EngineEvent } from '../engine/engine-types.ts';
import type { InstrumentSpec } from '../engine/instruments.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import { accountOf, positionOf, positionsOf } from '../account-service.ts';
import type { MarketService } from '../market-service.ts';
import { fillBody, klineBody, openOrderBody, orderBody, priceFreshness, priceOf, rateOf, sizeOf, tradeBody } from '../perp-views.ts';
import { mergeCandle, projectEvents } from '../projection/event-projection.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { listPerpCandles, type PerpCandleRecord } from '../store/perp-candle-store.ts';
import { getOrdersByIds, listMarketTrades, type PerpOrderRecord } from '../store/perp-history-store.ts';
import { RECENT_ITEMS } from './perp-stream-channels.ts';
import { fundingTimeAt } from '../workers/funding-task.ts';
import { venueNow } from '../../lib/venue-clock.ts';

/** Levels a side the depth stream carries. */
export const DEPTH_LEVELS = 200;

export interface PerpStreamTaskOptions {
  engine: () => PerpEngine;
  gateway: Pick<EngineGateway, 'subscribe'>;
  /** Where the projection's history is (it reads nothing else; storage-wiring.ts openHistoryDatabase). */
  db: Db;
  publisher: StreamPublisher;
  market: Pick<MarketService, 'tickers'>;
  fundingIntervalMs?: number;
  /** How often tickers and mark-driven position values are published. Default 1 000 ms. */
  refreshMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
}

export interface PerpStreamTask {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Starts a new epoch from the engine's state (after the broker lost a batch). */
  resync(): Promise<void>;
  /** The last event seq published (tests). */
  publishedSeq(): number;
}

type Levels = { bids: Map<number, number>; asks: Map<number, number> };

/** Open orders stay in a snapshot: waiting triggers (UNTRIGGERED) as well as resting ones. */
const OPEN: ReadonlySet<string> = new Set(OPEN_ORDER_STATUSES);


export function createPerpStreamTask(opts: PerpStreamTaskOptions): PerpStreamTask {
  const { publisher } = opts;
  const now = opts.now ?? venueNow;
  const refreshMs = opts.refreshMs ?? 1_000;
  const open = new Map<number, PerpOrderRecord>();
  const books = new Map<string, Levels>();
  const candles = new Map<string, PerpCandleRecord>();
  const movedTickers = new Set<string>();
  const movedMarks = new Set<string>();
  /** Per symbol, the `stale` of the prices last published (refresh publishes a change of it). */
  const staleShown = new Map<string, boolean>();
  let pending: EngineEvent[] = [];
  let scheduled = false;
  let lastSeq = 0;
  let unsubscribe: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let refreshing = false;

  const engine = () => opts.engine();
  const spec = (symbol: string) => engine().instrument(symbol);

  function markBody(symbol: string) {
    const s = spec(symbol)!;
    const p = engine().prices(symbol)!;
    const interval = opts.fundingIntervalMs ?? s.fundingIntervalMs;
    const t = now();
    const price = (ticks: number) => (ticks > 0 ? priceOf(s, ticks) : null);
    return {
      symbol, markPrice: price(p.markPriceTicks), indexPrice: price(p.indexPriceTicks), fundingRate: rateOf(p.lastFundingRateE9), nextFundingTime: fundingTimeAt(t, interval) + interval, ts: t,
      ...priceFreshness(s, p, t),
    };
  }

  /** The engine's levels of a symbol as maps, top DEPTH_LEVELS a side. */
  function levelsOf(symbol: string): Levels {
    const d = engine().depth(symbol, DEPTH_LEVELS) ?? { bids: [], asks: [] };
    return { bids: new Map(d.bids), asks: new Map(d.asks) };
  }

  function depthDiff(symbol: string, ts: number): PublishedUpdate | undefined {
    const s = spec(symbol);
    if (s === undefined) return undefined;
    const before = books.get(symbol) ?? { bids: new Map(), asks: new Map() };
    const after = levelsOf(symbol);
    books.set(symbol, after);
    const diff = (a: Map<number, number>, b: Map<number, number>): Array<[string, string]> => {
      const out: Array<[string, string]> = [];
      for (const [p, l] of b) if (a.get(p) !== l) out.push([priceOf(s, p), sizeOf(s, l)]);
      for (const p of a.keys()) if (!b.has(p)) out.push([priceOf(s, p), '0']);
      return out;
    };
    const bids = diff(before.bids, after.bids);
    const asks = diff(before.asks, after.asks);
    if (bids.length === 0 && asks.length === 0) return undefined;
    return { channel: 'depth', subject: symbol, data: { bids, asks, ts } };
  }

  function bookSnapshot(symbol: string, ts: number) {
    const s = spec(symbol)!;
    const l = levelsOf(symbol);
    books.set(symbol, l);
    const side = (m: Map<number, number>) => [...m].map(([p, q]): [string, string] => [priceOf(s, p), sizeOf(s, q)]);
    return { bids: side(l.bids), asks: side(l.asks), ts };
  }

  function accountUpdates(account: string, symbols: Iterable<string>, out: PublishedUpdate[]): void {
    const e = engine();
    const a = e.getAccount(account);
    if (a === undefined) return;
    for (const symbol of symbols) {
      const p = positionOf(e, a, symbol);
      if (p !== undefined) out.push({ channel: 'positions', subject: account, data: p });
    }
    out.push({ channel: 'account', subject: account, data: accountOf(e, account) });
  }

  function fold(events: EngineEvent[]): void {
    const e = engine();
    const batch = projectEvents(events, open, e.feeAccountAddress);
    const out: PublishedUpdate[] = [];
    const bookSymbols = new Set<string>();
    const accounts = new Map<string, Set<string>>();
    const touch = (account: string, symbol?: string) => {
      let s = accounts.get(account);
      if (s === undefined) accounts.set(account, (s = new Set()));
      if (symbol !== undefined) s.add(symbol);
    };
    let ts = 0;
    for (const ev of events) {
      ts = ev.ts;
      switch (ev.type) {
        case 'orderResting':
        case 'orderDone':
          bookSymbols.add(ev.symbol);
          touch(ev.account);
          break;
        case 'trade':
          bookSymbols.add(ev.symbol);
          movedTickers.add(ev.symbol);
          touch(ev.makerAccount, ev.symbol);
          touch(ev.takerAccount, ev.symbol);
          break;
        case 'positionChanged':
        case 'leverageChanged':
        case 'fundingPayment':
          touch(ev.account, ev.symbol);
          break;
        case 'markPrice':
        case 'fundingApplied':
          out.push({ channel: 'mark', subject: ev.symbol, data: markBody(ev.symbol) });
          movedTickers.add(ev.symbol);
          movedMarks.add(ev.symbol);
          break;
        case 'instrumentConfigured':
        case 'split':
          // A split reprices the whole book at once.
          bookSymbols.add(ev.symbol);
          break;
        default:
          if ('account' in ev && typeof ev.account === 'string') touch(ev.account);
      }
    }
    for (const [id, o] of batch.orders) {
      const s = spec(o.symbol);
      if (s === undefined) continue;
      out.push({ channel: 'orders', subject: o.account, data: orderBody(s, o) });
      if (OPEN.has(o.status)) open.set(id, o);
      else open.delete(id);
    }
    for (const t of batch.trades) {
      const s = spec(t.symbol);
      if (s === undefined) continue;
      out.push({ channel: 'fills', subject: t.account, data: fillBody(s, t) });
      if (t.role === 'TAKER') {
        out.push({ channel: 'trades', subject: t.symbol, data: tradeBody(s, t) });
      }
    }
    for (const c of batch.candles.values()) {
      if (c.kind !== 'trade') continue;
      const s = spec(c.symbol);
      if (s === undefined) continue;
      const key = `${c.symbol}|${c.interval}`;
      const current = candles.get(key);
      if (current !== undefined && current.openTime > c.openTime) continue;
      const merged = current !== undefined && current.openTime === c.openTime ? mergeCandle(current, c) : c;
      candles.set(key, merged);
      out.push({ channel: `klines:${c.interval}`, subject: c.symbol, data: klineBody(s, merged) });
    }
    for (const symbol of bookSymbols) {
      const d = depthDiff(symbol, ts);
      if (d !== undefined) {
        out.push(d);
        movedTickers.add(symbol);
      }
    }
    for (const [account, symbols] of accounts) accountUpdates(account, symbols, out);
    publisher.publish(out);
  }

  function flush(): void {
    scheduled = false;
    const events = pending;
    pending = [];
    if (events.length === 0) return;
    try {
      fold(events);
    } catch (err) {
      opts.logger?.error({ err }, 'perp streams: a batch could not be published');
    }
    lastSeq = events[events.length - 1].seq;
  }

  async function refresh(): Promise<void> {
    if (refreshing) return;
    refreshing = true;
    try {
      const out: PublishedUpdate[] = [];
      // Prices turn stale with no event at all (the index feed or the mark task stopped): a symbol
      // whose staleness changed since its last ticker is published again, so a subscriber sees it.
      const t = now();
      for (const s of engine().instrumentList()) {
        const p = engine().prices(s.symbol);
        if (p === undefined) continue;
        const stale = priceFreshness(s, p, t).stale;
        if (staleShown.get(s.symbol) === stale) continue;
        staleShown.set(s.symbol, stale);
        movedTickers.add(s.symbol);
        if (!movedMarks.has(s.symbol)) out.push({ channel: 'mark', subject: s.symbol, data: markBody(s.symbol) });
      }
      const symbols = [...movedTickers];
      movedTickers.clear();
      for (const symbol of symbols) {
        const [t] = await opts.market.tickers(symbol);
        if (t !== undefined) out.push({ channel: 'tickers', subject: symbol, data: t });
      }
      const marks = [...movedMarks];
      movedMarks.clear();
      const e = engine();
      const holders = new Map<string, Set<string>>();
      for (const symbol of marks) {
        for (const h of e.positionsOn(symbol)) {
          let s = holders.get(h.account);
          if (s === undefined) holders.set(h.account, (s = new Set()));
          s.add(symbol);
        }
      }
      for (const [account, syms] of holders) accountUpdates(account, syms, out);
      publisher.publish(out);
    } catch (err) {
      opts.logger?.warn({ err }, 'perp streams: refresh failed');
    } finally {
      refreshing = false;
    }
  }

  async function seed(): Promise<PublishedUpdate[]> {
    const e = engine();
    const t = now();
    const out: PublishedUpdate[] = [];
    for (const s of e.instrumentList()) {
      out.push({ channel: 'depth', subject: s.symbol, data: bookSnapshot(s.symbol, t) });
      out.push({ channel: 'mark', subject: s.symbol, data: markBody(s.symbol) });
      staleShown.set(s.symbol, priceFreshness(s, e.prices(s.symbol)!, t).stale);
      const recent = await listMarketTrades(opts.db, { symbol: s.symbol, offset: 0, limit: RECENT_ITEMS });
      out.push({ channel: 'trades', subject: s.symbol, data: recent.rows.map((t) => tradeBody(s, t)) });
      for (const interval of INTERVALS) {
        const [c] = await listPerpCandles(opts.db, { symbol: s.symbol, kind: 'trade', interval, limit: 1 });
        if (c !== undefined) {
          candles.set(`${s.symbol}|${interval}`, c);
          out.push({ channel: `klines:${interval}`, subject: s.symbol, data: klineBody(s, c) });
        }
      }
    }
    for (const t of await opts.market.tickers()) out.push({ channel: 'tickers', subject: t.symbol, data: t });
    for (const account of e.accountAddresses()) {
      const orders = e.openOrders(account);
      const history = new Map((await getOrdersByIds(opts.db, orders.map((o) => o.orderId))).map((o) => [o.orderId, o]));
      const bodies = [];
      for (const o of orders) {
        const s = spec(o.symbol)!;
        const h = history.get(o.orderId);
        open.set(o.orderId, h && OPEN.has(h.status) ? h : recordOf(o, h));
        bodies.push(openOrderBody(s, o, h));
      }
      out.push({ channel: 'orders', subject: account, data: bodies });
      out.push({ channel: 'positions', subject: account, data: positionsOf(e, account) });
      out.push({ channel: 'account', subject: account, data: accountOf(e, account) });
      out.push({ channel: 'fills', subject: account, data: [] });
    }
    return out;
  }

  async function begin(): Promise<void> {
    // The seed is the engine at lastSeq and the subscription starts right after it: if a command
    // landed while the seed read the history, read it again.
    for (let attempt = 0; ; attempt++) {
      const from = engine().lastSeq + 1;
      open.clear();
      books.clear();
      candles.clear();
      const seeded = await seed();
      if (engine().lastSeq + 1 !== from) {
        if (attempt < 10) continue;
        throw new Error('perp streams: the engine kept moving while the streams were seeded');
      }
      await publisher.start(seeded);
      lastSeq = from - 1;
      pending = [];
      unsubscribe = opts.gateway.subscribe(
        from,
        (event) => {
          pending.push(event);
          if (!scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        },
        (err) => opts.logger?.error({ err }, 'perp streams: the event subscription failed'),
      );
      return;
    }
  }

  let resyncing: Promise<void> | undefined;

  return {
    async start() {
      await begin();
      timer = setInterval(() => void refresh(), refreshMs);
      timer.unref();
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      if (timer) clearInterval(timer);
      timer = undefined;
      flush();
    },
    resync() {
      resyncing ??= (async () => {
        unsubscribe?.();
        unsubscribe = undefined;
        try {
          await begin();
        } catch (err) {
          opts.logger?.error({ err }, 'perp streams: a new epoch could not be started');
        } finally {
          resyncing = undefined;
        }
      })();
      return resyncing;
    },
    publishedSeq: () => lastSeq,
  };
}

/** An open order the history has not projected yet, from the engine's view (its fills' notional unknown). */
function recordOf(o: ReturnType<PerpEngine['openOrders']>[number], h: PerpOrderRecord | undefined): PerpOrderRecord {
  return {
    orderId: o.orderId, account: o.account, symbol: o.symbol, side: o.side, type: o.type, timeInForce: o.timeInForce,
    priceTicks: o.priceTicks, sizeLots: o.sizeLots, requestedSizeLots: o.sizeLots, filledLots: o.filledLots,
    filledNotional: h?.filledNotional ?? 0n, fee: h?.fee ?? 0n, status: o.status, reason: null, reduceOnly: o.reduceOnly,
    clientOrderId: o.clientOrderId, createdAt: o.createdTs, updatedAt: o.createdTs, liquidation: false,
    triggerPriceTicks: o.trigger?.priceTicks ?? h?.triggerPriceTicks ?? null, triggerBy: o.trigger?.by ?? h?.triggerBy ?? null,
    closePosition: o.trigger?.closePosition ?? h?.closePosition ?? false, triggeredAt: h?.triggeredAt ?? null,
  };
}
