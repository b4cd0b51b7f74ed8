/**
 * `npm run soak`: the embedded stack under mixed load on both APIs and their streams (an hour by
 * default), one line a minute, then the verdict: no unintended answers, no seq gaps, a heap with no
 * growth trend, a p99 that stays where it started. Exit code 1 when any of them fails.
 *
 *   SOAK_MINUTES=60 SOAK_RATE=50 SOAK_SUBSCRIBERS=20 npm run soak
 *   SOAK_OPS=perp-order,stock-quote …   (a part of the mix, to find where a trend comes from)
 */
import { runSoak, type SoakWindow } from './soak-runner.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 60);
const rate = Number(process.env.SOAK_RATE ?? 50);
const subscribers = Number(process.env.SOAK_SUBSCRIBERS ?? 20);
const windowMs = Number(process.env.SOAK_WINDOW_MS ?? 60_000);
/** Heap growth over the second half tolerated as flat, MB a minute. */
const maxSlope = Number(process.env.SOAK_MAX_HEAP_SLOPE_MB_MIN ?? 1);

const line = (w: SoakWindow) =>
  `${String(w.at).padStart(6)} s  ${String(w.requests).padStart(6)} req  p50 ${String(w.p50Ms).padStart(6)} ms  p99 ${String(w.p99Ms).padStart(7)} ms  unexpected ${w.unexpected}  frames ${String(w.frames).padStart(7)}  gaps ${w.seqGaps}  heap ${w.heapMb} MB  rss ${w.rssMb} MB`;

console.log(`soak: ${minutes} min at ${rate} ops/s with ${subscribers} × 2 stream sockets${(globalThis as { gc?: unknown }).gc ? '' : ' (no --expose-gc: heap figures include garbage)'}`);
const only = process.env.SOAK_OPS?.split(',').map((o) => o.trim());
// The bounded in-memory buffers made small, so they are full within the first minutes: a heap that
// still grows after that is a leak, not a buffer filling (docs/reliability.md, "Soak"). The private
// streams' retention above all: the market maker's streams, which nobody reads, take hours to reach
// the default 10,000 updates each.
const env = {
  PERP_EVENT_BUFFER: process.env.PERP_EVENT_BUFFER ?? '10000',
  PERP_RECENT_RESULTS: process.env.PERP_RECENT_RESULTS ?? '10000',
  STREAM_RETAINED: process.env.STREAM_RETAINED ?? '500',
};
const result = await runSoak({ durationMs: minutes * 60_000, windowMs, rate, subscribers, only, env, onWindow: (w) => console.log(line(w)) });
const p99s = result.windows.map((w) => w.p99Ms).sort((a, b) => a - b);
const medianP99 = p99s[Math.floor(p99s.length / 2)] ?? 0;
const lastP99 = result.windows.at(-1)?.p99Ms ?? 0;
const verdict = {
  requests: result.requests,
  unexpected: result.unexpected,
  frames: result.frames,
  seqGaps: result.seqGaps,
  heapFirstMb: result.heapFirstMb,
  heapLastMb: result.heapLastMb,
  heapSlopeMbPerMin: result.heapSlopeMbPerMin,
  medianWindowP99Ms: medianP99,
  lastWindowP99Ms: lastP99,
};
console.log(JSON.stringify(verdict, null, 2));
if (result.samples.length > 0) console.log(`unexpected answers, first ones:\n  ${result.samples.join('\n  ')}`);
const failures = [
  result.unexpected > 0 && `${result.unexpected} unintended answers`,
  result.seqGaps > 0 && `${result.seqGaps} stream seq gaps`,
  result.heapSlopeMbPerMin > maxSlope && `heap grows ${result.heapSlopeMbPerMin} MB/min over the second half (limit ${maxSlope})`,
  medianP99 > 0 && lastP99 > 3 * medianP99 && `the last window's p99 (${lastP99} ms) is over 3× the median window's (${medianP99} ms)`,
].filter(Boolean);
console.log(failures.length === 0 ? 'soak: PASS' : `soak: FAIL\n  ${failures.join('\n  ')}`);
process.exit(failures.length === 0 ? 0 : 1);
