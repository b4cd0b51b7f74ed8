/**
 * The stock quotes from a live source (docs/market-data.md): the source's ticks pass the quote
 * guard (sources/quote-guard.ts); what the guard calls tradable is written to the quotes table,
 * and the ticks and trades build the 1m candle and every aggregate, as the simulator's do.
 *
 * - **Writes.** Every `flushMs` (default 1 000) one transaction carries the quotes that changed and
 *   the candles the points since the last flush touched: a symbol's stored quote changes at most
 *   once a flush however fast its source ticks. A failed write is logged once per outage and its
 *   rows stay pending for the next flush (the latest per symbol and candle).
 * - **Halts.** A symbol the guard does not call tradable (`stale`, `diverged`, `no-data`) gets no
 *   write: its stored quote keeps its last timestamp and ages, so every reader (`GET prices`'
 *   `stale`, the executor's quote max age, the perp index's staleness) sees it stop as it sees a
 *   stopped simulator. `statuses()` says why (the role puts it in readiness and the metrics).
 * - **Timestamps.** While the symbol's session is open a quote carries its own time, the earlier of
 *   the provider's and the receipt's (the guard ages it the same way). While it is closed the last
 *   tradable quote stands, re-written each flush with the flush's time, as the simulator quotes a
 *   closed market: still in price, fresh in time, so the perpetuals trade on through the night.
 * - **Sessions.** Outside the symbol's sessions (the calendar, and under `us-sessions` its
 *   `overnightTradable`) the guard raises no stale alarm: a closed market sends nothing.
 * - **Candles.** Points are every accepted tick's `last` (the last trade, else the mid) and every
 *   trade's price, at their own time, in the minutes the calendar has open (as the simulator's);
 *   volume is the trades' sizes (0 for a source without trades). A point older than the candle in
 *   progress (a trade that arrives after a quote of the next minute) adds its volume only.
 *   After a restart the candle of the current minute and the day's finished minutes are read back.
 */
import { BASE_MULTIPLIER, multiplierThrough, type PriceSplit } from './price-splits.ts';
import type { DbExecutor } from '../storage/database.ts';
import { latestCandle, listCandles } from '../storage/candle-store.ts';
import { listQuotes as readStoredQuotes } from '../storage/quote-store.ts';
import { createPendingMarketWrites, notifyQuoteListeners } from './pending-market-writes.ts';
import { serialRuns } from '../lib/async.ts';
import { bucketStart, createLiveCandleBook, foldTick, mergeCandles, type LiveCandleBook } from './candle-aggregator.ts';
import type { Candle, Quote } from './market-types.ts';
import type { MarketCalendar } from './market-calendar.ts';
import type { MarketDataLogger } from './history-seeder.ts';
import type { QuoteFeed, QuoteListener } from './market-data-service.ts';
import { readPricePins } from './price-pins.ts';
import { openFor, symbolFlagsOf, type SessionAware, type SymbolSpec } from './symbol-catalog.ts';
import { createQuoteGuard, type HaltReason, type QuoteGuard, type SymbolLiveness, type SymbolStatus } from './sources/quote-guard.ts';
import { emptyCounters, type QuoteSource, type SourceCounters, type SourceHealth, type SourceTick, type SourceTrade } from './sources/quote-source.ts';

export const DEFAULT_FLUSH_MS = 1_000;
const MINUTE = 60_000;

/** The calendar as the live service reads it: when the market trades, and under us-sessions which session and flags. */
export type LiveQuoteCalendar = Pick<MarketCalendar, 'isOpen'> & Partial<Pick<MarketCalendar, 'session'>> & SessionAware;

