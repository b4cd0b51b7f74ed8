import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMarketCalendar } from './market-calendar.ts';
import {
  acceptsOrder,
  dayOrderExpiry,
  nextSessionStart,
  orderAllowed,
  sessionAt,
  sessionBounds,
  sessionsFor,
  tradingDayOf,
  tradingDaySessions,
  type SymbolSessionFlags,
  type UsEquitySession,
} from './us-equity-sessions.ts';

const utc = (iso: string): number => Date.parse(iso.endsWith('Z') ? iso : `${iso}Z`);
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 16);
const bounds = (ms: number) => {
  const b = sessionBounds(ms);
  return { session: b.session, start: iso(b.start), end: iso(b.end) };
};

/** Asserts the session just before and at each boundary instant. */
function expectBoundaries(points: [string, UsEquitySession, UsEquitySession][]): void {
  for (const [at, before, after] of points) {
    expect(sessionAt(utc(at) - 1), `just before ${at}`).toBe(before);
    expect(sessionAt(utc(at)), `at ${at}`).toBe(after);
  }
}

describe('the four sessions of an ordinary day', () => {
  it('winter (EST = UTC-5): Wednesday 2026-01-14', () => {
    expectBoundaries([
      ['2026-01-14T01:00', 'after-hours', 'overnight'], // Tue 20:00: Wednesday's overnight opens
      ['2026-01-14T09:00', 'overnight', 'pre-market'], // 04:00
      ['2026-01-14T14:30', 'pre-market', 'regular'], // 09:30
      ['2026-01-14T21:00', 'regular', 'after-hours'], // 16:00
      ['2026-01-15T01:00', 'after-hours', 'overnight'], // 20:00: Thursday's overnight
    ]);
    expect(bounds(utc('2026-01-14T05:00'))).toEqual({ session: 'overnight', start: '2026-01-14T01:00', end: '2026-01-14T09:00' });
    expect(tradingDaySessions('2026-01-14').map((b) => [b.session, iso(b.start), iso(b.end)])).toEqual([
      ['overnight', '2026-01-14T01:00', '2026-01-14T09:00'],
      ['pre-market', '2026-01-14T09:00', '2026-01-14T14:30'],
      ['regular', '2026-01-14T14:30', '2026-01-14T21:00'],
      ['after-hours', '2026-01-14T21:00', '2026-01-15T01:00'],
    ]);
  });

  it('summer (EDT = UTC-4): Wednesday 2026-07-15', () => {
    expectBoundaries([
      ['2026-07-15T00:00', 'after-hours', 'overnight'],
      ['2026-07-15T08:00', 'overnight', 'pre-market'],
      ['2026-07-15T13:30', 'pre-market', 'regular'],
      ['2026-07-15T20:00', 'regular', 'after-hours'],
      ['2026-07-16T00:00', 'after-hours', 'overnight'],
    ]);
    expect(bounds(utc('2026-07-15T15:00'))).toEqual({ session: 'regular', start: '2026-07-15T13:30', end: '2026-07-15T20:00' });
  });
});

describe('the week', () => {
  it("opens Sunday 20:00 with Monday's overnight and closes Friday 20:00", () => {
    // Sunday 2026-01-11 20:00 EST = Monday 01:00 UTC
    expectBoundaries([
      ['2026-01-12T01:00', 'closed', 'overnight'],
      ['2026-01-17T01:00', 'after-hours', 'closed'], // Friday 2026-01-16 20:00 EST
    ]);
    expect(sessionAt(utc('2026-01-10T17:00'))).toBe('closed'); // Saturday noon
    expect(sessionAt(utc('2026-01-11T17:00'))).toBe('closed'); // Sunday noon
  });

  it('answers a weekend as one closed gap', () => {
    expect(bounds(utc('2026-01-10T17:00'))).toEqual({ session: 'closed', start: '2026-01-10T01:00', end: '2026-01-12T01:00' });
    // At the Friday 20:00 close itself, and a minute before Sunday 20:00
    expect(bounds(utc('2026-01-10T01:00'))).toEqual({ session: 'closed', start: '2026-01-10T01:00', end: '2026-01-12T01:00' });
    expect(bounds(utc('2026-01-12T00:59'))).toEqual({ session: 'closed', start: '2026-01-10T01:00', end: '2026-01-12T01:00' });
    // Martin Luther King Day (Monday 2026-01-19) stretches the next one to Monday 20:00
    expect(bounds(utc('2026-01-18T17:00'))).toEqual({ session: 'closed', start: '2026-01-17T01:00', end: '2026-01-20T01:00' });
  });
});

