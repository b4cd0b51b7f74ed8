import { describe, expect, it } from 'vitest';
import { usableQuote } from './executor/fill-policy.ts';
import { barView, marketStateAt, quoteStale, quoteView, STALE_QUOTE_MS } from './quote-view.ts';
import { createMarketCalendar } from '../marketdata/market-calendar.ts';
import { renderExactJson } from './exact-number.ts';

describe('quoteStale', () => {
  it('is stale exactly when the executor would no longer fill against the quote', () => {
    expect(STALE_QUOTE_MS).toBe(30_000);
    const q = { symbol: 'AAPL', bid: '189.99', ask: '190.01', last: '190.00', timestamp: 1_000_000 };
    for (const age of [0, 29_999, 30_000, 30_001, 300_000]) {
      const now = q.timestamp + age;
      expect(quoteStale(q, now), `age ${age}`).toBe(age > 30_000);
      expect(quoteStale(q, now), `age ${age}`).toBe(usableQuote(q, now) === undefined);
    }
    expect(quoteStale(q, q.timestamp + 2_001, 2_000)).toBe(true);
    expect(quoteStale({ timestamp: Number.NaN }, 0)).toBe(true);
  });
});

describe('barView', () => {
  it("prints Anchored's numbers with the decimal's own digits on REST, the nearest double in a stream, and the strings in exact", () => {
    const bar = barView({ openTime: 0, closeTime: 59_999, open: '120.00', high: '9007199254740993.5', low: '0.00000001', close: '120.40', volume: '50000' });
    expect(renderExactJson(bar)).toBe(
      '{"openTime":0,"closeTime":59999,"open":120.00,"high":9007199254740993.5,"low":0.00000001,"close":120.40,"volume":50000,' +
        '"exact":{"open":"120.00","high":"9007199254740993.5","low":"0.00000001","close":"120.40","volume":"50000"}}',
    );
    expect(JSON.stringify(bar)).toBe(
      '{"openTime":0,"closeTime":59999,"open":120,"high":9007199254740994,"low":1e-8,"close":120.4,"volume":50000,' +
        '"exact":{"open":"120.00","high":"9007199254740993.5","low":"0.00000001","close":"120.40","volume":"50000"}}',
    );
  });
});

describe('quoteView', () => {
  it('says the session at the top and in basicInfo, beside marketStatus', () => {
    const listing = { symbol: 'AAPL', name: 'Apple Inc.', underlying: 'AAPL', exchange: 'NASDAQ', address: '0x0000000000000000000000000000000000000002' as const, decimals: 18 };
    const cfg = { stocks: [], blockNumber: '1', updatedAt: 0 } as unknown as Parameters<typeof quoteView>[2];
    const q = { symbol: 'AAPL', bid: '189.99', ask: '190.01', last: '190.00', timestamp: 1_000_000 };
    // Tuesday 2026-03-10 08:00 New York (EDT): pre-market under us-sessions, closed under nyse.
    const preMarket = Date.UTC(2026, 2, 10, 12);
    const us = quoteView(listing, q, cfg, marketStateAt(createMarketCalendar('us-sessions'), preMarket), false);
    expect([us.marketStatus, us.session, us.basicInfo.marketStatus, us.basicInfo.session]).toEqual(['open', 'pre-market', 'open', 'pre-market']);
    const nyse = quoteView(listing, q, cfg, marketStateAt(createMarketCalendar('nyse'), preMarket), false);
    expect([nyse.marketStatus, nyse.session, nyse.basicInfo.session]).toEqual(['closed', 'closed', 'closed']);
    const always = quoteView(listing, q, cfg, marketStateAt(createMarketCalendar('always-open'), preMarket), false);
    expect([always.marketStatus, always.session]).toEqual(['open', 'regular']);
  });

  it('is open exactly when the calendar is, for every kind (marketStatus follows the session)', () => {
    const start = Date.UTC(2026, 10, 20); // a week with Thanksgiving and an early close
    for (const kind of ['always-open', '24x5', 'nyse', 'us-sessions'] as const) {
      const calendar = createMarketCalendar(kind);
      for (let ms = start; ms < start + 10 * 86_400_000; ms += 7 * 60_000) {
        expect(marketStateAt(calendar, ms).open, `${kind} ${new Date(ms).toISOString()}`).toBe(calendar.isOpen(ms));
      }
    }
  });
});