export interface LiveQuoteServiceOptions {
  db: DbExecutor;
  /**
   * The listed stocks' splits (price-splits.ts), read at most once a second: a quote stamped at or
   * after a split's moment is in post-split shares (the provider's prices are, from the ex-date on)
   * and carries the multiplier it is in. A failed read keeps the last list.
   */
  readSplits?: () => Promise<readonly PriceSplit[]>;
  /** The symbols the sources quote (the listed stocks). */
  symbols: readonly SymbolSpec[];
  /** Primary first: its quotes are the ones written and traded on; the others only check it. */
  sources: readonly QuoteSource[];
  /** `QUOTE_STALE_AFTER_MS`. */
  staleAfterMs: number;
  /** `QUOTE_MAX_DIVERGENCE_BPS`, default 50 (with one source nothing diverges). */
  maxDivergenceBps?: number;
  /** `QUOTE_RECOVER_AFTER_MS`, default 0. */
  recoverAfterMs?: number;
  /** `QUOTE_REQUIRE_ALL_SOURCES`, default true: a stale or silent check source halts the symbol too. */
  requireAllSources?: boolean;
  /** Default: always open. */
  calendar?: LiveQuoteCalendar;
  /** Default 1 000 ms. */
  flushMs?: number;
  /** Default Date.now (pass the same clock to the sources). */
  now?: () => number;
  /** Flush on a timer after start. Default true; false leaves it to `flush()` (tests). */
  autoFlush?: boolean;
  logger?: MarketDataLogger;
}

export interface LiveQuoteService extends QuoteFeed {
  /** The primary source's name (`alpaca-iex`). */
  readonly primary: string;
  /** Writes what is pending now (after start). Resolves when the write has finished or failed. */
  flush(): Promise<void>;
  /** The guard's verdict for every symbol now. */
  statuses(): SymbolStatus[];
  /** Every source's health, primary first. */
  sourceHealth(): SourceHealth[];
  /**
   * Per source, each provider message counted once by what became of it: dropped by the source
   * (duplicate, out of order, malformed, refused value, ignored), then by the guard, else accepted.
   */
  counters(): Record<string, SourceCounters>;
}

interface LiveSymbol {
  spec: SymbolSpec;
  /** Minutes that get a candle (the calendar's, as the simulator's). */
  candleOpen: (ms: number) => boolean;
  /** The primary's last accepted tick. */
  latest: SourceTick | undefined;
  /** `latest` has not been written yet. */
  dirty: boolean;
  /** The quote readers get: the last one written (or read back at start). */
  published: Quote | undefined;
  /** The 1m candle in progress. */
  candle: Candle | undefined;
  book: LiveCandleBook;
  status: SymbolLiveness;
}


/**
 * Whether ticks are expected for `spec` at `ms`: always for an always-open symbol; else when the
 * calendar is open, except in the overnight session of a symbol that does not trade overnight.
 */
export function quoteSessionOpen(calendar: LiveQuoteCalendar | undefined, spec: Pick<SymbolSpec, 'symbol' | 'alwaysOpen'>): (ms: number) => boolean {
  if (spec.alwaysOpen || calendar === undefined) return () => true;
  return (ms) => {
    if (!calendar.isOpen(ms)) return false;
    if (calendar.kind !== 'us-sessions' || calendar.session?.(ms) !== 'overnight') return true;
    return symbolFlagsOf(calendar, spec.symbol).overnightTradable;
  };
}

