import { describe, expect, it } from 'vitest';
import { createMarketCalendar } from '../marketdata/market-calendar.ts';
import { createVenueCalendar, DEMO_SYMBOLS, withSessionFlags } from '../marketdata/symbol-catalog.ts';
import { ValidationError } from '../errors/app-error.ts';
import { checkOrderSession, type OrderIntent } from './order-request.ts';
import type { StockListing } from './stock-deps.ts';

const E18 = 10n ** 18n;
const listing = (symbol: string): StockListing => ({ symbol, name: symbol, underlying: symbol, exchange: 'NASDAQ', address: '0x0000000000000000000000000000000000000002', decimals: 18 });
const order = (type: OrderIntent['type'], quantity: bigint, symbol = 'AAPL') => ({ stock: listing(symbol), type, quantity });

// New York on EDT (UTC-4) from 2026-03-08; Tuesday 2026-03-10.
const ny = (day: number, hour: number, minute = 0) => Date.UTC(2026, 2, day, hour + 4, minute);
const us = createVenueCalendar(createMarketCalendar('us-sessions'), { symbols: withSessionFlags(DEMO_SYMBOLS, { SPY: { fractionable: false } }) });

function refusal(fn: () => void): { field?: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return { field: (err as ValidationError).field, message: (err as Error).message };
  }
  throw new Error('accepted');
}

describe('checkOrderSession (us-sessions)', () => {
  it('accepts a market order in regular hours only, naming the session and when regular hours open', () => {
    expect(() => checkOrderSession(order('Market', 0n), us, ny(10, 9, 30))).not.toThrow();
    expect(() => checkOrderSession(order('Market', E18), us, ny(10, 15, 59))).not.toThrow();
    const rule = 'type: market orders are accepted only in regular hours (09:30–16:00 New York, 13:00 on early-close days); the market is';
    const tail = '. A limit order is accepted at any time';
    expect(refusal(() => checkOrderSession(order('Market', 0n), us, ny(10, 8)))).toEqual({
      field: 'type',
      message: `${rule} in pre-market until 2026-03-10T13:30:00Z${tail}`,
    });
    expect(refusal(() => checkOrderSession(order('Market', E18), us, ny(10, 16))).message).toBe(
      `${rule} in after-hours until 2026-03-11T00:00:00Z; regular hours open next at 2026-03-11T13:30:00Z${tail}`,
    );
    expect(refusal(() => checkOrderSession(order('Market', E18), us, ny(10, 23))).message).toBe(
      `${rule} in overnight until 2026-03-11T08:00:00Z; regular hours open next at 2026-03-11T13:30:00Z${tail}`,
    );
    // Saturday: closed until Sunday 20:00, regular hours on Monday.
    expect(refusal(() => checkOrderSession(order('Market', E18), us, ny(14, 12))).message).toBe(
      `${rule} closed until 2026-03-16T00:00:00Z; regular hours open next at 2026-03-16T13:30:00Z${tail}`,
    );
  });

  it('accepts a limit order at any time, even while closed', () => {
    for (const t of [ny(10, 8), ny(10, 12), ny(10, 18), ny(10, 23), ny(14, 12)]) expect(() => checkOrderSession(order('Limit', E18), us, t)).not.toThrow();
  });

  it('takes whole shares only of a symbol that is not fractionable', () => {
    expect(refusal(() => checkOrderSession(order('Limit', (E18 * 3n) / 2n, 'SPY'), us, ny(10, 12)))).toEqual({
      field: 'quantity',
      message: 'quantity: SPY trades whole shares only (fractionable: false): 1.5 has a fraction',
    });
    expect(() => checkOrderSession(order('Limit', 2n * E18, 'SPY'), us, ny(10, 12))).not.toThrow();
    expect(() => checkOrderSession(order('Limit', (E18 * 3n) / 2n, 'AAPL'), us, ny(10, 12))).not.toThrow();
    // A market buy is given by notional: the executor buys whole shares with it.
    expect(() => checkOrderSession(order('Market', 0n, 'SPY'), us, ny(10, 12))).not.toThrow();
  });

  it('leaves the other calendars alone', () => {
    for (const kind of ['always-open', '24x5', 'nyse'] as const) {
      const c = createVenueCalendar(createMarketCalendar(kind), { symbols: DEMO_SYMBOLS });
      expect(() => checkOrderSession(order('Market', E18), c, ny(14, 12))).not.toThrow();
    }
  });
});
