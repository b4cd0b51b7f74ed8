/**
 * The short soak: the same mixed load as `npm run soak` (bench/soak-runner.ts) for 20 seconds in
 * 5-second windows. Every answer is the intended one, every stream's seq rises by exactly one,
 * every window carries load and stream frames, and the heap does not run away.
 */
import { expect, it } from 'vitest';
import { runSoak, slopePerMinute } from '../../bench/soak-runner.ts';

it('slopePerMinute is a least-squares slope in units a minute', () => {
  expect(slopePerMinute([[0, 10], [30, 11], [60, 12]])).toBeCloseTo(2, 10);
  expect(slopePerMinute([[0, 5], [60, 5]])).toBe(0);
  expect(slopePerMinute([[0, 5]])).toBe(0);
});

it('a short soak of both APIs and their streams: no unintended answer, no seq gap, load in every window', async () => {
  const result = await runSoak({ durationMs: 20_000, windowMs: 5_000, rate: 30, subscribers: 3 });
  console.log(`soak (short): ${result.requests} requests, ${result.frames} stream frames, heap ${result.heapFirstMb} → ${result.heapLastMb} MB; windows p99 ${result.windows.map((w) => w.p99Ms).join(' / ')} ms`);
  expect(result.samples).toEqual([]);
  expect(result.unexpected).toBe(0);
  expect(result.seqGaps).toBe(0);
  expect(result.windows.length).toBeGreaterThanOrEqual(3);
  for (const w of result.windows) {
    expect(w.requests).toBeGreaterThan(0);
    expect(w.frames).toBeGreaterThan(0);
  }
  // A leak of a few kilobytes a request would add tens of MB over these windows.
  expect(result.heapLastMb - result.heapFirstMb).toBeLessThan(64);
}, 180_000);
