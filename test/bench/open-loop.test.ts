import { describe, expect, it } from 'vitest';
import { dueCount, halfOfSaturation, latenciesFromSchedule, openLoopSchedule, percentile, summariseLatencies } from '../../bench/open-loop.ts';

describe('open-loop load helpers (issue 40 item 2: latency at half of saturation)', () => {
  it('schedules request i at start + i ÷ rate, whatever the answers do', () => {
    expect(openLoopSchedule(4, 5, 1_000)).toEqual([1_000, 1_250, 1_500, 1_750, 2_000]);
    expect(openLoopSchedule(400, 3)).toEqual([0, 2.5, 5]);
    expect(openLoopSchedule(1, 0)).toEqual([]);
    expect(() => openLoopSchedule(0, 3)).toThrow(RangeError);
    expect(() => openLoopSchedule(Number.POSITIVE_INFINITY, 3)).toThrow(RangeError);
    expect(() => openLoopSchedule(10, 1.5)).toThrow(RangeError);
  });

  it('counts the sends due at a moment, from the next unsent one', () => {
    const s = openLoopSchedule(4, 5, 1_000);
    expect(dueCount(s, 0, 999)).toBe(0);
    expect(dueCount(s, 0, 1_000)).toBe(1);
    // A client that fell behind sends every overdue request at once: none is skipped.
    expect(dueCount(s, 1, 1_760)).toBe(3);
    expect(dueCount(s, 4, 10_000)).toBe(1);
    expect(dueCount(s, 5, 10_000)).toBe(0);
  });

  it('takes nearest-rank percentiles', () => {
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(percentile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 0.99)).toBe(99);
    expect(percentile(hundred, 1)).toBe(100);
    const thousand = Array.from({ length: 1_000 }, (_, i) => i + 1);
    expect(percentile(thousand, 0.99)).toBe(990);
    expect(percentile(thousand, 0.5)).toBe(500);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBe(0);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 1.5)).toThrow(RangeError);
  });

  it('measures each latency from its scheduled send, so a stall counts for every request it delayed', () => {
    // Sends due every 10 ms; the server stalls and answers the first four together at 50 ms.
    const schedule = openLoopSchedule(100, 5);
    const answered = [50, 50, 50, 50, Number.NaN];
    expect(latenciesFromSchedule(schedule, answered)).toEqual([50, 40, 30, 20]);
    expect(summariseLatencies(latenciesFromSchedule(schedule, answered))).toEqual({ count: 4, p50Ms: 30, p99Ms: 50, maxMs: 50 });
    expect(summariseLatencies([])).toEqual({ count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
    expect(() => latenciesFromSchedule([0, 1], [1])).toThrow(RangeError);
  });

  it('halves a saturation throughput and refuses a meaningless one', () => {
    expect(halfOfSaturation(812)).toBe(406);
    expect(() => halfOfSaturation(0)).toThrow(RangeError);
    expect(() => halfOfSaturation(Number.NaN)).toThrow(RangeError);
  });
});
