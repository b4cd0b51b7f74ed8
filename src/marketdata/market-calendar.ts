/**
 * When the market trades, in America/New_York wall-clock time. The time-zone offset comes from
 * Intl (the runtime's tz database), so DST switches need no table of our own.
 *
 * - `always-open`: every instant; there is no session close.
 * - `24x5`: round-the-clock weekday sessions, each from 20:00 New York time to 20:00 the next
 *   day: the week's first opens Sunday 20:00 and its last closes Friday 20:00. A DAY order
 *   therefore lives until the next 20:00. No holidays (the reference service trades through them).
 * - `nyse`: 09:30–16:00 on weekdays, closed on NYSE holidays, 13:00 close on NYSE early-close days.
 */

export type MarketCalendarKind = 'always-open' | '24x5' | 'nyse';
export const MARKET_CALENDAR_KINDS: readonly MarketCalendarKind[] = ['always-open', '24x5', 'nyse'];

export interface MarketCalendar {
  readonly kind: MarketCalendarKind;
  isOpen(ms: number): boolean;
  /** Close of the session containing `ms`, or of the next session when closed; null for always-open. */
  sessionClose(ms: number): number | null;
}

export const MARKET_TIME_ZONE = 'America/New_York';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * NYSE full-day closures, from the exchange's published calendars. Rules would compute most of
 * these, but not the unscheduled ones (the 2025-01-09 national day of mourning), so the list is
 * the authority for the years it covers.
 */
export const NYSE_HOLIDAYS: ReadonlySet<string> = new Set([
  // 2025
  '2025-01-01', '2025-01-09', '2025-01-20', '2025-02-17', '2025-04-18', '2025-05-26', '2025-06-19',
  '2025-07-04', '2025-09-01', '2025-11-27', '2025-12-25',
  // 2026
  '2026-01-01', '2026-01-19', '2026-02-16', '2026-04-03', '2026-05-25', '2026-06-19', '2026-07-03',
  '2026-09-07', '2026-11-26', '2026-12-25',
  // 2027
  '2027-01-01', '2027-01-18', '2027-02-15', '2027-03-26', '2027-05-31', '2027-06-18', '2027-07-05',
  '2027-09-06', '2027-11-25', '2027-12-24',
]);

/** NYSE early closes (13:00 New York time). */
export const NYSE_EARLY_CLOSES: ReadonlySet<string> = new Set([
  '2025-07-03', '2025-11-28', '2025-12-24',
  '2026-11-27', '2026-12-24',
  '2027-11-26',
]);

/** First and last year the lists above cover; outside them only weekends close the NYSE calendar. */
export const NYSE_CALENDAR_YEARS = { first: 2025, last: 2027 } as const;

// The New York offset changes only on whole UTC hours, so one lookup per hour is exact.
const offsetCache = new Map<number, number>();
let formatter: Intl.DateTimeFormat | undefined;

