import { describe, expect, it } from 'vitest';
import { perChainRatio } from '../../bench/per-chain-ratio.ts';

describe('per-chain ratio (issue 39): a role on each of two chains at once ÷ on one chain alone', () => {
  it('takes the best round of each and divides each chain by the best alone round', () => {
    const r = perChainRatio([900, 1_000, 800], [
      { 31337: 600, 31338: 500 },
      { 31337: 550, 31338: 650 },
      { 31337: 400, 31338: 400 },
    ]);
    expect(r.alone).toBe(1_000);
    expect(r.chains.map(({ chainId, rate, ratio }) => ({ chainId, rate, ratio }))).toEqual([
      { chainId: 31337, rate: 600, ratio: 0.6 },
      { chainId: 31338, rate: 650, ratio: 0.65 },
    ]);
  });

  it("beside the best, the median of each round's together ÷ the same round's alone", () => {
    // The host slows down from round to round: the best alone and the best together come from
    // different rounds, each round's own pair does not.
    const r = perChainRatio([1_000, 500, 250], [
      { 31337: 900, 31338: 800 },
      { 31337: 300, 31338: 400 },
      { 31337: 200, 31338: 100 },
    ]);
    expect(r.chains[0].medianRatio).toBeCloseTo(0.8, 12); // 0.9, 0.6, 0.8
    expect(r.chains[1].medianRatio).toBeCloseTo(0.8, 12); // 0.8, 0.8, 0.4
    expect(r.medianTotalRatio).toBeCloseTo(1.4, 12); // 1.7, 1.4, 1.2
  });

  it("sums the chains within a round, not each chain's best from different rounds", () => {
    const r = perChainRatio([1_000, 1_000], [
      { 31337: 700, 31338: 300 },
      { 31337: 300, 31338: 800 },
    ]);
    // Best chains would sum to 1,500; no round did better than 1,100.
    expect(r.total).toBe(1_100);
    expect(r.totalRatio).toBeCloseTo(1.1, 12);
  });

  it('refuses missing or unpaired rounds, rates that are not positive and rounds naming different chains', () => {
    expect(() => perChainRatio([], [{ 31337: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([1], [])).toThrow(RangeError);
    expect(() => perChainRatio([1, 1], [{ 31337: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([1], [{ 31337: 0, 31338: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([Number.NaN], [{ 31337: 1 }])).toThrow(RangeError);
    expect(() => perChainRatio([1, 1], [{ 31337: 1, 31338: 1 }, { 31337: 1, 31339: 1 }])).toThrow(RangeError);
  });
});
