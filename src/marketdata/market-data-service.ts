/**
 * The live simulator. `start` seeds or backfills history, then ticks every `tickMs`: each tick
 * moves every symbol along its seeded path, updates the in-memory quotes, writes the quotes and
 * the touched candle of every interval in one transaction, and tells the listeners.
 *
 * A tick never throws: a storage failure is logged and the unwritten candles and quotes stay
 * pending, merged into the next tick's write, so a minute that finished while the database was
 * away still reaches it in its final form.
 *
 * Each tick first reads the price pins of its symbols (price-pins.ts; written by the CLI, another
 * process): a pinned symbol is quoted at its pin from that tick on, and its path walks on from
 * the pin once released.
 */
import type { DbExecutor } from '../storage/database.ts';
import { createPendingMarketWrites, notifyQuoteListeners } from './pending-market-writes.ts';
import { serialRuns } from '../lib/async.ts';
import type { Candle, Quote, QuoteReader } from './market-types.ts';
import { openFor, type SymbolSpec } from './symbol-catalog.ts';
import { liveCandleBookOn, type LiveCandleBook } from './candle-aggregator.ts';
import { createGbmSource, type MarketDataSource, type PathEvent } from './gbm-source.ts';
import type { MarketCalendar } from './market-calendar.ts';
import { DEFAULT_HISTORY_DAYS, DEFAULT_MARKETDATA_SEED, historyAnchor, seedHistory, type MarketDataLogger } from './history-seeder.ts';
import { readPricePins, type PricePin } from './price-pins.ts';
import { BASE_MULTIPLIER, multiplierAfter, splitPrice, type PriceSplit } from './price-splits.ts';
import { venueNow } from '../lib/venue-clock.ts';
import { createCoarseWalk, HOUR, isCoarseHour, openMinutesOf, type CoarseWindow } from './coarse-walk.ts';
import { venueSeed } from '../lib/seeded-random.ts';

export type QuoteListener = (quote: Quote) => void;

export interface MarketDataServiceOptions {
  db: DbExecutor;
  symbols: readonly SymbolSpec[];
  /** Default: the GBM source with `seed`. */
  source?: MarketDataSource;
  /** Default 42. */
  seed?: string | number;
  /**
   * Where the default source's walk counts its minutes from (gbm-source.ts `origin`): `epoch`, or
   * `history`, the first minute of the stored history, so the same seed gives the same prices
   * whatever day the venue starts (docs/sandbox.md "Determinism"). Default `history` in a seeded
   * sandbox (src/lib/seeded-random.ts `venueSeed`), `epoch` otherwise.
   */
  walkOrigin?: 'epoch' | 'history';
  /** Default 1000. */
  tickMs?: number;
  /** Closed minutes get no candle and the price stands still. Default: always open. */
  calendar?: Pick<MarketCalendar, 'isOpen'>;
  logger?: MarketDataLogger;
  /** History length on a fresh database. Default 30. */
  historyDays?: number;
  /** Clock (ms); tests pass a fake one. Default the venue clock (src/lib/venue-clock.ts). */
  now?: () => number;
  /** Schedule ticks on a timer after start. Default true; false leaves ticking to `tick()` (tests). */
  autoTick?: boolean;
  /**
   * The splits of the listed stocks (price-splits.ts), read at start and before every tick: at a
   * split's minute the symbol's path goes on from its price divided by the ratio, and its quotes
   * carry the multiplier they are stated in. A failed read keeps the last list.
   */
  readSplits?: () => Promise<readonly PriceSplit[]>;
}

/**
 * What the marketdata role runs and the roles of its process read: the simulator, the live quote
 * service (live-quote-service.ts), or both side by side (`combineQuoteFeeds`).
 */
export interface QuoteFeed extends QuoteReader {
  start(): Promise<void>;
  stop(): Promise<void>;
  getQuote(symbol: string): Quote | undefined;
  listQuotes(): Quote[];
  /** Called with every new quote; returns the unsubscribe function. */
  onQuote(listener: QuoteListener): () => void;
  /** When (wall clock) the last tick's quotes reached storage (what other processes read); undefined before the first. */
  lastWrittenAt(): number | undefined;
}

