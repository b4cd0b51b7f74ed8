/**
 * Whether a symbol's live prices can be traded on: a pure state machine fed with the ticks of one
 * or more sources and asked with a clock. No timers and no I/O; the caller passes `now`.
 *
 * Per symbol:
 *  - `no-data`   a required source has not given an accepted tick yet;
 *  - `stale`     a required source's last accepted tick is older than `staleAfterMs`, its age
 *                taken from the earlier of its provider time and its receipt time (so a feed
 *                that lags, or replays old quotes on a fresh connection, ages too);
 *  - `diverged`  the primary's mid and another fresh source's mid differ by more than
 *                `maxDivergenceBps` of the primary's mid (exact bigint cross-multiplication);
 *  - `live`      none of those, and `recoverAfterMs` has passed since the last of them ended.
 * Anything but `live` halts the symbol: quotes marked stale, market orders refused, liquidation
 * paused (the wiring's part). `reasons` lists every condition in force, not just the first.
 *
 * The guard validates what it is handed as well (any source can feed it, the simulator too) and
 * counts per source: accepted, duplicate (same provider time and prices as the last accepted),
 * out-of-order (older provider time), malformed (not a decimal price, bad times), rejected-value
 * (zero, crossed).
 */
import { ValidationError } from '../../errors/app-error.ts';
import { emptyCounters, formatPrice, parsePrice, type SourceCounters, type SourceTick } from './quote-source.ts';

export type SymbolLiveness = 'live' | 'stale' | 'diverged' | 'no-data';

export interface HaltReason {
  code: 'no-data' | 'stale' | 'diverged' | 'recovering';
  /** The source concerned (for `diverged`, the one that disagrees with the primary). */
  source: string;
  /** `no accepted tick for 4200 ms (limit 3000)`, `mid 229.81 vs 231.00: 51.78 bps (limit 25)`. */
  detail: string;
}

export interface GuardQuote {
  source: string;
  bid: string;
  ask: string;
  last: string;
  sourceTime: number;
  receivedAt: number;
}

export interface SymbolStatus {
  symbol: string;
  status: SymbolLiveness;
  /** `status === 'live'`. */
  tradable: boolean;
  reasons: HaltReason[];
  /** Receipt time of the primary's last accepted tick. */
  lastTickAt: number | undefined;
  /** The primary's last accepted tick (shown even while halted, for the record). */
  quote: GuardQuote | undefined;
  /** Largest mid difference between the primary and a fresh other source, bps, 2 places rounded down. */
  divergenceBps: string | undefined;
}

export type TickVerdict = 'accepted' | 'duplicate' | 'out-of-order' | 'malformed' | 'rejected-value' | 'ignored';

export interface QuoteGuardOptions {
  symbols: readonly string[];
  /** Source names, primary first. The primary's quote is the one traded on; the others check it. */
  sources: readonly string[];
  staleAfterMs: number;
  /** Non-negative integer. */
  maxDivergenceBps: number;
  /** A halt ends only after its conditions have been clear this long (no flapping). Default 0. */
  recoverAfterMs?: number;
  /**
   * Every source must be fresh (default true). False: a check source that is stale or has no
   * data is skipped (no divergence check) instead of halting; the primary always must be fresh.
   */
  requireAllSources?: boolean;
  /**
   * Whether ticks are expected for `symbol` at `now` (the market calendar). When false, age does
   * not make a symbol stale: a closed market sends nothing. Default: always.
   */
  sessionOpen?: (symbol: string, now: number) => boolean;
}

export interface QuoteGuard {
  /** Takes a tick; the verdict says what became of it (and which counter it went to). */
  ingest(tick: SourceTick): TickVerdict;
  status(symbol: string, now: number): SymbolStatus;
  statuses(now: number): SymbolStatus[];
  /** Per source, monotonic, for metrics. */
  counters(): Record<string, SourceCounters>;
}

interface Held {
  bid: bigint;
  ask: bigint;
  tick: SourceTick;
}

interface SymbolMemory {
  /** Latest accepted tick per source. */
  held: Map<string, Held>;
  /** When the last halt's conditions cleared (a tick ended it), and what it was. */
  clearedAt: number | undefined;
  clearedFrom: SymbolLiveness;
}

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

