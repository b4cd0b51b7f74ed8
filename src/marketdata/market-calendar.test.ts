import { describe, expect, it } from 'vitest';
import {
  createMarketCalendar,
  MARKET_CALENDAR_KINDS,
  newYorkOffsetMs,
  NYSE_CALENDAR_YEARS,
  NYSE_EARLY_CLOSES,
  NYSE_HOLIDAYS,
} from './market-calendar.ts';

const utc = (iso: string): number => Date.parse(iso.endsWith('Z') ? iso : `${iso}Z`);
const H = 3_600_000;

describe('newYorkOffsetMs', () => {
  it('follows both DST switches of 2025 to the hour', () => {
    expect(newYorkOffsetMs(utc('2025-01-15T12:00'))).toBe(-5 * H);
    expect(newYorkOffsetMs(utc('2025-07-15T12:00'))).toBe(-4 * H);
    // Spring forward: 02:00 EST on 9 March 2025 is 07:00 UTC.
    expect(newYorkOffsetMs(utc('2025-03-09T06:59:59'))).toBe(-5 * H);
    expect(newYorkOffsetMs(utc('2025-03-09T07:00:00'))).toBe(-4 * H);
    // Fall back: 02:00 EDT on 2 November 2025 is 06:00 UTC.
    expect(newYorkOffsetMs(utc('2025-11-02T05:59:59'))).toBe(-4 * H);
    expect(newYorkOffsetMs(utc('2025-11-02T06:00:00'))).toBe(-5 * H);
  });
});

describe('always-open', () => {
  const cal = createMarketCalendar('always-open');
  it('is always open and has no session close', () => {
    expect(cal.kind).toBe('always-open');
    for (const t of ['2025-03-08T12:00', '2025-12-25T15:00', '2026-01-01T00:00']) expect(cal.isOpen(utc(t))).toBe(true);
    expect(cal.sessionClose(utc('2025-03-08T12:00'))).toBeNull();
    expect(cal.session(utc('2025-03-08T12:00'))).toBe('regular');
  });
});

describe('24x5', () => {
  const cal = createMarketCalendar('24x5');

  it('opens Sunday 20:00 and closes Friday 20:00 New York time (winter, EST = UTC-5)', () => {
    // Sunday 2025-01-12 20:00 EST = Monday 01:00 UTC
    expect(cal.isOpen(utc('2025-01-13T00:59:59'))).toBe(false);
    expect(cal.isOpen(utc('2025-01-13T01:00:00'))).toBe(true);
    expect(cal.isOpen(utc('2025-01-15T12:00'))).toBe(true); // Wednesday
    expect(cal.isOpen(utc('2025-01-16T01:00'))).toBe(true); // Wednesday 20:00 EST: sessions are back to back
    // Friday 2025-01-17 20:00 EST = Saturday 01:00 UTC
    expect(cal.isOpen(utc('2025-01-18T00:59:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-01-18T01:00:00'))).toBe(false);
    expect(cal.isOpen(utc('2025-01-18T18:00'))).toBe(false); // Saturday
  });

  it("names an open instant's session 'regular'", () => {
    expect(cal.session(utc('2025-01-13T01:00'))).toBe('regular');
    expect(cal.session(utc('2025-01-13T00:59:59'))).toBe('closed');
  });

  it('shifts by an hour in summer (EDT = UTC-4)', () => {
    // Sunday 2025-07-13 20:00 EDT = Monday 00:00 UTC
    expect(cal.isOpen(utc('2025-07-13T23:59:59'))).toBe(false);
    expect(cal.isOpen(utc('2025-07-14T00:00:00'))).toBe(true);
    // Friday 2025-07-18 20:00 EDT = Saturday 00:00 UTC
    expect(cal.isOpen(utc('2025-07-18T23:59:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-07-19T00:00:00'))).toBe(false);
  });

  it('has daily sessions closing at 20:00 New York time', () => {
    // Tuesday 10:00 EST → Tuesday 20:00 EST
    expect(cal.sessionClose(utc('2025-01-14T15:00'))).toBe(utc('2025-01-15T01:00'));
    // Tuesday 21:00 EST → Wednesday 20:00 EST
    expect(cal.sessionClose(utc('2025-01-15T02:00'))).toBe(utc('2025-01-16T01:00'));
    // exactly 20:00 starts the next session
    expect(cal.sessionClose(utc('2025-01-15T01:00'))).toBe(utc('2025-01-16T01:00'));
    // Sunday 21:00 (open) → Monday 20:00
    expect(cal.sessionClose(utc('2025-01-13T02:00'))).toBe(utc('2025-01-14T01:00'));
    // Saturday (closed) → the next session's close, Monday 20:00
    expect(cal.sessionClose(utc('2025-01-18T12:00'))).toBe(utc('2025-01-21T01:00'));
  });

  it('handles the weekends of the DST switches', () => {
    // Spring forward on Sunday 9 March 2025: Friday closes 20:00 EST, Sunday opens 20:00 EDT.
    expect(cal.isOpen(utc('2025-03-08T00:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-03-08T01:00'))).toBe(false);
    expect(cal.isOpen(utc('2025-03-09T23:59'))).toBe(false);
    expect(cal.isOpen(utc('2025-03-10T00:00'))).toBe(true);
    expect(cal.sessionClose(utc('2025-03-08T12:00'))).toBe(utc('2025-03-11T00:00'));
    // Fall back on Sunday 2 November 2025: Friday closes 20:00 EDT, Sunday opens 20:00 EST.
    expect(cal.isOpen(utc('2025-10-31T23:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-11-01T00:00'))).toBe(false);
    expect(cal.isOpen(utc('2025-11-03T00:59'))).toBe(false);
    expect(cal.isOpen(utc('2025-11-03T01:00'))).toBe(true);
    expect(cal.sessionClose(utc('2025-11-01T12:00'))).toBe(utc('2025-11-04T01:00'));
  });
});

