import { describe, expect, it } from 'vitest';
import { fundingRate, impactPrice, premiumSample } from './funding-rate.ts';

const HOUR = 3_600_000;

describe('impact price', () => {
  const levels = [[1000, 10], [1010, 10]] as const;
  it('averages the fill of the impact notional in whole lots; asks round up, bids down', () => {
    // 10 lots at 1000 (1,000,000 µUSD at 100 µUSD per tick·lot), then ⌈500,000 / 101,000⌉ = 5 lots at 1010.
    expect(impactPrice(levels, 100n, 1_500_000n, 'ask')).toBe(1004n); // 1,505,000 / 1,500 = 1003.33…
    expect(impactPrice(levels, 100n, 1_500_000n, 'bid')).toBe(1003n);
  });
  it('a side thinner than the impact notional: the average over all of it; an empty side: none', () => {
    expect(impactPrice([[1000, 1]], 100n, 10n ** 12n, 'ask')).toBe(1000n);
    expect(impactPrice([], 100n, 1_000n, 'bid')).toBeUndefined();
  });
  it('exactly the first level', () => {
    expect(impactPrice(levels, 100n, 1_000_000n, 'bid')).toBe(1000n);
  });
});

describe('premium sample', () => {
  it('is the impact bid over the index, or the impact ask under it, as a fraction of the index (1e-9)', () => {
    expect(premiumSample(1000n, 1005n, 1010n)).toBe(5_000_000n);
    expect(premiumSample(1000n, 990n, 995n)).toBe(-5_000_000n);
    expect(premiumSample(1000n, 999n, 1001n)).toBe(0n);
    expect(premiumSample(1000n, undefined, undefined)).toBe(0n);
    expect(premiumSample(3n, 4n, 5n)).toBe(333_333_333n); // truncated toward zero
  });
});

describe('funding rate (Binance formula, scaled to a 1 h interval)', () => {
  it('no samples: the interest alone (0.01 % / 8)', () => {
    expect(fundingRate([], HOUR)).toEqual({ rateE9: 12_500n, premiumE9: 0n });
  });
  it('a premium within the clamp of the interest: the interest', () => {
    expect(fundingRate([20_000n], HOUR).rateE9).toBe(12_500n);
    expect(fundingRate([-3n, -4n], HOUR)).toEqual({ rateE9: 12_500n, premiumE9: -3n });
  });
  it('a premium beyond the clamp: premium − 0.05 % / 8', () => {
    expect(fundingRate([100_000n], HOUR).rateE9).toBe(37_500n);
    expect(fundingRate([-1_000_000n], HOUR).rateE9).toBe(-937_500n);
  });
  it('capped at 0.75 % / 8 either way', () => {
    expect(fundingRate([5_000_000n, 3_000_000n], HOUR)).toEqual({ rateE9: 937_500n, premiumE9: 4_000_000n });
    expect(fundingRate([-9_000_000n], HOUR).rateE9).toBe(-937_500n);
  });
  it('scales with the interval: 8 h gives the unscaled constants', () => {
    expect(fundingRate([], 8 * HOUR).rateE9).toBe(100_000n);
    expect(fundingRate([10_000_000n], 8 * HOUR).rateE9).toBe(7_500_000n);
  });
});