/** Offset of New York time from UTC at instant `ms`, in ms (-5 h in winter, -4 h in summer). */
export function newYorkOffsetMs(ms: number): number {
  const hourKey = Math.floor(ms / HOUR);
  let offset = offsetCache.get(hourKey);
  if (offset === undefined) {
    formatter ??= new Intl.DateTimeFormat('en-US', {
      timeZone: MARKET_TIME_ZONE,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    const probe = hourKey * HOUR;
    const parts: Record<string, number> = {};
    for (const p of formatter.formatToParts(new Date(probe))) {
      if (p.type !== 'literal') parts[p.type] = Number(p.value);
    }
    const wallAsUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute);
    offset = wallAsUtc - probe;
    if (offsetCache.size > 50_000) offsetCache.clear();
    offsetCache.set(hourKey, offset);
  }
  return offset;
}

/** Wall-clock fields of an instant in New York. `dayNumber` counts days since 1970-01-01 (local). */
interface LocalTime {
  dayNumber: number;
  /** Minutes since local midnight. */
  minuteOfDay: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number;
}

function localTime(ms: number): LocalTime {
  const local = ms + newYorkOffsetMs(ms);
  const dayNumber = Math.floor(local / DAY);
  return {
    dayNumber,
    minuteOfDay: Math.floor((local - dayNumber * DAY) / MINUTE),
    weekday: (((dayNumber + 4) % 7) + 7) % 7, // 1970-01-01 was a Thursday
  };
}

/** The UTC instant of a New York wall-clock time (a time away from the 02:00 DST switch). */
function instantOf(dayNumber: number, minuteOfDay: number): number {
  const wall = dayNumber * DAY + minuteOfDay * MINUTE;
  // Two passes: the offset at the first guess can differ from the answer's on a DST day.
  let guess = wall - newYorkOffsetMs(wall);
  guess = wall - newYorkOffsetMs(guess);
  return guess;
}

/** "YYYY-MM-DD" of a local day number. */
export function isoDate(dayNumber: number): string {
  return new Date(dayNumber * DAY).toISOString().slice(0, 10);
}

const alwaysOpen: MarketCalendar = {
  kind: 'always-open',
  isOpen: () => true,
  sessionClose: () => null,
};

const CLOSE_24X5 = 20 * 60;

function twentyFourFive(): MarketCalendar {
  const isOpen = (ms: number): boolean => {
    const { weekday, minuteOfDay } = localTime(ms);
    if (weekday === 6) return false;
    if (weekday === 0) return minuteOfDay >= CLOSE_24X5;
    if (weekday === 5) return minuteOfDay < CLOSE_24X5;
    return true;
  };
  return {
    kind: '24x5',
    isOpen,
    sessionClose(ms) {
      const { dayNumber, weekday, minuteOfDay } = localTime(ms);
      // The session that is running, or the next to open, closes at the first 20:00 after ms
      // that ends a session (Monday to Friday); on a closed weekend that is Monday's.
      let day = minuteOfDay < CLOSE_24X5 ? dayNumber : dayNumber + 1;
      let wd = minuteOfDay < CLOSE_24X5 ? weekday : (weekday + 1) % 7;
      while (wd === 0 || wd === 6) {
        day += 1;
        wd = (wd + 1) % 7;
      }
      return instantOf(day, CLOSE_24X5);
    },
  };
}

const NYSE_OPEN = 9 * 60 + 30;
const NYSE_CLOSE = 16 * 60;
const NYSE_EARLY_CLOSE = 13 * 60;

function nyseSession(dayNumber: number, weekday: number): { open: number; close: number } | undefined {
  if (weekday === 0 || weekday === 6) return undefined;
  const date = isoDate(dayNumber);
  if (NYSE_HOLIDAYS.has(date)) return undefined;
  return { open: NYSE_OPEN, close: NYSE_EARLY_CLOSES.has(date) ? NYSE_EARLY_CLOSE : NYSE_CLOSE };
}

function nyse(): MarketCalendar {
  return {
    kind: 'nyse',
    isOpen(ms) {
      const { dayNumber, weekday, minuteOfDay } = localTime(ms);
      const session = nyseSession(dayNumber, weekday);
      return session !== undefined && minuteOfDay >= session.open && minuteOfDay < session.close;
    },
    sessionClose(ms) {
      const { dayNumber, weekday, minuteOfDay } = localTime(ms);
      for (let i = 0; i < 15; i++) {
        const session = nyseSession(dayNumber + i, (weekday + i) % 7);
        if (session !== undefined && (i > 0 || minuteOfDay < session.close)) {
          return instantOf(dayNumber + i, session.close);
        }
      }
      // Unreachable: no listed closure lasts two weeks.
      throw new Error('nyse calendar: no session within 15 days');
    },
  };
}

export function createMarketCalendar(kind: MarketCalendarKind): MarketCalendar {
  switch (kind) {
    case 'always-open':
      return alwaysOpen;
    case '24x5':
      return twentyFourFive();
    case 'nyse':
      return nyse();
    default:
      throw new Error(`market calendar: unknown kind ${JSON.stringify(kind)} (always-open, 24x5 or nyse)`);
  }
}
