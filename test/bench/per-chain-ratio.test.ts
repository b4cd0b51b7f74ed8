import { describe, expect, it } from 'vitest';
import { perChainRatio } from '../../bench/per-chain-ratio.ts';

describe('per-chain ratio (issue 39): a role on each of two chains at once ÷ on one chain alone', () => {
  it('takes the best round of each and divides each chain by the best alone round', () => {
    const r = perChainRatio([900, 1_000, 950], [
      { 31337: 600, 31338: 500 },
      { 31337: 550, 31338: 650 },
    ]);
    expect(r.alone).toBe(1_000);
    expect(r.chains).toEqual([
      { chainId: 31337, rate: 600, ratio: 0.6 },
      { chainId: 31338, rate: 650, ratio: 0.65 },
    ]);
  });

  it("sums the chains within a round, not each chain's best from different rounds", () => {
    const r = perChainRatio([1_000], [
      { 31337: 700, 31338: 300 },
      { 31337: 300, 31338: 800 },
    ]);
    // Best chains would sum to 1,500; no round did better than 1,100.
    expect(r.total).toBe(1_100);
    expect(r.totalRatio).toBeCloseTo(1.1, 12);
  });

  it('refuses missing rounds, rates that are not positive and rounds naming different chains', () => {
    expect(() => perChainRatio([], [{ 31337: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([1], [])).toThrow(RangeError);
    expect(() => perChainRatio([1], [{ 31337: 0, 31338: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([Number.NaN], [{ 31337: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([1], [{ 31337: 1, 31338: 1 }, { 31337: 1, 31339: 1 }])).toThrow(RangeError);
  });
});
