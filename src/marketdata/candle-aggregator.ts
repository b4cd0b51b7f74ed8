/**
 * Rolls 1m candles up into the higher intervals and keeps the live candle of every interval.
 * Buckets are UTC-aligned: an interval's bucket of time t opens at floor(t / length) * length,
 * which every interval up to 1d divides evenly. Prices stay the strings they came in as (the
 * maximum of two prices is one of them), so a roll-up never rounds; volumes are summed exactly.
 */
import { formatDecimal } from '../lib/decimal.ts';
import { INTERVAL_MS, INTERVALS, type Candle, type Interval } from './market-types.ts';

/** Every interval above 1m, the ones a roll-up produces. */
export const AGGREGATE_INTERVALS: readonly Interval[] = INTERVALS.filter((i) => i !== '1m');

export function bucketStart(time: number, interval: Interval): number {
  const len = INTERVAL_MS[interval];
  return Math.floor(time / len) * len;
}

/**
 * Compares two non-negative decimal strings exactly: negative, zero or positive like a sort
 * comparator. Digit-wise rather than through bigint, since roll-ups call it a million times.
 */
export function compareDecimal(a: string, b: string): number {
  if (a === b) return 0;
  const ad = a.indexOf('.');
  const bd = b.indexOf('.');
  const aw = stripLeadingZeros(ad < 0 ? a : a.slice(0, ad));
  const bw = stripLeadingZeros(bd < 0 ? b : b.slice(0, bd));
  if (aw.length !== bw.length) return aw.length - bw.length;
  if (aw !== bw) return aw < bw ? -1 : 1;
  const af = ad < 0 ? '' : a.slice(ad + 1);
  const bf = bd < 0 ? '' : b.slice(bd + 1);
  const width = Math.max(af.length, bf.length);
  const ap = af.padEnd(width, '0');
  const bp = bf.padEnd(width, '0');
  return ap === bp ? 0 : ap < bp ? -1 : 1;
}

function stripLeadingZeros(digits: string): string {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48) i++;
  return i === 0 ? digits : digits.slice(i);
}

function maxDecimal(a: string, b: string): string {
  return compareDecimal(a, b) >= 0 ? a : b;
}

function minDecimal(a: string, b: string): string {
  return compareDecimal(a, b) <= 0 ? a : b;
}

function addVolume(a: string, b: string): string {
  // Stored volumes are whole shares; a volume adjusted for a reverse split may have decimals.
  if (a.includes('.') || b.includes('.')) return addDecimals(a, b);
  const sum = Number(a) + Number(b);
  return Number.isSafeInteger(sum) ? String(sum) : (BigInt(a) + BigInt(b)).toString();
}

/** The exact sum of two non-negative decimal strings, in its shortest form. */
function addDecimals(a: string, b: string): string {
  const fractionOf = (x: string): string => (x.includes('.') ? x.slice(x.indexOf('.') + 1) : '');
  const places = Math.max(fractionOf(a).length, fractionOf(b).length);
  const units = (x: string): bigint => BigInt(x.split('.')[0] + fractionOf(x).padEnd(places, '0'));
  return formatDecimal(units(a) + units(b), places);
}

/** `later` appended to `earlier`: open of the first, close of the second, extremes of both, summed volume. */
export function mergeCandles(earlier: Candle, later: Candle): Candle {
  return {
    symbol: earlier.symbol,
    interval: earlier.interval,
    openTime: earlier.openTime,
    open: earlier.open,
    high: maxDecimal(earlier.high, later.high),
    low: minDecimal(earlier.low, later.low),
    close: later.close,
    volume: addVolume(earlier.volume, later.volume),
  };
}

/**
 * Folds a shorter candle (a complete or partial 1m candle, in time order) into the candle of
 * `interval` that contains it. `current` is the interval's latest candle; a piece from a later
 * bucket starts a new candle.
 */
export function foldCandle(current: Candle | undefined, piece: Candle, interval: Interval): Candle {
  const openTime = bucketStart(piece.openTime, interval);
  if (current === undefined || current.openTime !== openTime) {
    return { ...piece, interval, openTime };
  }
  return mergeCandles(current, piece);
}