describe('nyse', () => {
  const cal = createMarketCalendar('nyse');

  it('trades 09:30-16:00 New York time on weekdays, on both sides of a DST switch', () => {
    // Friday 2025-03-07, EST: 14:30-21:00 UTC
    expect(cal.isOpen(utc('2025-03-07T14:29:59'))).toBe(false);
    expect(cal.isOpen(utc('2025-03-07T14:30:00'))).toBe(true);
    expect(cal.isOpen(utc('2025-03-07T20:59:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-03-07T21:00:00'))).toBe(false);
    // Monday 2025-03-10, EDT: 13:30-20:00 UTC
    expect(cal.isOpen(utc('2025-03-10T13:29:59'))).toBe(false);
    expect(cal.isOpen(utc('2025-03-10T13:30:00'))).toBe(true);
    expect(cal.isOpen(utc('2025-03-10T19:59:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-03-10T20:00:00'))).toBe(false);
    // Fall: Friday 2025-10-31 in EDT, Monday 2025-11-03 in EST
    expect(cal.isOpen(utc('2025-10-31T13:30'))).toBe(true);
    expect(cal.isOpen(utc('2025-10-31T20:00'))).toBe(false);
    expect(cal.isOpen(utc('2025-11-03T13:30'))).toBe(false);
    expect(cal.isOpen(utc('2025-11-03T14:30'))).toBe(true);
    expect(cal.isOpen(utc('2025-11-03T20:30'))).toBe(true);
    expect(cal.isOpen(utc('2025-11-03T21:00'))).toBe(false);
    // Weekend
    expect(cal.isOpen(utc('2025-03-08T15:00'))).toBe(false);
    expect(cal.isOpen(utc('2025-03-09T15:00'))).toBe(false);
  });

  it('is closed on NYSE holidays', () => {
    for (const day of ['2025-01-01', '2025-01-09', '2025-04-18', '2025-07-04', '2025-12-25', '2026-04-03', '2026-07-03', '2027-03-26', '2027-06-18', '2027-07-05', '2027-12-24']) {
      expect(cal.isOpen(utc(`${day}T15:00`)), day).toBe(false);
      expect(cal.isOpen(utc(`${day}T18:00`)), day).toBe(false);
    }
    // The day after a holiday trades normally.
    expect(cal.isOpen(utc('2025-07-07T15:00'))).toBe(true);
    expect(NYSE_HOLIDAYS.size).toBe(40);
    const perYear = (y: number) => [...NYSE_HOLIDAYS].filter((d) => d.startsWith(`${y}-`)).length;
    // 2028 has nine: New Year's Day falls on a Saturday and is not observed on Friday 2027-12-31.
    expect([2025, 2026, 2027, 2028].map(perYear)).toEqual([11, 10, 10, 9]);
    expect(NYSE_CALENDAR_YEARS).toEqual({ first: 2025, last: 2028 });
    for (const day of NYSE_HOLIDAYS) {
      const wd = new Date(`${day}T12:00Z`).getUTCDay();
      expect(wd >= 1 && wd <= 5, `${day} is a weekday`).toBe(true);
    }
  });

  it('closes at 13:00 on early-close days', () => {
    // 2025-11-28 (EST): 13:00 = 18:00 UTC
    expect(cal.isOpen(utc('2025-11-28T17:59:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-11-28T18:00:00'))).toBe(false);
    expect(cal.sessionClose(utc('2025-11-28T15:00'))).toBe(utc('2025-11-28T18:00'));
    // 2025-07-03 (EDT): 13:00 = 17:00 UTC
    expect(cal.isOpen(utc('2025-07-03T16:59'))).toBe(true);
    expect(cal.isOpen(utc('2025-07-03T17:00'))).toBe(false);
    for (const day of NYSE_EARLY_CLOSES) expect(NYSE_HOLIDAYS.has(day)).toBe(false);
  });

  it('follows the 2028 calendar', () => {
    expect(cal.isOpen(utc('2027-12-31T15:00'))).toBe(true); // New Year 2028 (a Saturday) not observed
    for (const day of ['2028-01-17', '2028-02-21', '2028-04-14', '2028-05-29', '2028-06-19', '2028-07-04', '2028-09-04', '2028-11-23', '2028-12-25']) {
      expect(cal.isOpen(utc(`${day}T15:00`)), day).toBe(false);
    }
    // Early closes: Monday 3 July (EDT, 13:00 = 17:00 UTC), Friday 24 November (EST, 18:00 UTC)
    expect(cal.sessionClose(utc('2028-07-03T14:00'))).toBe(utc('2028-07-03T17:00'));
    expect(cal.sessionClose(utc('2028-11-24T15:00'))).toBe(utc('2028-11-24T18:00'));
    // Christmas Eve 2028 is a Sunday: Friday 22 December is a full day
    expect(cal.sessionClose(utc('2028-12-22T15:00'))).toBe(utc('2028-12-22T21:00'));
  });

  it("names its hours 'regular' and the rest 'closed'", () => {
    expect(cal.session(utc('2025-03-07T14:30'))).toBe('regular');
    expect(cal.session(utc('2025-03-07T14:29:59'))).toBe('closed');
    expect(cal.session(utc('2025-03-07T21:00'))).toBe('closed');
  });

  it('answers the close of the current session, or of the next one when closed', () => {
    // During a winter session: 16:00 EST = 21:00 UTC
    expect(cal.sessionClose(utc('2025-03-07T15:00'))).toBe(utc('2025-03-07T21:00'));
    // After Friday's close, over the DST weekend: Monday 16:00 EDT = 20:00 UTC
    expect(cal.sessionClose(utc('2025-03-07T21:00'))).toBe(utc('2025-03-10T20:00'));
    expect(cal.sessionClose(utc('2025-03-08T12:00'))).toBe(utc('2025-03-10T20:00'));
    // Before the open on a trading day: that day's close
    expect(cal.sessionClose(utc('2025-03-10T12:00'))).toBe(utc('2025-03-10T20:00'));
    // Early close before Independence Day, then the holiday and weekend: Monday 7 July
    expect(cal.sessionClose(utc('2025-07-03T17:30'))).toBe(utc('2025-07-07T20:00'));
    // Over Good Friday 2026 (3 April) to Monday 6 April
    expect(cal.sessionClose(utc('2026-04-02T21:00'))).toBe(utc('2026-04-06T20:00'));
    // Christmas 2027 observed on Friday 24 December: Thursday 23rd → Monday 27th
    expect(cal.sessionClose(utc('2027-12-23T22:00'))).toBe(utc('2027-12-27T21:00'));
  });
});

