/**
 * When the market trades, in America/New_York wall-clock time. The time-zone offset comes from
 * Intl (the runtime's tz database), so DST switches need no table of our own. New York time and
 * the NYSE holiday and early-close tables live in `us-equity-sessions.ts` (re-exported here).
 *
 * - `always-open`: every instant; there is no session close.
 * - `24x5`: round-the-clock weekday sessions, each from 20:00 New York time to 20:00 the next
 *   day: the week's first opens Sunday 20:00 and its last closes Friday 20:00. A DAY order
 *   therefore lives until the next 20:00. No holidays (the reference service trades through them).
 * - `nyse`: 09:30–16:00 on weekdays, closed on NYSE holidays, 13:00 close on NYSE early-close days.
 * - `us-sessions`: the reference service's four sessions (overnight 20:00–04:00, pre-market,
 *   regular, after-hours to 20:00) with NYSE holidays and early closes; see `us-equity-sessions.ts`.
 *   Open in any of them; a session close is the end of the trading day's after-hours, when a DAY
 *   order expires (20:00, 17:00 on an early-close day).
 *
 * `session(ms)` names the session for every kind; the kinds without extended hours answer only
 * 'regular' or 'closed'.
 */

import {
  dayOrderExpiry,
  newYorkInstant,
  newYorkTime,
  nyseRegularHours,
  sessionAt,
  type UsEquitySession,
} from './us-equity-sessions.ts';

export {
  isoDate,
  MARKET_TIME_ZONE,
  newYorkOffsetMs,
  NYSE_CALENDAR_YEARS,
  NYSE_EARLY_CLOSES,
  NYSE_HOLIDAYS,
} from './us-equity-sessions.ts';

export type MarketCalendarKind = 'always-open' | '24x5' | 'nyse' | 'us-sessions';
export const MARKET_CALENDAR_KINDS: readonly MarketCalendarKind[] = ['always-open', '24x5', 'nyse', 'us-sessions'];

export interface MarketCalendar {
  readonly kind: MarketCalendarKind;
  isOpen(ms: number): boolean;
  /** Close of the session containing `ms`, or of the next session when closed; null for always-open. */
  sessionClose(ms: number): number | null;
  /** The session running at `ms`: 'regular' or 'closed' for the kinds without extended hours. */
  session(ms: number): UsEquitySession;
}

const alwaysOpen: MarketCalendar = {
  kind: 'always-open',
  isOpen: () => true,
  sessionClose: () => null,
  session: () => 'regular',
};

const CLOSE_24X5 = 20 * 60;

function twentyFourFive(): MarketCalendar {
  const isOpen = (ms: number): boolean => {
    const { weekday, minuteOfDay } = newYorkTime(ms);
    if (weekday === 6) return false;
    if (weekday === 0) return minuteOfDay >= CLOSE_24X5;
    if (weekday === 5) return minuteOfDay < CLOSE_24X5;
    return true;
  };
  return {
    kind: '24x5',
    isOpen,
    sessionClose(ms) {
      const { dayNumber, weekday, minuteOfDay } = newYorkTime(ms);
      // The session that is running, or the next to open, closes at the first 20:00 after ms
      // that ends a session (Monday to Friday); on a closed weekend that is Monday's.
      let day = minuteOfDay < CLOSE_24X5 ? dayNumber : dayNumber + 1;
      let wd = minuteOfDay < CLOSE_24X5 ? weekday : (weekday + 1) % 7;
      while (wd === 0 || wd === 6) {
        day += 1;
        wd = (wd + 1) % 7;
      }
      return newYorkInstant(day, CLOSE_24X5);
    },
    session: (ms) => (isOpen(ms) ? 'regular' : 'closed'),
  };
}

function nyse(): MarketCalendar {
  const isOpen = (ms: number): boolean => {
    const { dayNumber, minuteOfDay } = newYorkTime(ms);
    const hours = nyseRegularHours(dayNumber);
    return hours !== undefined && minuteOfDay >= hours.open && minuteOfDay < hours.close;
  };
  return {
    kind: 'nyse',
    isOpen,
    sessionClose(ms) {
      const { dayNumber, minuteOfDay } = newYorkTime(ms);
      for (let i = 0; i < 15; i++) {
        const hours = nyseRegularHours(dayNumber + i);
        if (hours !== undefined && (i > 0 || minuteOfDay < hours.close)) {
          return newYorkInstant(dayNumber + i, hours.close);
        }
      }
      // Unreachable: no listed closure lasts two weeks.
      throw new Error('nyse calendar: no session within 15 days');
    },
    session: (ms) => (isOpen(ms) ? 'regular' : 'closed'),
  };
}

const usSessions: MarketCalendar = {
  kind: 'us-sessions',
  isOpen: (ms) => sessionAt(ms) !== 'closed',
  // A DAY order's session is its trading day: it closes with that day's after-hours.
  sessionClose: (ms) => dayOrderExpiry(ms),
  session: sessionAt,
};

export function createMarketCalendar(kind: MarketCalendarKind): MarketCalendar {
  switch (kind) {
    case 'always-open':
      return alwaysOpen;
    case '24x5':
      return twentyFourFive();
    case 'nyse':
      return nyse();
    case 'us-sessions':
      return usSessions;
    default:
      throw new Error(`market calendar: unknown kind ${JSON.stringify(kind)} (${MARKET_CALENDAR_KINDS.join(', ')})`);
  }
}