describe('DST switch weekends', () => {
  it('spring forward (Sunday 2026-03-08): Friday closes 20:00 EST, Sunday opens 20:00 EDT', () => {
    expectBoundaries([
      ['2026-03-07T01:00', 'after-hours', 'closed'],
      ['2026-03-09T00:00', 'closed', 'overnight'],
      ['2026-03-09T08:00', 'overnight', 'pre-market'],
      ['2026-03-09T13:30', 'pre-market', 'regular'],
      ['2026-03-09T20:00', 'regular', 'after-hours'],
    ]);
    expect(bounds(utc('2026-03-08T07:30'))).toEqual({ session: 'closed', start: '2026-03-07T01:00', end: '2026-03-09T00:00' });
    // Monday's overnight lasts 8 wall-clock hours as always
    expect(bounds(utc('2026-03-09T03:00'))).toEqual({ session: 'overnight', start: '2026-03-09T00:00', end: '2026-03-09T08:00' });
  });

  it('fall back (Sunday 2026-11-01): Friday closes 20:00 EDT, Sunday opens 20:00 EST', () => {
    expectBoundaries([
      ['2026-10-31T00:00', 'after-hours', 'closed'],
      ['2026-11-02T01:00', 'closed', 'overnight'],
      ['2026-11-02T09:00', 'overnight', 'pre-market'],
      ['2026-11-02T14:30', 'pre-market', 'regular'],
      ['2026-11-02T21:00', 'regular', 'after-hours'],
    ]);
    expect(bounds(utc('2026-11-01T06:30'))).toEqual({ session: 'closed', start: '2026-10-31T00:00', end: '2026-11-02T01:00' });
  });
});

describe('holidays and early closes', () => {
  it('Thanksgiving 2026: no overnight from Wednesday 20:00, nothing Thursday, Friday closes early', () => {
    // Wednesday 2026-11-25 ends with after-hours at 20:00 EST = 01:00 UTC
    expectBoundaries([['2026-11-26T01:00', 'after-hours', 'closed']]);
    for (const t of ['2026-11-26T03:00', '2026-11-26T09:30', '2026-11-26T15:00', '2026-11-26T22:00']) {
      expect(sessionAt(utc(t)), t).toBe('closed');
    }
    expect(tradingDaySessions('2026-11-26')).toEqual([]);
    // Friday's overnight opens Thursday 20:00 (its previous calendar day)
    expect(bounds(utc('2026-11-26T15:00'))).toEqual({ session: 'closed', start: '2026-11-26T01:00', end: '2026-11-27T01:00' });
    // Friday 2026-11-27: regular 09:30-13:00, after-hours 13:00-17:00 EST
    expectBoundaries([
      ['2026-11-27T01:00', 'closed', 'overnight'],
      ['2026-11-27T09:00', 'overnight', 'pre-market'],
      ['2026-11-27T14:30', 'pre-market', 'regular'],
      ['2026-11-27T18:00', 'regular', 'after-hours'],
      ['2026-11-27T22:00', 'after-hours', 'closed'],
    ]);
    expect(bounds(utc('2026-11-27T19:00'))).toEqual({ session: 'after-hours', start: '2026-11-27T18:00', end: '2026-11-27T22:00' });
    expect(bounds(utc('2026-11-27T23:00'))).toEqual({ session: 'closed', start: '2026-11-27T22:00', end: '2026-11-30T01:00' });
  });

  it('an early close before a holiday: the next overnight opens 20:00 on the holiday evening', () => {
    // Monday 2028-07-03 (EDT) closes early; Tuesday 4 July is a holiday; Wednesday's overnight opens Tuesday 20:00
    expectBoundaries([
      ['2028-07-03T17:00', 'regular', 'after-hours'],
      ['2028-07-03T21:00', 'after-hours', 'closed'],
      ['2028-07-05T00:00', 'closed', 'overnight'],
    ]);
    // Christmas Eve 2025 (Wednesday, EST) closes early; Friday 26th trades again from Thursday 20:00
    expect(bounds(utc('2025-12-24T23:00'))).toEqual({ session: 'closed', start: '2025-12-24T22:00', end: '2025-12-26T01:00' });
  });

  it('Good Friday 2027-03-26 (EDT): closed from Thursday 20:00 to Sunday 20:00', () => {
    expectBoundaries([
      ['2027-03-25T20:00', 'regular', 'after-hours'], // Thursday is a full day
      ['2027-03-26T00:00', 'after-hours', 'closed'],
      ['2027-03-29T00:00', 'closed', 'overnight'],
    ]);
    expect(bounds(utc('2027-03-26T14:00'))).toEqual({ session: 'closed', start: '2027-03-26T00:00', end: '2027-03-29T00:00' });
  });

  it('crosses from 2027 into 2028 (New Year 2028 falls on a Saturday and is not observed)', () => {
    // Friday 2027-12-31 is a full trading day
    expectBoundaries([
      ['2027-12-31T01:00', 'after-hours', 'overnight'], // Thursday 30th 20:00 EST
      ['2027-12-31T14:30', 'pre-market', 'regular'],
      ['2027-12-31T21:00', 'regular', 'after-hours'],
      ['2028-01-01T01:00', 'after-hours', 'closed'],
      ['2028-01-03T01:00', 'closed', 'overnight'],
    ]);
    expect(bounds(utc('2028-01-01T05:00'))).toEqual({ session: 'closed', start: '2028-01-01T01:00', end: '2028-01-03T01:00' });
    expect(tradingDayOf(utc('2027-12-31T03:00'))).toBe('2027-12-31');
    expect(tradingDayOf(utc('2028-01-01T05:00'))).toBe('2028-01-03');
    // The 2028 table: Good Friday 14 April, the day after Thanksgiving closes at 13:00 EST
    expect(sessionAt(utc('2028-04-14T15:00'))).toBe('closed');
    expect(bounds(utc('2028-11-24T17:00'))).toEqual({ session: 'regular', start: '2028-11-24T14:30', end: '2028-11-24T18:00' });
  });
});

