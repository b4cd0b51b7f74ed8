import { describe, expect, it } from 'vitest';
import { threadSplit } from '../../bench/perp-orders-bench.ts';

describe("the bench's server CPU by thread (issue 40)", () => {
  it('puts the order thread (the process id) first, then the three busiest others, and sums the rest, µs an order', () => {
    // ns on a CPU, before and after a window of 1,000 orders.
    const t0 = { '100': 1_000_000, '101': 0, '102': 5_000_000, '103': 0, '104': 0, '105': 0 };
    const t1 = { '100': 301_000_000, '101': 40_000_000, '102': 135_000_000, '103': 10_000_000, '104': 3_000_000, '105': 2_000_000, '106': 1_000_000 };
    expect(threadSplit(100, t0, t1, 1_000)).toBe('order thread 300 · 130 · 40 · 10 · rest 6');
  });

  it('says n/a without the figures (no /proc, or no process id)', () => {
    expect(threadSplit(undefined, {}, { '1': 5 }, 10)).toBe('n/a');
    expect(threadSplit(1, undefined, { '1': 5 }, 10)).toBe('n/a');
    expect(threadSplit(1, {}, {}, 10)).toBe('n/a');
  });
});
