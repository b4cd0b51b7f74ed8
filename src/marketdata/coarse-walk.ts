/**
 * The simulator's prices across a long sandbox advance (docs/sandbox.md "Clock", "Candles after a
 * jump"): the whole UTC days strictly inside the jump are walked an hour at a time instead of a
 * minute at a time. Each such hour is one `1h` candle (and the `4h` and `1d` ones it rolls into),
 * with no `1m`, `5m` or `15m` candles under it; the first and the last day of the jump keep their
 * minutes, so the day a client (or a restart's backfill) continues from is whole.
 *
 * An hour is the source's own seeded minute path with the hour's variance: one point a minute
 * (sixty draws, against 3,600 for sixty minutes), so the same seed gives the same hours. Its volume
 * is the minute path's scaled to the minutes the hour trades. A minute of the calendar's closure
 * moves nothing, as in the minute walk; a split inside an hour (rather than at its start) keeps the
 * hour in minutes, so the quotes move to the new shares at the split's own minute.
 */
import type { Candle } from './market-types.ts';
import type { MarketDataSource, PathEvent } from './gbm-source.ts';
import type { SymbolSpec } from './symbol-catalog.ts';

const MINUTE = 60_000;
export const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The jump an advance walks (ms): its whole UTC days strictly inside may be walked by the hour. */
export interface CoarseWindow {
  from: number;
  to: number;
}

/** Whether the hour opening at `hour` (a whole hour) lies in a UTC day strictly inside the jump. */
export function isCoarseHour(window: CoarseWindow, hour: number): boolean {
  const day = Math.floor(hour / DAY) * DAY;
  return hour % HOUR === 0 && day > Math.floor(window.from / DAY) * DAY && day + DAY <= Math.floor(window.to / DAY) * DAY;
}

/**
 * The minutes of the hour opening at `hour` that trade. The calendars open and close on the hour or
 * the half hour (New York's 09:30, 13:00, 16:00, 20:00, 04:00; whole hours off UTC), so each half is
 * read at its two ends, and counted minute by minute only when they disagree.
 */
export function openMinutesOf(isOpen: (ms: number) => boolean, hour: number): number {
  let open = 0;
  for (const half of [hour, hour + 30 * MINUTE]) {
    const first = isOpen(half);
    if (first === isOpen(half + 29 * MINUTE)) {
      if (first) open += 30;
      continue;
    }
    for (let m = half; m < half + 30 * MINUTE; m += MINUTE) if (isOpen(m)) open++;
  }
  return open;
}

/** Hour candles of a source (read at each call: the simulator may make its source again at start). */
export function createCoarseWalk(source: () => MarketDataSource) {
  const specs = new Map<string, SymbolSpec>();
  /** `spec` whose one minute path carries `minutes` minutes of variance. */
  const scaled = (spec: SymbolSpec, minutes: number): SymbolSpec => {
    const key = `${spec.symbol}\u0000${spec.annualVolatility}\u0000${minutes}`;
    let s = specs.get(key);
    if (s === undefined) specs.set(key, (s = { ...spec, annualVolatility: String(Number(spec.annualVolatility) * Math.sqrt(minutes)) }));
    return s;
  };
  return {
    /**
     * The `1h` candle of the hour opening at `hour` that trades `openMinutes` minutes (at least
     * one), from `prevClose`; `events` as the minute walk takes them (a standing pin: the hour
     * stands at it).
     */
    hourCandle(spec: SymbolSpec, hour: number, prevClose: string, openMinutes: number, events?: readonly PathEvent[]): Candle {
      const c = source().minuteCandle(scaled(spec, openMinutes), hour, prevClose, events);
      return { ...c, interval: '1h', volume: (BigInt(c.volume) * BigInt(openMinutes)).toString() };
    },
  };
}