/** What a sandbox's clock advance asks of a tick at one of its steps (docs/sandbox.md "Clock"). */
export interface TickOptions {
  /** The jump under way: its whole UTC days inside are walked by the hour (coarse-walk.ts). */
  coarse?: CoarseWindow;
  /** `false`: the quotes and candles stay pending, merged into a later tick's write. Default true. */
  write?: boolean;
}

export interface MarketDataService extends QuoteFeed {
  /** Runs one tick at `now()` (after start). Resolves when its write has finished or failed. */
  tick(o?: TickOptions): Promise<void>;
}

const MINUTE = 60_000;

interface SymbolState {
  spec: SymbolSpec;
  /** Its minutes that trade (the calendar's, or all of them for an always-open symbol). */
  isOpen: (ms: number) => boolean;
  /** The minute in progress. */
  minute: number;
  /** Close of the minute before `minute`. */
  prevClose: string;
  book: LiveCandleBook;
  /** The pin the price stands at, or undefined while it walks. */
  pin: string | undefined;
  /** Pin changes inside `minute`, ascending: the minute's path follows them. */
  events: PathEvent[];
  /** Time of the last tick (pin changes never reach back before it). */
  lastTime: number;
  /** The share multiplier the prices are in, and the splits already in them. */
  multiplier: bigint;
  splitsApplied: Set<string>;
}


