/**
 * The US-equity trading day as the reference service (SynFutures / Anchored RWA) runs it: four
 * sessions, Monday to Friday, in America/New_York wall-clock time, plus the order rules that hang
 * on them. Pure: every function takes the instant (`ms`, Unix milliseconds) it answers for, so a
 * caller's clock is the only clock.
 *
 * Sessions of trading day D (a weekday that is not an NYSE holiday):
 *
 *   overnight    20:00 on D-1 – 04:00 on D   (Monday's opens Sunday 20:00; a Tuesday after a
 *                                             Monday holiday opens Monday 20:00)
 *   pre-market   04:00 – 09:30
 *   regular      09:30 – 16:00
 *   after-hours  16:00 – 20:00
 *
 * so from Sunday 20:00 to Friday 20:00 one session follows another with no gap; the week closes
 * Friday 20:00.
 *
 * - NYSE holidays: the trading day has no session at all: not its overnight (which would have
 *   opened 20:00 the evening before), nor pre-market, regular or after-hours. The next trading
 *   day's overnight still opens 20:00 on the holiday itself (its previous calendar day).
 * - NYSE early-close days (1:00 p.m. close): regular 09:30–13:00, after-hours 13:00–17:00, closed
 *   17:00–20:00, and the next trading day's overnight opens 20:00 as usual. That follows the
 *   exchanges: on those days NYSE closes its core session at 13:00 and NYSE Arca, NYSE American,
 *   NYSE National and NYSE Texas end their late trading sessions at 17:00 (NYSE Group's holiday
 *   announcements); Nasdaq likewise ends its post-market session at 17:00 on early-close days.
 *   The overnight venues publish nothing for the 17:00–20:00 gap, so we keep it closed.
 * - Years outside `NYSE_CALENDAR_YEARS` have no holidays or early closes (weekends only).
 *
 * DAY orders: an order belongs to a trading day (`tradingDayOf`: the day of the session running
 * when it is placed, or of the next session when placed while closed) and expires at the end of
 * that day's after-hours (20:00, 17:00 on an early-close day), or at that day's regular close
 * when the order is regular-only (`dayOrderExpiry`). Its life starts at the overnight session:
 * an order placed Sunday 21:00 lives through Monday 20:00.
 *
 * The New York offset comes from Intl (the runtime's tz database), so DST switches need no table
 * of our own; they happen at 02:00 on a Sunday, when every session is closed.
 */

// ------------------------------------------------------------------ New York time

export const MARKET_TIME_ZONE = 'America/New_York';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

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
export interface NewYorkTime {
  dayNumber: number;
  /** Minutes since local midnight. */
  minuteOfDay: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number;
}

export function newYorkTime(ms: number): NewYorkTime {
  const local = ms + newYorkOffsetMs(ms);
  const dayNumber = Math.floor(local / DAY);
  return {
    dayNumber,
    minuteOfDay: Math.floor((local - dayNumber * DAY) / MINUTE),
    weekday: weekdayOf(dayNumber),
  };
}