export function createLiveQuoteService(opts: LiveQuoteServiceOptions): LiveQuoteService {
  if (opts.sources.length === 0) throw new Error('live quotes: at least one source is required');
  const flushMs = opts.flushMs ?? DEFAULT_FLUSH_MS;
  if (!Number.isInteger(flushMs) || flushMs < 10) throw new Error('flushMs: must be an integer of at least 10');
  const now = opts.now ?? Date.now;
  const log = opts.logger;
  const sources = [...opts.sources];
  const primary = sources[0].name;
  const calendarOpen = opts.calendar ? (ms: number) => opts.calendar!.isOpen(ms) : () => true;
  const sessionOpen = new Map(opts.symbols.map((s) => [s.symbol, quoteSessionOpen(opts.calendar, s)]));
  const guard: QuoteGuard = createQuoteGuard({
    symbols: opts.symbols.map((s) => s.symbol),
    sources: sources.map((s) => s.name),
    staleAfterMs: opts.staleAfterMs,
    maxDivergenceBps: opts.maxDivergenceBps ?? 50,
    recoverAfterMs: opts.recoverAfterMs ?? 0,
    requireAllSources: opts.requireAllSources ?? true,
    sessionOpen: (symbol, ms) => sessionOpen.get(symbol)?.(ms) ?? true,
  });

  const states = new Map<string, LiveSymbol>();
  const listeners = new Set<QuoteListener>();
  const pending = createPendingMarketWrites(opts.db, log, 'live quotes', 'write failed; retrying next flush');
  const unsubscribe: Array<() => void> = [];
  let writtenAt: number | undefined;
  let running = false;
  let started: Promise<void> | undefined;
  // Flushes never overlap: one asked for while another runs follows it.
  const runs = serialRuns(() => runFlush(), (err: unknown) => log?.error({ err }, 'live quotes: flush failed'));

  const pushCandles = (candles: readonly Candle[]): void => {
    for (const c of candles) pending.candle(c);
  };

  /** One price point (and traded volume) of a symbol at `at` into its candles. */
  const addPoint = (st: LiveSymbol, at: number, price: string, volume: string): void => {
    const minute = Math.floor(at / MINUTE) * MINUTE;
    if (st.candle !== undefined && minute < st.candle.openTime) {
      // Late (the other stream already moved on): its shares still traded, in the candle in progress.
      if (volume === '0') return;
      const c = st.candle;
      st.candle = mergeCandles(c, { ...c, open: c.close, high: c.close, low: c.close, volume });
      pushCandles(st.book.updateMinute(st.candle));
      return;
    }
    if (st.candle !== undefined && minute > st.candle.openTime) {
      pushCandles(st.book.completeMinute(st.candle));
      st.candle = undefined;
    }
    if (!st.candleOpen(minute)) return;
    st.candle = foldTick(st.candle, { symbol: st.spec.symbol, time: at, price, volume }, '1m');
    pushCandles(st.book.updateMinute(st.candle));
  };

  const onTick = (tick: SourceTick): void => {
    const verdict = guard.ingest(tick);
    if (verdict !== 'accepted' || tick.source !== primary) return;
    const st = states.get(tick.symbol);
    if (st === undefined) return;
    st.latest = tick;
    st.dirty = true;
    addPoint(st, Math.min(tick.sourceTime, tick.receivedAt), tick.last, '0');
  };

  const onTrade = (trade: SourceTrade): void => {
    const st = states.get(trade.symbol);
    if (st === undefined || trade.source !== primary) return;
    addPoint(st, Math.min(trade.sourceTime, trade.receivedAt), trade.price, trade.size);
  };

  let splits: readonly PriceSplit[] = [];
  let splitsReadAt = Number.NEGATIVE_INFINITY;
  const pollSplits = async (t: number): Promise<void> => {
    if (!opts.readSplits || t - splitsReadAt < 1_000) return;
    splitsReadAt = t;
    try {
      splits = await opts.readSplits();
    } catch (err) {
      log?.warn({ err }, 'live quotes: reading the splits failed; keeping the last ones known');
    }
  };

  const quoteOf = (tick: SourceTick, timestamp: number): Quote => {
    const q: Quote = { symbol: tick.symbol, bid: tick.bid, ask: tick.ask, last: tick.last, timestamp };
    const multiplier = multiplierThrough(splits, tick.symbol, timestamp);
    if (multiplier !== BASE_MULTIPLIER) q.multiplier = multiplier.toString();
    return q;
  };

  /** Logs each change of a symbol's verdict: a halt at warn with its reasons, the end of one at info. */
  const noteStatus = (st: LiveSymbol, s: SymbolStatus): void => {
    if (s.status === st.status) return;
    const was = st.status;
    st.status = s.status;
    if (s.tradable) log?.info({ symbol: s.symbol, was }, 'live quotes: symbol tradable again');
    else log?.warn({ symbol: s.symbol, status: s.status, reasons: s.reasons.map((r) => `${r.source}: ${r.detail}`) }, 'live quotes: symbol halted');
  };

  const runFlush = async (): Promise<void> => {
    const t = now();
    await pollSplits(t);
    const fresh: Quote[] = [];
    for (const s of guard.statuses(t)) {
      const st = states.get(s.symbol)!;
      noteStatus(st, s);
      if (!s.tradable || st.latest === undefined) continue;
      let q: Quote;
      if (sessionOpen.get(s.symbol)!(t)) {
        if (!st.dirty) continue;
        q = quoteOf(st.latest, Math.min(st.latest.sourceTime, st.latest.receivedAt));
      } else {
        q = quoteOf(st.latest, t);
      }
      st.dirty = false;
      st.published = q;
      pending.quote(q);
      fresh.push(q);
    }
    if (await pending.write()) writtenAt = t;
    notifyQuoteListeners(listeners, fresh, 'live quotes', log);
  };

  const flush = (): Promise<void> => {
    if (states.size === 0) return Promise.reject(new Error('live quotes: flush before start'));
    return runs.run();
  };

  /** The day's finished minutes and the minute in progress, as stored: the candles go on from them. */
  const restore = async (spec: SymbolSpec, t: number, stored: ReadonlyMap<string, Quote>): Promise<LiveSymbol> => {
    const minute = Math.floor(t / MINUTE) * MINUTE;
    const day = bucketStart(minute, '1d');
    const completed = minute > day ? await listCandles(opts.db, { symbol: spec.symbol, interval: '1m', startTime: day, endTime: minute - 1, limit: 1440 }) : [];
    const latest = await latestCandle(opts.db, spec.symbol, '1m');
    return {
      spec,
      candleOpen: openFor(spec, calendarOpen),
      latest: undefined,
      dirty: false,
      published: stored.get(spec.symbol),
      candle: latest?.openTime === minute ? latest : undefined,
      book: createLiveCandleBook(spec.symbol, completed),
      status: 'no-data',
    };
  };

  const start = async (): Promise<void> => {
    const t = now();
    const stored = new Map((await readStoredQuotes(opts.db)).map((q) => [q.symbol, q]));
    states.clear();
    pending.clear();
    for (const spec of opts.symbols) states.set(spec.symbol, await restore(spec, t, stored));
    const pins = await readPricePins(opts.db, opts.symbols.map((s) => s.symbol));
    if (pins.size > 0) log?.warn({ symbols: [...pins.keys()] }, 'live quotes: price pins have no effect on symbols quoted by a live source');
    for (const source of sources) {
      unsubscribe.push(source.onTick(onTick));
      if (source.onTrade) unsubscribe.push(source.onTrade(onTrade));
    }
    running = true;
    // Each resolves once its first attempt has settled (subscribed, refused or retrying).
    await Promise.all(sources.map((s) => s.start()));
    await flush();
    if (running && (opts.autoFlush ?? true)) runs.every(flushMs);
    log?.info({ sources: sources.map((s) => s.name), symbols: opts.symbols.map((s) => s.symbol), staleAfterMs: opts.staleAfterMs }, 'live quotes: running');
  };

  const stop = async (): Promise<void> => {
    running = false;
    runs.cancel();
    // The sources first: a start still waiting on its first connection settles at once.
    await Promise.all(sources.map((s) => s.stop()));
    await started?.catch(() => undefined);
    running = false;
    runs.cancel();
    for (const off of unsubscribe.splice(0)) off();
    // What the last second brought still reaches storage.
    if (states.size > 0 && started !== undefined) await flush().catch((err: unknown) => log?.error({ err }, 'live quotes: last flush failed'));
    await runs.settled();
    started = undefined;
  };

  const counters = (): Record<string, SourceCounters> => {
    const byGuard = guard.counters();
    const out: Record<string, SourceCounters> = {};
    for (const source of sources) {
      const s = source.health().counters;
      const g = byGuard[source.name] ?? emptyCounters();
      const dropped = g.duplicate + g.outOfOrder + g.malformed + g.rejectedValue + g.ignored;
      out[source.name] = {
        accepted: Math.max(0, s.accepted - dropped),
        duplicate: s.duplicate + g.duplicate,
        outOfOrder: s.outOfOrder + g.outOfOrder,
        malformed: s.malformed + g.malformed,
        rejectedValue: s.rejectedValue + g.rejectedValue,
        ignored: s.ignored + g.ignored,
      };
    }
    return out;
  };

  return {
    primary,
    start() {
      started ??= start().catch(async (err) => {
        started = undefined;
        running = false;
        for (const off of unsubscribe.splice(0)) off();
        await Promise.all(sources.map((s) => s.stop().catch(() => undefined)));
        throw err;
      });
      return started;
    },
    stop,
    flush,
    getQuote: (symbol) => states.get(symbol)?.published,
    listQuotes: () => opts.symbols.map((s) => states.get(s.symbol)?.published).filter((q): q is Quote => q !== undefined),
    onQuote(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    lastWrittenAt: () => writtenAt,
    statuses: () => guard.statuses(now()),
    sourceHealth: () => sources.map((s) => s.health()),
    counters,
  };
}

/**
 * What readiness shows of a live service (the marketdata role's `detail`): the primary source's
 * state and last error, how many symbols are tradable, and each halted one with the guard's reasons.
 * With check sources, their states (`quoteCheckSources`: `pyth-hermes=live`) and last errors too,
 * and each reason names the source it concerns when it is not the primary.
 * Names, states and counts only: never a credential.
 */
export function liveQuoteDetail(live: Pick<LiveQuoteService, 'sourceHealth' | 'statuses'>): Record<string, string | number | null> {
  const [h, ...checks] = live.sourceHealth();
  const statuses = live.statuses();
  const halted = statuses.filter((s) => !s.tradable);
  const reason = (r: HaltReason): string => (checks.length === 0 || r.source === h.name ? r.detail : `${r.source}: ${r.detail}`);
  return {
    quoteSource: h.name,
    quoteSourceState: h.state,
    quoteSourceError: h.lastError?.message ?? null,
    ...(checks.length === 0
      ? {}
      : {
          quoteCheckSources: checks.map((c) => `${c.name}=${c.state}`).join(','),
          quoteCheckSourceErrors: checks.some((c) => c.lastError !== undefined)
            ? checks.filter((c) => c.lastError !== undefined).map((c) => `${c.name}: ${c.lastError!.message}`).join(' | ')
            : null,
        }),
    quotesLive: statuses.length - halted.length,
    quotesHalted: halted.map((s) => `${s.symbol}=${s.status}`).join(','),
    haltReasons: halted.map((s) => `${s.symbol}: ${s.reasons.map(reason).join('; ')}`).join(' | '),
  };
}

/** The figures the quote metrics read (metrics-registry.ts `trackQuoteFeed`), from a live service. */
export function liveQuoteMetrics(live: Pick<LiveQuoteService, 'sourceHealth' | 'statuses' | 'counters'>): {
  sources(): Array<{ name: string; state: string; counters: SourceCounters }>;
  symbols(): Array<{ symbol: string; status: string }>;
} {
  return {
    sources() {
      const counters = live.counters();
      return live.sourceHealth().map((h) => ({ name: h.name, state: h.state, counters: counters[h.name] ?? emptyCounters() }));
    },
    symbols: () => live.statuses().map((s) => ({ symbol: s.symbol, status: s.status })),
  };
}

/**
 * Several feeds serving disjoint symbols as one (the live stocks beside the simulated crypto
 * indices): a symbol's quote comes from the feed that quotes it, progress is the slowest feed's.
 */
export function combineQuoteFeeds(parts: ReadonlyArray<{ feed: QuoteFeed; symbols: readonly string[] }>): QuoteFeed {
  const owner = new Map<string, QuoteFeed>();
  for (const p of parts) {
    for (const s of p.symbols) {
      if (owner.has(s)) throw new Error(`combineQuoteFeeds: ${s} is quoted by two feeds`);
      owner.set(s, p.feed);
    }
  }
  const feeds = parts.map((p) => p.feed);
  return {
    async start() {
      const done: QuoteFeed[] = [];
      try {
        for (const f of feeds) {
          await f.start();
          done.push(f);
        }
      } catch (err) {
        for (const f of done.reverse()) await f.stop().catch(() => undefined);
        throw err;
      }
    },
    async stop() {
      for (const f of [...feeds].reverse()) await f.stop();
    },
    getQuote: (symbol) => owner.get(symbol)?.getQuote(symbol),
    listQuotes: () => feeds.flatMap((f) => f.listQuotes()),
    onQuote(listener) {
      const offs = feeds.map((f) => f.onQuote(listener));
      return () => offs.forEach((off) => off());
    },
    lastWrittenAt() {
      let min: number | undefined;
      for (const f of feeds) {
        const at = f.lastWrittenAt();
        if (at === undefined) return undefined;
        min = min === undefined ? at : Math.min(min, at);
      }
      return min;
    },
  };
}
