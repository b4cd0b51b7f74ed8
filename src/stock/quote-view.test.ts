import { describe, expect, it } from 'vitest';
import { usableQuote } from './executor/fill-policy.ts';
import { barView, quoteStale, STALE_QUOTE_MS } from './quote-view.ts';
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
