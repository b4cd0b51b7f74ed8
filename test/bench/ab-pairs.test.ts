import { describe, expect, it } from 'vitest';
import { abbaOrder, cpuPerOrder, summarisePairs } from '../../bench/ab-pairs.ts';

describe('ab-pairs: an A/B in ABBA order, judged pair by pair', () => {
  it('alternates which side runs first, pair after pair', () => {
    expect(abbaOrder(3)).toEqual(['A', 'B', 'B', 'A', 'A', 'B']);
    expect(abbaOrder(0)).toEqual([]);
  });

  it('calls a change measured only when every pair agrees, and within the noise otherwise', () => {
    // This session's nine pairs of statement journals (files ÷ memory as A ÷ B): they straddle 1.
    const files = [324, 364, 373, 329, 337, 433, 332, 392, 339];
    const memory = [300, 319, 335, 438, 412, 336, 361, 376, 387];
    const mixed = summarisePairs(files, memory);
    expect(mixed.verdict).toBe('within the noise');
    expect(mixed.min).toBeCloseTo(336 / 433, 9);
    expect(mixed.max).toBeCloseTo(438 / 329, 9);
    // Its first three pairs alone would have read as a gain.
    expect(summarisePairs(files.slice(0, 3), memory.slice(0, 3)).verdict).toBe('B cheaper');
    const dearer = summarisePairs([100, 200], [110, 220]);
    expect(dearer.verdict).toBe('B dearer');
    expect(dearer.geometricMean).toBeCloseTo(1.1, 9);
  });

  it('reads the figure from the bench table, and refuses pairs that do not pair', () => {
    expect(cpuPerOrder('| server CPU per order (user + system, all threads) | 434 µs |')).toBe(434);
    expect(cpuPerOrder('| server CPU per order, metrics off (METRICS_PORT=off), 3 servers | 928.9 µs |')).toBeUndefined();
    expect(() => summarisePairs([1, 2], [1])).toThrow(/as many/);
    expect(() => summarisePairs([], [])).toThrow(/at least one/);
  });
});