export function createQuoteGuard(opts: QuoteGuardOptions): QuoteGuard {
  const { staleAfterMs, maxDivergenceBps } = opts;
  if (!Number.isSafeInteger(staleAfterMs) || staleAfterMs < 1) throw new ValidationError('QUOTE_STALE_AFTER_MS', 'must be a positive integer');
  if (!Number.isSafeInteger(maxDivergenceBps) || maxDivergenceBps < 0) {
    throw new ValidationError('QUOTE_MAX_DIVERGENCE_BPS', 'must be a non-negative integer');
  }
  const recoverAfterMs = opts.recoverAfterMs ?? 0;
  if (!Number.isSafeInteger(recoverAfterMs) || recoverAfterMs < 0) throw new ValidationError('recoverAfterMs', 'must be a non-negative integer');
  if (opts.sources.length === 0) throw new ValidationError('sources', 'at least one source is required');
  if (new Set(opts.sources).size !== opts.sources.length) throw new ValidationError('sources', 'names must be distinct');
  const sources = [...opts.sources];
  const primary = sources[0];
  const requireAll = opts.requireAllSources ?? true;
  const sessionOpen = opts.sessionOpen ?? (() => true);
  const maxBps = BigInt(maxDivergenceBps);

  const memory = new Map<string, SymbolMemory>();
  for (const symbol of opts.symbols) memory.set(symbol, { held: new Map(), clearedAt: undefined, clearedFrom: 'no-data' });
  const counts = new Map<string, SourceCounters>(sources.map((s) => [s, emptyCounters()]));
  const countersOf = (source: string): SourceCounters => {
    let c = counts.get(source);
    if (c === undefined) counts.set(source, (c = emptyCounters()));
    return c;
  };

  /** Age of a held tick at `now`: from the earlier of provider and receipt time. */
  const ageOf = (h: Held, now: number): number => now - Math.min(h.tick.sourceTime, h.tick.receivedAt);

  /** The conditions in force at `now` (no recovery delay), and the largest divergence seen. */
  const conditions = (symbol: string, mem: SymbolMemory, now: number): { reasons: HaltReason[]; divergenceBps: string | undefined } => {
    const reasons: HaltReason[] = [];
    const open = sessionOpen(symbol, now);
    const fresh = new Map<string, Held>();
    for (const source of sources) {
      const h = mem.held.get(source);
      const required = requireAll || source === primary;
      if (h === undefined) {
        if (required) reasons.push({ code: 'no-data', source, detail: 'no accepted tick yet' });
        continue;
      }
      const age = ageOf(h, now);
      if (open && age > staleAfterMs) {
        if (required) reasons.push({ code: 'stale', source, detail: `no accepted tick for ${age} ms (limit ${staleAfterMs})` });
        continue;
      }
      fresh.set(source, h);
    }
    let worst: bigint | undefined;
    const p = fresh.get(primary);
    if (p !== undefined) {
      // Sums stand for mids (twice each): |mid_s − mid_p| / mid_p > max/10 000 without a division.
      const sp = p.bid + p.ask;
      for (const [source, h] of fresh) {
        if (source === primary) continue;
        const ss = h.bid + h.ask;
        const diff = ss > sp ? ss - sp : sp - ss;
        const bpsHundredths = (diff * 1_000_000n) / sp;
        if (worst === undefined || bpsHundredths > worst) worst = bpsHundredths;
        if (diff * 10_000n > maxBps * sp) {
          reasons.push({
            code: 'diverged',
            source,
            detail: `mid ${formatPrice((sp + 1n) / 2n)} vs ${formatPrice((ss + 1n) / 2n)}: ${formatBps(bpsHundredths)} bps (limit ${maxDivergenceBps})`,
          });
        }
      }
    }
    return { reasons, divergenceBps: worst === undefined ? undefined : formatBps(worst) };
  };

  const livenessOf = (reasons: readonly HaltReason[]): SymbolLiveness => {
    if (reasons.length === 0) return 'live';
    if (reasons.some((r) => r.code === 'no-data')) return 'no-data';
    if (reasons.some((r) => r.code === 'stale')) return 'stale';
    return 'diverged';
  };

  const status = (symbol: string, now: number): SymbolStatus => {
    const mem = memory.get(symbol);
    if (mem === undefined) throw new ValidationError('symbol', `${symbol} is not guarded`);
    const { reasons, divergenceBps } = conditions(symbol, mem, now);
    let liveness = livenessOf(reasons);
    if (liveness === 'live' && mem.clearedAt !== undefined && now < mem.clearedAt + recoverAfterMs) {
      liveness = mem.clearedFrom;
      reasons.push({ code: 'recovering', source: primary, detail: `clear since ${mem.clearedAt}; live from ${mem.clearedAt + recoverAfterMs}` });
    }
    const p = mem.held.get(primary);
    return {
      symbol,
      status: liveness,
      tradable: liveness === 'live',
      reasons,
      lastTickAt: p?.tick.receivedAt,
      quote:
        p === undefined
          ? undefined
          : { source: primary, bid: p.tick.bid, ask: p.tick.ask, last: p.tick.last, sourceTime: p.tick.sourceTime, receivedAt: p.tick.receivedAt },
      divergenceBps,
    };
  };

  return {
    ingest(tick) {
      const c = countersOf(typeof tick?.source === 'string' ? tick.source : '?');
      const mem = memory.get(tick.symbol);
      if (!sources.includes(tick.source) || mem === undefined) {
        c.ignored++;
        return 'ignored';
      }
      const bid = parsePrice(tick.bid);
      const ask = parsePrice(tick.ask);
      const last = parsePrice(tick.last);
      if (bid === undefined || ask === undefined || last === undefined || !isTime(tick.sourceTime) || !isTime(tick.receivedAt)) {
        c.malformed++;
        return 'malformed';
      }
      if (bid === 0n || ask === 0n || last === 0n || bid > ask) {
        c.rejectedValue++;
        return 'rejected-value';
      }
      const prev = mem.held.get(tick.source);
      if (prev !== undefined) {
        if (tick.sourceTime < prev.tick.sourceTime) {
          c.outOfOrder++;
          return 'out-of-order';
        }
        if (tick.sourceTime === prev.tick.sourceTime && bid === prev.bid && ask === prev.ask && last === parsePrice(prev.tick.last)) {
          c.duplicate++;
          return 'duplicate';
        }
      }
      // Judged at the tick's receipt: did it end a halt? Then recovery is timed from here.
      const at = tick.receivedAt;
      const before = conditions(tick.symbol, mem, at).reasons;
      mem.held.set(tick.source, { bid, ask, tick: { ...tick } });
      if (before.length > 0 && conditions(tick.symbol, mem, at).reasons.length === 0) {
        mem.clearedAt = at;
        mem.clearedFrom = livenessOf(before);
      }
      c.accepted++;
      return 'accepted';
    },
    status,
    statuses: (now) => [...memory.keys()].map((symbol) => status(symbol, now)),
    counters: () => Object.fromEntries([...counts].map(([source, c]) => [source, { ...c }])),
  };
}

/** Hundredths of a basis point → "51.78". */
function formatBps(hundredths: bigint): string {
  const frac = (hundredths % 100n).toString().padStart(2, '0');
  return `${hundredths / 100n}.${frac}`;
}
