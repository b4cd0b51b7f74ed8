import { describe, expect, it } from 'vitest';
import { createMarketCalendar } from './market-calendar.ts';
import {
  calendarSessionFlags,
  createVenueCalendar,
  DEFAULT_SESSION_FLAGS,
  DEMO_SYMBOLS,
  sessionFlagsOf,
  symbolFlagsOf,
  usSessionRulesOf,
  withSessionFlags,
} from './symbol-catalog.ts';

// Tuesday 2026-03-10, New York on EDT (UTC-4): pre-market 08:00–13:30Z, regular 13:30–20:00Z.
const PRE_MARKET = Date.UTC(2026, 2, 10, 12, 0);
const REGULAR_OPEN = Date.UTC(2026, 2, 10, 13, 30);
const REGULAR_CLOSE = Date.UTC(2026, 2, 10, 20, 0);
const AFTER_HOURS_CLOSE = Date.UTC(2026, 2, 11, 0, 0);

describe('session flags', () => {
  it('are all true under us-sessions unless the spec or STOCK_SESSION_FLAGS says otherwise', () => {
    expect(sessionFlagsOf({})).toEqual(DEFAULT_SESSION_FLAGS);
    expect(sessionFlagsOf({ sessionFlags: { overnightTradable: false } })).toEqual({ overnightTradable: false, fractionable: true, fractionalEhEnabled: true });
    // No fractions at all means none in the extended sessions either.
    expect(sessionFlagsOf({ sessionFlags: { fractionable: false } })).toEqual({ overnightTradable: true, fractionable: false, fractionalEhEnabled: false });
    const specs = withSessionFlags(DEMO_SYMBOLS, { TSLA: { overnightTradable: false, fractionalEhEnabled: false } });
    expect(specs.find((s) => s.symbol === 'TSLA')!.sessionFlags).toEqual({ overnightTradable: false, fractionalEhEnabled: false });
    expect(specs.find((s) => s.symbol === 'AAPL')).toBe(DEMO_SYMBOLS.find((s) => s.symbol === 'AAPL'));
    expect(() => withSessionFlags(DEMO_SYMBOLS, { TSLQ: { fractionable: false } })).toThrow(
      'STOCK_SESSION_FLAGS: TSLQ is not listed (listed: AAPL, TSLA, NVDA, MSFT, SPY)',
    );
  });

  it('keep their meaning for the calendars without per-symbol sessions', () => {
    expect(calendarSessionFlags('always-open')).toEqual({ overnightTradable: true, fractionable: true, fractionalEhEnabled: true });
    expect(calendarSessionFlags('24x5')).toEqual({ overnightTradable: true, fractionable: true, fractionalEhEnabled: true });
    expect(calendarSessionFlags('nyse')).toEqual({ overnightTradable: false, fractionable: true, fractionalEhEnabled: false });
    const specs = withSessionFlags(DEMO_SYMBOLS, { TSLA: { overnightTradable: false } });
    const nyse = createVenueCalendar(createMarketCalendar('nyse'), { symbols: specs });
    expect(nyse.symbolFlags('TSLA')).toEqual(calendarSessionFlags('nyse'));
    expect(createVenueCalendar(createMarketCalendar('24x5'), { symbols: specs }).symbolFlags('TSLA').overnightTradable).toBe(true);
    const us = createVenueCalendar(createMarketCalendar('us-sessions'), { symbols: specs });
    expect(us.symbolFlags('TSLA')).toEqual({ overnightTradable: false, fractionable: true, fractionalEhEnabled: true });
    expect(us.symbolFlags('AAPL')).toEqual(DEFAULT_SESSION_FLAGS);
    expect(us.symbolFlags('ZZZZ')).toEqual(DEFAULT_SESSION_FLAGS);
    // A bare calendar answers the defaults of its kind.
    expect(symbolFlagsOf(createMarketCalendar('nyse'), 'AAPL')).toEqual(calendarSessionFlags('nyse'));
    expect(symbolFlagsOf(createMarketCalendar('us-sessions'), 'AAPL')).toEqual(DEFAULT_SESSION_FLAGS);
  });
});

describe('createVenueCalendar', () => {
  it('answers on the wall clock without an offset, and has session rules only under us-sessions', () => {
    const us = createVenueCalendar(createMarketCalendar('us-sessions'), { symbols: DEMO_SYMBOLS });
    expect(us.kind).toBe('us-sessions');
    expect(us.session(PRE_MARKET)).toBe('pre-market');
    expect(us.isOpen(PRE_MARKET)).toBe(true);
    expect(us.sessionClose(PRE_MARKET)).toBe(AFTER_HOURS_CLOSE);
    expect(usSessionRulesOf(us)!.bounds(PRE_MARKET)).toEqual({ session: 'pre-market', start: Date.UTC(2026, 2, 10, 8, 0), end: REGULAR_OPEN });
    expect(usSessionRulesOf(createVenueCalendar(createMarketCalendar('nyse'), { symbols: DEMO_SYMBOLS }))).toBeUndefined();
    expect(usSessionRulesOf(createMarketCalendar('always-open'))).toBeUndefined();
  });

  it('reads every answer on the shifted clock and gives instants back on the wall clock', () => {
    // The wall clock says 1 January 2030 00:00Z; the calendar's clock says 2026-03-10 08:00 New York.
    const wall = Date.UTC(2030, 0, 1);
    const offset = PRE_MARKET - wall;
    const us = createVenueCalendar(createMarketCalendar('us-sessions'), { symbols: DEMO_SYMBOLS, clockOffsetMs: offset });
    expect(us.clockOffsetMs).toBe(offset);
    expect(us.session(wall)).toBe('pre-market');
    expect(us.session(wall + (REGULAR_OPEN - PRE_MARKET))).toBe('regular');
    expect(us.isOpen(wall)).toBe(true);
    expect(us.sessionClose(wall)).toBe(AFTER_HOURS_CLOSE - offset);
    const rules = usSessionRulesOf(us)!;
    expect(rules.session(wall)).toBe('pre-market');
    expect(rules.bounds(wall)).toEqual({ session: 'pre-market', start: Date.UTC(2026, 2, 10, 8, 0) - offset, end: REGULAR_OPEN - offset });
    expect(rules.nextStart(wall, new Set(['regular']))).toBe(REGULAR_OPEN - offset);
    expect(rules.dayOrderExpiry(wall)).toBe(AFTER_HOURS_CLOSE - offset);
    expect(rules.dayOrderExpiry(wall, { regularOnly: true })).toBe(REGULAR_CLOSE - offset);
    // The other kinds shift too: nyse is closed at 08:00 New York.
    const nyse = createVenueCalendar(createMarketCalendar('nyse'), { symbols: DEMO_SYMBOLS, clockOffsetMs: offset });
    expect(nyse.session(wall)).toBe('closed');
    expect(nyse.sessionClose(wall)).toBe(REGULAR_CLOSE - offset);
    expect(createVenueCalendar(createMarketCalendar('always-open'), { symbols: [], clockOffsetMs: offset }).sessionClose(wall)).toBeNull();
  });
});