const weekdayOf = (dayNumber: number): number => (((dayNumber + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday

/** The UTC instant of a New York wall-clock time (a time away from the 02:00 DST switch). */
export function newYorkInstant(dayNumber: number, minuteOfDay: number): number {
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

function dayNumberOf(date: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : NaN;
  if (!Number.isFinite(ms) || isoDate(ms / DAY) !== date) throw new RangeError(`not a YYYY-MM-DD date: ${JSON.stringify(date)}`);
  return ms / DAY;
}

// ------------------------------------------------------------------ NYSE calendar

/**
 * NYSE full-day closures, from the exchange's published calendars (NYSE Group's announcements of
 * 2024-11-08 for 2025–2027 and of 2025-12-23 for 2026–2028). Rules would compute most of these,
 * but not the unscheduled ones (the 2025-01-09 national day of mourning), so the list is the
 * authority for the years it covers.
 *
 * 2028, each also checked against NYSE Rule 7.2 (a Saturday holiday moves to Friday, a Sunday one
 * to Monday, except that a Saturday holiday ending a month or year is not observed):
 * - New Year's Day falls on Saturday 2028-01-01: not observed (Friday 2027-12-31 ends the year).
 * - MLK Day 01-17 (3rd Monday), Washington's Birthday 02-21 (3rd Monday), Good Friday 04-14
 *   (Easter Sunday is 2028-04-16), Memorial Day 05-29 (last Monday), Juneteenth 06-19 (a Monday),
 *   Independence Day 07-04 (a Tuesday), Labor Day 09-04 (1st Monday), Thanksgiving 11-23
 *   (4th Thursday), Christmas 12-25 (a Monday).
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
  // 2028
  '2028-01-17', '2028-02-21', '2028-04-14', '2028-05-29', '2028-06-19', '2028-07-04', '2028-09-04',
  '2028-11-23', '2028-12-25',
]);

/**
 * NYSE early closes (13:00 New York time), as published. The pattern behind them: July 3 when it
 * is a weekday before a weekday July 4 (not when Independence Day is observed on July 3 or 5), the
 * Friday after Thanksgiving, and Christmas Eve when it is a weekday that is not itself the
 * observed Christmas. 2028: 07-03 (Monday before Tuesday's Independence Day; published) and 11-24
 * (day after Thanksgiving; published); Christmas Eve 2028 is a Sunday, so none (none announced).
 */
export const NYSE_EARLY_CLOSES: ReadonlySet<string> = new Set([
  '2025-07-03', '2025-11-28', '2025-12-24',
  '2026-11-27', '2026-12-24',
  '2027-11-26',
  '2028-07-03', '2028-11-24',
]);

/** First and last year the lists above cover; outside them only weekends close the NYSE calendar. */
export const NYSE_CALENDAR_YEARS = { first: 2025, last: 2028 } as const;

export const NYSE_OPEN_MINUTE = 9 * 60 + 30;
export const NYSE_CLOSE_MINUTE = 16 * 60;
export const NYSE_EARLY_CLOSE_MINUTE = 13 * 60;

/** NYSE regular hours (minutes since local midnight) of a local day; undefined on weekends and holidays. */
export function nyseRegularHours(dayNumber: number): { open: number; close: number } | undefined {
  const weekday = weekdayOf(dayNumber);
  if (weekday === 0 || weekday === 6) return undefined;
  const date = isoDate(dayNumber);
  if (NYSE_HOLIDAYS.has(date)) return undefined;
  return { open: NYSE_OPEN_MINUTE, close: NYSE_EARLY_CLOSES.has(date) ? NYSE_EARLY_CLOSE_MINUTE : NYSE_CLOSE_MINUTE };
}

// ------------------------------------------------------------------ sessions

export type UsEquitySession = 'overnight' | 'pre-market' | 'regular' | 'after-hours' | 'closed';
export type UsTradingSession = Exclude<UsEquitySession, 'closed'>;

/** The four trading sessions in the order they run within a trading day. */
export const US_TRADING_SESSIONS: readonly UsTradingSession[] = ['overnight', 'pre-market', 'regular', 'after-hours'];

/** A session, or a closed gap, as the half-open interval [start, end) of Unix ms. */
export interface SessionBounds {
  readonly session: UsEquitySession;
  readonly start: number;
  readonly end: number;
}

const OVERNIGHT_OPEN_MINUTE = 20 * 60; // on the previous calendar day
const PRE_MARKET_OPEN_MINUTE = 4 * 60;
const AFTER_HOURS_CLOSE_MINUTE = 20 * 60;
const EARLY_AFTER_HOURS_CLOSE_MINUTE = 17 * 60;

/** No listed closure, with its weekend, keeps every session shut this long. */
const MAX_SCAN_DAYS = 15;

const daySessionsCache = new Map<number, readonly SessionBounds[]>();

/** The sessions of trading day `dayNumber` in time order; empty when it is not a trading day. */
function daySessions(dayNumber: number): readonly SessionBounds[] {
  let sessions = daySessionsCache.get(dayNumber);
  if (sessions === undefined) {
    const hours = nyseRegularHours(dayNumber);
    if (hours === undefined) {
      sessions = [];
    } else {
      const early = hours.close === NYSE_EARLY_CLOSE_MINUTE;
      const at = (minute: number): number => newYorkInstant(dayNumber, minute);
      const preOpen = at(PRE_MARKET_OPEN_MINUTE);
      const regularOpen = at(hours.open);
      const regularClose = at(hours.close);
      sessions = [
        { session: 'overnight', start: newYorkInstant(dayNumber - 1, OVERNIGHT_OPEN_MINUTE), end: preOpen },
        { session: 'pre-market', start: preOpen, end: regularOpen },
        { session: 'regular', start: regularOpen, end: regularClose },
        { session: 'after-hours', start: regularClose, end: at(early ? EARLY_AFTER_HOURS_CLOSE_MINUTE : AFTER_HOURS_CLOSE_MINUTE) },
      ];
    }
    Object.freeze(sessions);
    if (daySessionsCache.size > 10_000) daySessionsCache.clear();
    daySessionsCache.set(dayNumber, sessions);
  }
  return sessions;
}

/** The trading session containing `ms` and its trading day, or undefined when closed. */
function containing(ms: number): { day: number; bounds: SessionBounds } | undefined {
  // Trading day d's sessions lie within [d-1 20:00, d 20:00), so only the local day and the next
  // (whose overnight may already have opened) can hold ms.
  const d = newYorkTime(ms).dayNumber;
  for (const day of [d, d + 1]) {
    for (const bounds of daySessions(day)) {
      if (bounds.start <= ms && ms < bounds.end) return { day, bounds };
    }
  }
  return undefined;
}

/** The first session starting at or after `ms` whose kind `accept` takes, with its trading day. */
function firstStartFrom(ms: number, accept: (s: UsEquitySession) => boolean): { day: number; bounds: SessionBounds } {
  const d = newYorkTime(ms).dayNumber;
  // Sessions of successive trading days never interleave, so scanning days in order finds the earliest.
  for (let day = d; day <= d + MAX_SCAN_DAYS; day++) {
    for (const bounds of daySessions(day)) {
      if (bounds.start >= ms && accept(bounds.session)) return { day, bounds };
    }
  }
  // Unreachable with the published tables: no closure lasts two weeks.
  throw new Error(`us-equity sessions: no session within ${MAX_SCAN_DAYS} days of ${new Date(ms).toISOString()}`);
}

/** The end of the last session ending at or before `ms` (ms being in a closed gap). */
function lastEndBefore(ms: number): number {
  const d = newYorkTime(ms).dayNumber;
  for (let day = d + 1; day >= d - MAX_SCAN_DAYS; day--) {
    const sessions = daySessions(day);
    for (let i = sessions.length - 1; i >= 0; i--) {
      if (sessions[i].end <= ms) return sessions[i].end;
    }
  }
  throw new Error(`us-equity sessions: no session within ${MAX_SCAN_DAYS} days before ${new Date(ms).toISOString()}`);
}

/** The session running at instant `ms`. */
export function sessionAt(ms: number): UsEquitySession {
  return containing(ms)?.bounds.session ?? 'closed';
}

/**
 * The session containing `ms` as [start, end); when closed, the closed gap: from the end of the
 * previous session to the start of the next one.
 */
export function sessionBounds(ms: number): SessionBounds {
  const hit = containing(ms);
  if (hit !== undefined) return hit.bounds;
  return { session: 'closed', start: lastEndBefore(ms), end: firstStartFrom(ms, () => true).bounds.start };
}

/**
 * The earliest start, at or after `ms`, of a session in `allowed` (`ms` itself when one starts
 * exactly then). Inside an allowed session this is the start of a later one, not of the current:
 * check `sessionAt` first to ask "can it trade now". 'closed' in `allowed` is ignored.
 */
export function nextSessionStart(ms: number, allowed: ReadonlySet<UsEquitySession>): number {
  if (!US_TRADING_SESSIONS.some((s) => allowed.has(s))) {
    throw new RangeError('nextSessionStart: allowed names no trading session');
  }
  return firstStartFrom(ms, (s) => allowed.has(s)).bounds.start;
}

/** Trading day (local day number) of the session containing `ms`, or of the next one when closed. */
function tradingDayNumberOf(ms: number): number {
  return (containing(ms) ?? firstStartFrom(ms, () => true)).day;
}

/**
 * "YYYY-MM-DD" of the trading day the instant belongs to: the day of the running session (an
 * overnight instant belongs to the day whose morning it leads into: Sunday 22:00 → Monday), or of
 * the next session when closed (Saturday → Monday, Thanksgiving → the Friday after).
 */
export function tradingDayOf(ms: number): string {
  return isoDate(tradingDayNumberOf(ms));
}

/** The sessions of a trading day ("YYYY-MM-DD") in time order; empty for a weekend or holiday. */
export function tradingDaySessions(date: string): readonly SessionBounds[] {
  return daySessions(dayNumberOf(date));
}

/**
 * When a DAY order placed at `ms` expires: the end of its trading day's after-hours (20:00, 17:00
 * on an early-close day). A regular-only order expires at its trading day's regular close instead;
 * placed after that close (in after-hours or the early-close gap), it is the next trading day's.
 */
export function dayOrderExpiry(ms: number, opts: { regularOnly?: boolean } = {}): number {
  const day = tradingDayNumberOf(ms);
  const sessions = daySessions(day);
  if (opts.regularOnly !== true) return sessions[sessions.length - 1].end;
  const regular = sessions.find((b) => b.session === 'regular')!;
  if (regular.end > ms) return regular.end;
  return firstStartFrom(regular.end, (s) => s === 'regular').bounds.end;
}

// ------------------------------------------------------------------ per-symbol and order rules

/** The `GET /api/v1/symbols` flags that shape when a symbol trades. */
export interface SymbolSessionFlags {
  overnightTradable: boolean;
  fractionable: boolean;
  fractionalEhEnabled: boolean;
}

const WITH_OVERNIGHT: ReadonlySet<UsEquitySession> = new Set<UsEquitySession>(['overnight', 'pre-market', 'regular', 'after-hours']);
const WITHOUT_OVERNIGHT: ReadonlySet<UsEquitySession> = new Set<UsEquitySession>(['pre-market', 'regular', 'after-hours']);

/** Sessions a symbol trades in: pre-market, regular and after-hours always; overnight when the symbol allows it. */
export function sessionsFor(flags: Pick<SymbolSessionFlags, 'overnightTradable'>): ReadonlySet<UsEquitySession> {
  return flags.overnightTradable ? WITH_OVERNIGHT : WITHOUT_OVERNIGHT;
}

export type OrderType = 'MARKET' | 'LIMIT';
export type OrderCheck = { ok: true } | { ok: false; reason: string };

const OK: OrderCheck = { ok: true };

/**
 * Whether an order may be placed in `session`: market orders only during the regular session,
 * limit orders at any time (closed included); they then wait for a session they may execute in.
 */
export function acceptsOrder(type: OrderType, session: UsEquitySession): OrderCheck {
  if (type === 'MARKET' && session !== 'regular') {
    return { ok: false, reason: 'market orders are accepted only during the regular session' };
  }
  return OK;
}

/**
 * Whether an order may execute in `session` for a symbol with `flags`: never while closed, only in
 * the symbol's sessions (`sessionsFor`), market orders only in the regular session, fractional
 * quantities only for a fractionable symbol and, in the extended sessions (overnight, pre-market,
 * after-hours), only when `fractionalEhEnabled`.
 */
export function orderAllowed(input: {
  session: UsEquitySession;
  type: OrderType;
  fractional: boolean;
  flags: SymbolSessionFlags;
}): OrderCheck {
  const { session, type, fractional, flags } = input;
  if (session === 'closed') return { ok: false, reason: 'the market is closed' };
  if (!sessionsFor(flags).has(session)) return { ok: false, reason: `the symbol does not trade in the ${session} session` };
  if (type === 'MARKET' && session !== 'regular') {
    return { ok: false, reason: 'market orders execute only in the regular session' };
  }
  if (fractional && !flags.fractionable) return { ok: false, reason: 'the symbol does not trade fractional quantities' };
  if (fractional && session !== 'regular' && !flags.fractionalEhEnabled) {
    return { ok: false, reason: `fractional quantities do not trade in the ${session} session for this symbol` };
  }
  return OK;
}