describe('nextSessionStart', () => {
  const withOvernight = sessionsFor({ overnightTradable: true });
  const withoutOvernight = sessionsFor({ overnightTradable: false });
  const saturday = utc('2026-01-10T17:00');

  it('finds Sunday 20:00 with overnight and Monday 04:00 without', () => {
    expect(iso(nextSessionStart(saturday, withOvernight))).toBe('2026-01-12T01:00');
    expect(iso(nextSessionStart(saturday, withoutOvernight))).toBe('2026-01-12T09:00');
    expect(iso(nextSessionStart(saturday, new Set(['regular'])))).toBe('2026-01-12T14:30');
  });

  it('answers a later session from inside one, and the instant itself at a start', () => {
    expect(iso(nextSessionStart(utc('2026-01-14T10:00'), new Set(['regular'])))).toBe('2026-01-14T14:30');
    expect(iso(nextSessionStart(utc('2026-01-14T15:00'), withoutOvernight))).toBe('2026-01-14T21:00');
    expect(nextSessionStart(utc('2026-01-14T14:30'), new Set(['regular']))).toBe(utc('2026-01-14T14:30'));
    // From Friday's after-hours over the MLK weekend: Tuesday's overnight opens Monday 20:00
    expect(iso(nextSessionStart(utc('2026-01-16T22:00'), new Set(['overnight'])))).toBe('2026-01-20T01:00');
  });

  it('rejects a set with no trading session', () => {
    expect(() => nextSessionStart(saturday, new Set())).toThrow(RangeError);
    expect(() => nextSessionStart(saturday, new Set(['closed']))).toThrow(RangeError);
  });
});

describe('trading day and DAY orders', () => {
  it('gives an overnight instant the day it leads into, and a closed one the next trading day', () => {
    expect(tradingDayOf(utc('2026-01-14T03:00'))).toBe('2026-01-14'); // Tuesday 22:00 EST
    expect(tradingDayOf(utc('2026-01-14T08:59:59.999'))).toBe('2026-01-14'); // 03:59:59.999
    expect(tradingDayOf(utc('2026-01-14T00:59:59.999'))).toBe('2026-01-13'); // Tuesday after-hours
    expect(tradingDayOf(utc('2026-01-12T03:00'))).toBe('2026-01-12'); // Sunday 22:00 EST
    expect(tradingDayOf(utc('2026-01-11T03:00'))).toBe('2026-01-12'); // Saturday 22:00: closed
    expect(tradingDayOf(utc('2026-11-26T15:00'))).toBe('2026-11-27'); // Thanksgiving
  });

  it('expires at the end of the trading day’s after-hours, or its regular close when regular-only', () => {
    expect(iso(dayOrderExpiry(utc('2026-01-14T03:00')))).toBe('2026-01-15T01:00');
    expect(iso(dayOrderExpiry(utc('2026-01-14T03:00'), { regularOnly: true }))).toBe('2026-01-14T21:00');
    // Regular-only placed in after-hours: the next trading day's close
    expect(iso(dayOrderExpiry(utc('2026-01-14T22:00'), { regularOnly: true }))).toBe('2026-01-15T21:00');
    // Early-close Friday: 17:00 EST (13:00 regular-only); placed in its 17:00-20:00 gap: Monday 20:00
    expect(iso(dayOrderExpiry(utc('2026-11-27T15:00')))).toBe('2026-11-27T22:00');
    expect(iso(dayOrderExpiry(utc('2026-11-27T15:00'), { regularOnly: true }))).toBe('2026-11-27T18:00');
    expect(iso(dayOrderExpiry(utc('2026-11-26T15:00')))).toBe('2026-11-27T22:00');
    expect(iso(dayOrderExpiry(utc('2026-11-27T23:00')))).toBe('2026-12-01T01:00');
  });

  it('rejects an impossible date', () => {
    expect(() => tradingDaySessions('2026-02-30')).toThrow(RangeError);
    expect(() => tradingDaySessions('2026-1-5')).toThrow(RangeError);
  });
});

