import { describe, expect, it } from 'vitest';
import { usableQuote } from './executor/fill-policy.ts';
import { quoteStale, STALE_QUOTE_MS } from './quote-view.ts';

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
