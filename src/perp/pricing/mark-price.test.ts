import { describe, expect, it } from 'vitest';
import { bookMid, EMPTY_BASIS, markPrice, updateBasis } from './mark-price.ts';

describe('mark price', () => {
  it('first sample: the EMA takes the basis, the mark is the median of index+basis, mid and last', () => {
    const r = markPrice(EMPTY_BASIS, { indexTicks: 1000n, bestBidTicks: 1002n, bestAskTicks: 1004n, ts: 0 });
    expect(r).toEqual({ markTicks: 1003n, midTicks: 1003n, basis: { microTicks: 3_000_000n, at: 0 } });
  });

  it('the basis EMA decays toward the new basis by Δt / (Δt + τ)', () => {
    const prev = { microTicks: 3_000_000n, at: 0 };
    expect(updateBasis(prev, 0n, 150_000, 150_000)).toEqual({ microTicks: 1_500_000n, at: 150_000 });
    const r = markPrice(prev, { indexTicks: 1000n, bestBidTicks: 999n, bestAskTicks: 1001n, lastTradeTicks: 1000n, ts: 150_000 });
    expect(r.markTicks).toBe(1000n);
    // A sample at the same time changes nothing.
    expect(updateBasis(prev, 50n, 0, 150_000)).toBe(prev);
  });

  it('a thin book cannot drag the mark beyond the band around the index', () => {
    const prev = { microTicks: 0n, at: 0 };
    const r = markPrice(prev, { indexTicks: 1000n, bestBidTicks: 1900n, bestAskTicks: 2100n, lastTradeTicks: 2000n, ts: 1_000 });
    // EMA step: 1,000 ticks × 1,000 / 151,000 = 6.62… ticks; the median (2000) is clamped to +5 %.
    expect(r.basis.microTicks).toBe(6_622_516n);
    expect(r.markTicks).toBe(1050n);
    const low = markPrice(prev, { indexTicks: 1000n, bestBidTicks: 100n, bestAskTicks: 120n, lastTradeTicks: 110n, ts: 1_000 }, { bandPpm: 20_000n });
    expect(low.markTicks).toBe(980n);
  });

  it('an empty side or book: the mid is the index; no trade yet: last is the index', () => {
    expect(bookMid({ indexTicks: 500n, bestBidTicks: 499n })).toBe(500n);
    expect(markPrice(EMPTY_BASIS, { indexTicks: 500n, ts: 10 }).markTicks).toBe(500n);
  });

  it('a negative basis rounds down (floor), never toward zero', () => {
    const r = markPrice(EMPTY_BASIS, { indexTicks: 1000n, bestBidTicks: 990n, bestAskTicks: 995n, lastTradeTicks: 995n, ts: 0 });
    // mid floor(1985 / 2) = 992; basis −8; median(992, 992, 995) = 992.
    expect([r.midTicks, r.basis.microTicks, r.markTicks]).toEqual([992n, -8_000_000n, 992n]);
    const decayed = updateBasis({ microTicks: 0n, at: 0 }, -1n, 1, 150_000);
    expect(decayed.microTicks).toBe(-7n); // floor(−1,000,000 / 150,001) = −6.67 → −7
  });
});