describe('order rules', () => {
  const flags = (over: Partial<SymbolSessionFlags> = {}): SymbolSessionFlags => ({
    overnightTradable: true,
    fractionable: true,
    fractionalEhEnabled: true,
    ...over,
  });

  it('lists the sessions a symbol trades in', () => {
    expect([...sessionsFor(flags())]).toEqual(['overnight', 'pre-market', 'regular', 'after-hours']);
    expect([...sessionsFor(flags({ overnightTradable: false }))]).toEqual(['pre-market', 'regular', 'after-hours']);
  });

  it('accepts market orders only in the regular session, limit orders always', () => {
    expect(acceptsOrder('MARKET', 'regular')).toEqual({ ok: true });
    for (const s of ['overnight', 'pre-market', 'after-hours', 'closed'] as const) {
      expect(acceptsOrder('MARKET', s).ok, s).toBe(false);
    }
    for (const s of ['overnight', 'pre-market', 'regular', 'after-hours', 'closed'] as const) {
      expect(acceptsOrder('LIMIT', s), s).toEqual({ ok: true });
    }
  });

  it('executes by session, order type, fractional quantity and the symbol flags', () => {
    const check = (session: UsEquitySession, type: 'MARKET' | 'LIMIT', fractional: boolean, f = flags()) =>
      orderAllowed({ session, type, fractional, flags: f });
    expect(check('regular', 'MARKET', false)).toEqual({ ok: true });
    expect(check('regular', 'LIMIT', true)).toEqual({ ok: true });
    expect(check('pre-market', 'LIMIT', true)).toEqual({ ok: true });
    expect(check('overnight', 'LIMIT', false)).toEqual({ ok: true });

    expect(check('closed', 'LIMIT', false)).toEqual({ ok: false, reason: 'the market is closed' });
    expect(check('after-hours', 'MARKET', false)).toEqual({ ok: false, reason: 'market orders execute only in the regular session' });
    expect(check('overnight', 'LIMIT', false, flags({ overnightTradable: false }))).toEqual({
      ok: false,
      reason: 'the symbol does not trade in the overnight session',
    });
    expect(check('pre-market', 'LIMIT', false, flags({ overnightTradable: false }))).toEqual({ ok: true });
    // Fractional: only fractionable symbols; outside regular hours only with fractionalEhEnabled
    expect(check('regular', 'LIMIT', true, flags({ fractionable: false }))).toEqual({
      ok: false,
      reason: 'the symbol does not trade fractional quantities',
    });
    expect(check('regular', 'MARKET', true, flags({ fractionalEhEnabled: false }))).toEqual({ ok: true });
    for (const s of ['overnight', 'pre-market', 'after-hours'] as const) {
      expect(check(s, 'LIMIT', true, flags({ fractionalEhEnabled: false })), s).toEqual({
        ok: false,
        reason: `fractional quantities do not trade in the ${s} session for this symbol`,
      });
      expect(check(s, 'LIMIT', false, flags({ fractionalEhEnabled: false })), s).toEqual({ ok: true });
    }
  });
});

describe('properties, 2025-2028', () => {
  const instant = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2029, 0, 1) - 1 });
  const nyse = createMarketCalendar('nyse');

  it('bounds contain the instant and hold one session throughout', () => {
    fc.assert(
      fc.property(instant, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (ms, f) => {
        const b = sessionBounds(ms);
        expect(b.start <= ms && ms < b.end).toBe(true);
        const inside = b.start + Math.floor(f * (b.end - b.start));
        for (const t of [b.start, ms, inside, b.end - 1]) expect(sessionAt(t)).toBe(b.session);
        expect(sessionAt(b.end)).not.toBe(b.session);
        expect(sessionBounds(b.end).start).toBe(b.end);
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with the nyse calendar on the regular session', () => {
    fc.assert(
      fc.property(instant, (ms) => {
        expect(sessionAt(ms) === 'regular').toBe(nyse.isOpen(ms));
      }),
      { numRuns: 2000 },
    );
  });
});