describe('us-sessions', () => {
  const cal = createMarketCalendar('us-sessions');

  it('is open in all four sessions and names them', () => {
    expect(cal.kind).toBe('us-sessions');
    // Wednesday 2026-01-14 (EST): overnight from Tuesday 20:00, pre-market 04:00, regular 09:30, after-hours 16:00-20:00
    const cases: [string, boolean, string][] = [
      ['2026-01-14T00:59', true, 'after-hours'],
      ['2026-01-14T01:00', true, 'overnight'],
      ['2026-01-14T09:00', true, 'pre-market'],
      ['2026-01-14T14:30', true, 'regular'],
      ['2026-01-14T21:00', true, 'after-hours'],
      ['2026-01-17T01:00', false, 'closed'], // Friday 20:00
      ['2026-11-26T15:00', false, 'closed'], // Thanksgiving
    ];
    for (const [t, open, session] of cases) {
      expect(cal.isOpen(utc(t)), t).toBe(open);
      expect(cal.session(utc(t)), t).toBe(session);
    }
  });

  it("closes a session at the end of the trading day's after-hours", () => {
    // Tuesday 22:00 EST belongs to Wednesday, which ends 20:00 EST = Thursday 01:00 UTC
    expect(cal.sessionClose(utc('2026-01-14T03:00'))).toBe(utc('2026-01-15T01:00'));
    expect(cal.sessionClose(utc('2026-01-14T15:00'))).toBe(utc('2026-01-15T01:00'));
    // Saturday: Monday's day, ending Monday 20:00
    expect(cal.sessionClose(utc('2026-01-10T17:00'))).toBe(utc('2026-01-13T01:00'));
    // Early close on the Friday after Thanksgiving: after-hours ends 17:00 EST
    expect(cal.sessionClose(utc('2026-11-26T15:00'))).toBe(utc('2026-11-27T22:00'));
  });
});

it('creates every listed kind', () => {
  expect(MARKET_CALENDAR_KINDS).toEqual(['always-open', '24x5', 'nyse', 'us-sessions']);
  for (const kind of MARKET_CALENDAR_KINDS) expect(createMarketCalendar(kind).kind).toBe(kind);
});

it('rejects an unknown calendar kind', () => {
  expect(() => createMarketCalendar('lse' as never)).toThrow(/unknown kind/);
});
