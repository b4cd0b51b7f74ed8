/**
 * Open-loop load (issue 40, item 2: latency at half of saturation). A closed-loop client (N
 * connections, each sending its next request when the last is answered) slows down with the server:
 * when the server stalls, the client stops sending, and the requests it would have sent during the
 * stall are never timed — coordinated omission, which hides the queueing a real arrival stream meets.
 * Here sends follow a fixed schedule (request i at start + i ÷ rate), and each latency runs from the
 * request's scheduled time, not from when it actually left: a request that had to wait for the
 * client, a connection or the server counts all of that wait.
 *
 * Pure helpers, unit-tested in test/bench/open-loop.test.ts; the load itself is in
 * bench/perp-latency-bench.ts.
 */

/** Scheduled send times (ms, on `startMs`'s clock) of `count` requests at `ratePerSec`: startMs + i × 1000 ÷ rate. */
export function openLoopSchedule(ratePerSec: number, count: number, startMs = 0): number[] {
  if (!(ratePerSec > 0) || !Number.isFinite(ratePerSec)) throw new RangeError(`open loop: rate must be a positive number, not ${ratePerSec}`);
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`open loop: count must be a whole number ≥ 0, not ${count}`);
  const gap = 1000 / ratePerSec;
  return Array.from({ length: count }, (_, i) => startMs + i * gap);
}

/** How many requests of `schedule`, from index `next` on, are due at `nowMs` (scheduled at or before it). */
export function dueCount(schedule: readonly number[], next: number, nowMs: number): number {
  let i = next;
  while (i < schedule.length && schedule[i] <= nowMs) i++;
  return i - next;
}

/**
 * The nearest-rank percentile of ascending `sorted`: the smallest sample with at least q of the
 * samples at or below it (q in (0, 1]); 0 for no samples. p50 of [1, 2, 3, 4] is 2, p99 of 100
 * samples is the 99th, of 1,000 the 990th.
 */
export function percentile(sorted: readonly number[], q: number): number {
  if (!(q > 0 && q <= 1)) throw new RangeError(`percentile: q must be in (0, 1], not ${q}`);
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1];
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** p50, p99 and the maximum of latencies in ms (any order). */
export function summariseLatencies(latenciesMs: readonly number[]): LatencySummary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.length === 0 ? 0 : sorted[sorted.length - 1] };
}

/**
 * Latency of each answered request from its scheduled send time: `answeredMs[i] − schedule[i]`.
 * `answeredMs` holds NaN for a request not answered (refused, failed): those are left out, and the
 * caller counts them.
 */
export function latenciesFromSchedule(schedule: readonly number[], answeredMs: readonly number[]): number[] {
  if (schedule.length !== answeredMs.length) throw new RangeError('open loop: one answer time per scheduled send');
  const out: number[] = [];
  for (let i = 0; i < schedule.length; i++) if (!Number.isNaN(answeredMs[i])) out.push(answeredMs[i] - schedule[i]);
  return out;
}

/** Half of a saturation throughput (requests a second), the open-loop rate of item 2. */
export function halfOfSaturation(saturatedPerSec: number): number {
  if (!(saturatedPerSec > 0) || !Number.isFinite(saturatedPerSec)) throw new RangeError(`half of saturation: bad throughput ${saturatedPerSec}`);
  return saturatedPerSec / 2;
}
