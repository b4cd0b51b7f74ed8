/**
 * Where a server's event loop went without a break: reads a CPU profile (`BENCH_LATENCY_PROF` or
 * `BENCH_PERP_PROF` leave them) and lists its busy stretches, runs of samples with no `(idle)` one
 * between them. A request that arrives during a stretch waits for its end, so the long stretches
 * are what a latency percentile queues behind. Prints how many stretches passed 1, 2, 5 … 100 ms
 * and, for the longest, the stacks most of their samples were in.
 *
 *   npx tsx bench/profile-stalls.ts <file.cpuprofile> [min ms, default 10] [stretches shown, default 8]
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Stretch {
  /** µs of samples in it. */
  us: number;
  /** Node ids of its samples. */
  samples: number[];
}

/** The profile's busy stretches, in time order. */
export function busyStretches(p: Profile): Stretch[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out: Stretch[] = [];
  let cur: Stretch | undefined;
  p.samples.forEach((s, i) => {
    if (byId.get(s)?.callFrame.functionName === '(idle)') {
      if (cur) out.push(cur);
      cur = undefined;
      return;
    }
    cur ??= { us: 0, samples: [] };
    cur.us += p.timeDeltas[i] ?? 0;
    cur.samples.push(s);
  });
  if (cur) out.push(cur);
  return out;
}

function main(file: string, minMs: number, shown: number): void {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frames = (id: number): string[] => {
    const out: string[] = [];
    for (let i: number | undefined = id; i !== undefined; i = parent.get(i)) {
      const f = byId.get(i)!.callFrame;
      out.push(`${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')}:${f.lineNumber}`);
    }
    return out;
  };
  const stretches = busyStretches(p);
  const busy = stretches.reduce((a, r) => a + r.us, 0);
  console.log(`${stretches.length} busy stretches, ${(busy / 1000).toFixed(0)} ms busy in all`);
  console.log([1, 2, 5, 10, 20, 50, 100].map((ms) => `≥ ${ms} ms: ${stretches.filter((r) => r.us >= ms * 1000).length}`).join(', '));
  const long = stretches.filter((r) => r.us >= minMs * 1000).sort((a, b) => b.us - a.us);
  for (const r of long.slice(0, shown)) {
    const count = new Map<string, number>();
    for (const s of r.samples) {
      const key = frames(s).slice(0, 5).join(' < ');
      count.set(key, (count.get(key) ?? 0) + 1);
    }
    console.log(`\n${(r.us / 1000).toFixed(1)} ms, ${r.samples.length} samples:`);
    for (const [k, c] of [...count.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(`  ${c}  ${k}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, minMs, shown] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/profile-stalls.ts <file.cpuprofile> [min ms] [stretches shown]');
    process.exit(2);
  }
  main(file, Number(minMs ?? 10), Number(shown ?? 8));
}