export interface PriceTick {
  symbol: string;
  time: number;
  price: string;
  /** Shares traded since the previous tick (whole shares). Default "0". */
  volume?: string;
}

/** Folds one traded price into the current candle of `interval` (a feed that sends ticks rather than bars). */
export function foldTick(current: Candle | undefined, tick: PriceTick, interval: Interval): Candle {
  const openTime = bucketStart(tick.time, interval);
  const volume = tick.volume ?? '0';
  if (current === undefined || current.openTime !== openTime) {
    return { symbol: tick.symbol, interval, openTime, open: tick.price, high: tick.price, low: tick.price, close: tick.price, volume };
  }
  return {
    ...current,
    high: maxDecimal(current.high, tick.price),
    low: minDecimal(current.low, tick.price),
    close: tick.price,
    volume: addVolume(current.volume, volume),
  };
}

/** Rolls 1m candles of one symbol (ascending by openTime) up into `interval`, ascending. */
export function rollup(candles: readonly Candle[], interval: Interval): Candle[] {
  const out: Candle[] = [];
  let current: Candle | undefined;
  for (const c of candles) {
    const next = foldCandle(current, c, interval);
    if (current !== undefined && next.openTime !== current.openTime) out.push(current);
    current = next;
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** Every aggregate interval of the given 1m candles (one symbol, ascending), 5m first. */
export function rollupAll(candles: readonly Candle[], intervals: readonly Interval[] = AGGREGATE_INTERVALS): Candle[] {
  return intervals.flatMap((interval) => rollup(candles, interval));
}

/**
 * The live candle of every interval of one symbol. Each aggregate keeps the roll-up of the
 * completed minutes of its bucket (`bases`); the minute still forming is merged on top at every
 * tick without being kept, so a partial minute is never counted twice.
 */
export interface LiveCandleBook {
  readonly symbol: string;
  /** A partial 1m candle of the current minute: the current candle of every interval, 1m first. */
  updateMinute(partial: Candle): Candle[];
  /** A finished 1m candle: folded into the bases; returns the resulting candle of every interval, 1m first. */
  completeMinute(candle: Candle): Candle[];
  /**
   * A finished candle longer than a minute (a sandbox's jump walked by the hour, coarse-walk.ts):
   * folded into the bases of its interval and the longer ones; returns those candles, its own first.
   */
  completeCoarse(candle: Candle): Candle[];
}

/** `completed` are the finished 1m candles already stored for the current buckets (ascending; older ones are ignored). */
export function createLiveCandleBook(symbol: string, completed: readonly Candle[] = []): LiveCandleBook {
  const bases = new Map<Interval, Candle>();
  for (const c of completed) for (const interval of AGGREGATE_INTERVALS) bases.set(interval, foldCandle(bases.get(interval), c, interval));
  return liveCandleBookOn(symbol, bases);
}

/**
 * The book from its bases: each interval's roll-up of the finished minutes of its current bucket
 * (history-seeder.ts builds them from stored aggregates without reading the day's minutes).
 */
export function liveCandleBookOn(symbol: string, start: ReadonlyMap<Interval, Candle>): LiveCandleBook {
  const bases = new Map(start);
  const fold = (minute: Candle): void => {
    for (const interval of AGGREGATE_INTERVALS) bases.set(interval, foldCandle(bases.get(interval), minute, interval));
  };

  const current = (minute: Candle): Candle[] => [
    minute,
    ...AGGREGATE_INTERVALS.map((interval) => foldCandle(bases.get(interval), minute, interval)),
  ];

  return {
    symbol,
    updateMinute: (partial) => current(partial),
    completeMinute(candle) {
      const out = current(candle);
      fold(candle);
      return out;
    },
    completeCoarse(candle) {
      const from = INTERVAL_MS[candle.interval];
      const out: Candle[] = [];
      for (const interval of AGGREGATE_INTERVALS) {
        if (INTERVAL_MS[interval] < from) continue;
        const c = foldCandle(bases.get(interval), candle, interval);
        bases.set(interval, c);
        out.push(c);
      }
      return out;
    },
  };
}