export function createMarketDataService(opts: MarketDataServiceOptions): MarketDataService {
  const tickMs = opts.tickMs ?? 1000;
  if (!Number.isInteger(tickMs) || tickMs < 10) throw new Error('tickMs: must be an integer of at least 10');
  const seed = opts.seed ?? DEFAULT_MARKETDATA_SEED;
  // Made again at start when the walk counts from the history's first minute, known only then.
  let source = opts.source ?? createGbmSource({ seed });
  const now = opts.now ?? venueNow;
  const calendarOpen = opts.calendar ? (ms: number) => opts.calendar!.isOpen(ms) : () => true;
  const log = opts.logger;
  const symbols = [...opts.symbols];

  const quotes = new Map<string, Quote>();
  const listeners = new Set<QuoteListener>();
  const states: SymbolState[] = [];
  const pending = createPendingMarketWrites(opts.db, log, 'marketdata', 'tick write failed; retrying next tick');
  let writtenAt: number | undefined;
  let pins = new Map<string, PricePin>();
  let pinsFailing = false;
  let splits: readonly PriceSplit[] = [];
  let splitsFailing = false;
  const symbolNames = symbols.map((s) => s.symbol);

  let started: Promise<void> | undefined;
  let running = false;
  /** The options of the tick under way (a sandbox's step), for `advancePath`. */
  let ticking: TickOptions = {};
  // Ticks never overlap: a tick asked for while one runs follows it.
  const runs = serialRuns(() => runTick({}), (err: unknown) => log?.error({ err }, 'marketdata: tick failed'));
  // Only the built-in walk is walked by the hour across a jump: another source's minutes are its own.
  const coarseWalk = opts.source === undefined ? createCoarseWalk(() => source) : undefined;
  /** Whether this walk may take a jump's inside days by the hour (set at start). */
  let hourly = false;

  /**
   * Whether the hour at `st.minute` may be walked whole (coarse-walk.ts): a whole hour before the
   * tick's minute, in a UTC day strictly inside the jump under way, with no split of the symbol
   * inside it (one at its start is applied already).
   */
  const coarseHour = (st: SymbolState, minute: number): boolean =>
    st.minute + HOUR <= minute && inCoarseHour(st, st.minute);
  /** Whether the hour opening at `hour` is walked whole if a later tick of the jump passes it. */
  const inCoarseHour = (st: SymbolState, hour: number): boolean =>
    hourly && ticking.coarse !== undefined && isCoarseHour(ticking.coarse, hour) &&
    !splits.some((x) => x.symbol === st.spec.symbol && x.at > hour && x.at < hour + HOUR);

  /**
   * Splits of the symbol due by the start of `st.minute` and not yet in its prices: the path goes on
   * from the price divided by the ratio. One read late (added after its minute began) applies at
   * the next minute's start, never inside a minute already under way.
   */
  const applySplits = (st: SymbolState): void => {
    for (const split of splits) {
      if (split.symbol !== st.spec.symbol || split.at > st.minute || st.splitsApplied.has(split.id)) continue;
      st.splitsApplied.add(split.id);
      // A pin is the operator's price and stands as set (docs/corporate-actions.md, "Splits").
      st.prevClose = splitPrice(st.prevClose, split);
      st.multiplier = multiplierAfter(st.multiplier, split);
      log?.info({ symbol: st.spec.symbol, split: split.id, ratio: `${split.numerator}:${split.denominator}`, price: st.prevClose }, 'marketdata: split applied to the price path');
    }
  };

  const stamped = (st: SymbolState, q: Quote): Quote => (st.multiplier === BASE_MULTIPLIER ? q : { ...q, multiplier: st.multiplier.toString() });

  const advance = (st: SymbolState, time: number, pin: PricePin | undefined): Quote => stamped(st, advancePath(st, time, pin));

  const advancePath = (st: SymbolState, time: number, pin: PricePin | undefined): Quote => {
    const isOpen = st.isOpen;
    const minute = Math.floor(time / MINUTE) * MINUTE;
    // Finish every minute the clock has passed (normally one; more after a stalled event loop),
    // under the pin as it stood at the last tick.
    while (st.minute < minute) {
      if (coarseHour(st, minute)) {
        const open = openMinutesOf(isOpen, st.minute);
        if (open > 0) {
          const hour = coarseWalk!.hourCandle(st.spec, st.minute, st.prevClose, open, st.events);
          for (const c of st.book.completeCoarse(hour)) pending.candle(c);
          st.prevClose = hour.close;
        }
        st.minute += HOUR;
        applySplits(st);
        st.events = st.pin === undefined ? [] : [{ time: st.minute, price: st.pin }];
        continue;
      }
      if (isOpen(st.minute)) {
        const full = source.minuteCandle(st.spec, st.minute, st.prevClose, st.events);
        for (const c of st.book.completeMinute(full)) pending.candle(c);
        st.prevClose = full.close;
      }
      st.minute += MINUTE;
      applySplits(st);
      st.events = st.pin === undefined ? [] : [{ time: st.minute, price: st.pin }];
    }
    const price = pin?.price;
    if (price !== st.pin) {
      // A pin takes effect from when it was set (so a restart's backfill, which knows only that
      // time, regenerates the same candles: history-seeder.ts), but not before the last tick; at
      // most the last tick's own path point turns pinned after the fact. A release has no stored
      // time and takes effect now.
      const at = price === undefined ? time : Math.min(time, Math.max(pin!.setAt, st.lastTime + 1));
      // Released while no candle moves (closed): the walk resumes from the pin when it opens.
      if (price === undefined && !isOpen(minute) && st.pin !== undefined) st.prevClose = st.pin;
      st.events.push({ time: at, price: price ?? null });
      st.pin = price;
    }
    st.lastTime = Math.max(st.lastTime, time);
    if (st.minute === minute && isOpen(minute)) {
      const t = source.tick(st.spec, time, st.prevClose, st.events);
      // The first minute of an hour the jump's next step walks whole keeps no partial candle: that
      // step writes the hour's candle instead, and never finishes the minute.
      if (minute % HOUR !== 0 || !inCoarseHour(st, minute)) for (const c of st.book.updateMinute(t.candle)) pending.candle(c);
      return t.quote;
    }
    // Closed (or a clock that stepped back): the price stands at the pin or the last close.
    return source.quote(st.spec, st.pin ?? st.prevClose, time);
  };

  /** The pins at this tick; on a failed read the last ones known, so a storage outage moves no price. */
  const pollPins = async (): Promise<Map<string, PricePin>> => {
    try {
      pins = await readPricePins(opts.db, symbolNames);
      if (pinsFailing) log?.info({}, 'marketdata: price pins readable again');
      pinsFailing = false;
    } catch (err) {
      if (!pinsFailing) log?.error({ err }, 'marketdata: reading price pins failed; keeping the last ones known');
      pinsFailing = true;
    }
    return pins;
  };

  /** The splits at this tick; on a failed read the last ones known. */
  const pollSplits = async (): Promise<void> => {
    if (!opts.readSplits) return;
    try {
      splits = await opts.readSplits();
      if (splitsFailing) log?.info({}, 'marketdata: splits readable again');
      splitsFailing = false;
    } catch (err) {
      if (!splitsFailing) log?.error({ err }, 'marketdata: reading the splits failed; keeping the last ones known');
      splitsFailing = true;
    }
  };

  const runTick = async (o: TickOptions): Promise<void> => {
    ticking = o;
    const tickPins = await pollPins();
    await pollSplits();
    const time = now();
    const fresh: Quote[] = [];
    for (const st of states) {
      const q = advance(st, time, tickPins.get(st.spec.symbol));
      quotes.set(q.symbol, q);
      pending.quote(q);
      fresh.push(q);
    }
    // Progress is liveness, on the wall clock: a sandbox's advance moves the quotes' time, and a
    // write stamped a day ahead must not keep the role fresh for a day (docs/sandbox.md "Clock").
    if (ticking.write !== false && (await pending.write())) writtenAt = Date.now();
    notifyQuoteListeners(listeners, fresh, 'marketdata', log);
  };

  const tick = (o: TickOptions = {}): Promise<void> => {
    if (states.length === 0 && symbols.length > 0) return Promise.reject(new Error('marketdata: tick before start'));
    return runs.run(() => runTick(o));
  };

  const start = async (): Promise<void> => {
    const startTime = now();
    const historyDays = opts.historyDays ?? DEFAULT_HISTORY_DAYS;
    const walkOrigin = opts.walkOrigin ?? (venueSeed() === undefined ? 'epoch' : 'history');
    if (opts.source === undefined && walkOrigin === 'history') {
      source = createGbmSource({ seed, origin: await historyAnchor(opts.db, startTime, historyDays) });
    }
    // A walk counted from the history (a seeded venue) keeps every minute across a jump: which of
    // its hours are walked whole goes by the UTC day, so by the hour of day the venue started, and
    // its prices must not (docs/sandbox.md "Determinism").
    hourly = coarseWalk !== undefined && walkOrigin === 'epoch';
    // The backfill honours pins in force; the first tick reads them again.
    const startPins = await readPricePins(opts.db, symbolNames);
    pins = startPins;
    if (opts.readSplits) splits = await opts.readSplits();
    const history = await seedHistory({
      db: opts.db,
      pins: startPins,
      splits,
      symbols,
      source,
      seed,
      days: historyDays,
      now: startTime,
      calendar: opts.calendar,
      logger: log,
    });
    states.length = 0;
    // Left over from a failed write before a stop: the backfill above has regenerated those
    // minutes from storage, and a stale partial candle must not overwrite its finished form.
    pending.clear();
    for (const spec of symbols) {
      const h = history.symbols.get(spec.symbol)!;
      states.push({
        spec,
        isOpen: openFor(spec, calendarOpen),
        minute: h.minute,
        prevClose: h.prevClose,
        book: liveCandleBookOn(spec.symbol, h.bases),
        pin: h.pin,
        events: h.events,
        lastTime: startTime,
        multiplier: h.multiplier,
        splitsApplied: new Set(h.splitsApplied),
      });
    }
    running = true;
    await tick();
    // On whole multiples of tickMs: a slow tick delays the next one instead of shifting them all.
    if (running && (opts.autoTick ?? true)) runs.every(tickMs);
    log?.info({ symbols: symbols.map((s) => s.symbol), tickMs }, 'marketdata: simulator running');
  };

  return {
    start() {
      started ??= start().catch((err) => {
        started = undefined;
        throw err;
      });
      return started;
    },
    async stop() {
      running = false;
      runs.cancel();
      await started?.catch(() => undefined);
      running = false;
      runs.cancel();
      await runs.settled();
      started = undefined;
    },
    getQuote: (symbol) => quotes.get(symbol),
    listQuotes: () => symbols.map((s) => quotes.get(s.symbol)).filter((q): q is Quote => q !== undefined),
    onQuote(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    tick,
    lastWrittenAt: () => writtenAt,
  };
}
