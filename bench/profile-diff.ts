/**
 * Two sets of CPU profiles of the same requests side by side, µs per request by function (or by
 * file, or by package): which code a change made dearer. Each set is every
 * `<dir>/<prefix>.p*.cpuprofile` with its request count in the `.requests` file beside it (as
 * bench/run-bench.ts and bench/stock-ab-bench.ts write them under BENCH_CPU_PROF=1); a sample is
 * charged to its leaf frame (self time), `(idle)` is left out.
 *
 *   npx tsx bench/profile-diff.ts <dirA> <prefixA> <dirB> <prefixB> [function|file|package] [rows]
 *   e.g. npx tsx bench/profile-diff.ts bench-profiles/ab A-price bench-profiles/ab B-price file 30
 *
 * The profiler's sampling (200 µs) over a few seconds of one process gives each row a noise of a
 * few tenths of a µs; the rows that move by more than that across runs are the change's.
 */
import fs from 'node:fs';
import path from 'node:path';

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}
type Mode = 'function' | 'file' | 'package';

function keyOf(frame: { functionName: string; url: string }, mode: Mode): string {
  const u = frame.url.replace(/^file:\/\//, '').replace(/^.*?\/(src|bench|packages|node_modules)\//, '$1/');
  const fn = frame.functionName || '(anonymous)';
  if (u === '') return fn.startsWith('(') ? fn : `(native) ${mode === 'function' ? fn : ''}`.trim();
  if (mode === 'function') return `${fn} ${u}`;
  if (mode === 'file') return u;
  const m = u.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (m) return m[1];
  if (u.startsWith('node:')) return u.split('/').slice(0, 3).join('/');
  return u.split('/').slice(0, 2).join('/');
}

/** µs per request by key over every profile of the set, and the requests they served. */
export function loadProfiles(dir: string, prefix: string, mode: Mode): { usPerRequest: Map<string, number>; requests: number; files: number } {
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(prefix + '.p') && f.endsWith('.cpuprofile'));
  const total = new Map<string, number>();
  let requests = 0;
  for (const f of files) {
    const p = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Profile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    requests += Number(fs.readFileSync(path.join(dir, f.replace(/\.cpuprofile$/, '.requests')), 'utf8'));
    p.samples.forEach((s, i) => {
      const k = keyOf(byId.get(s)!.callFrame, mode);
      total.set(k, (total.get(k) ?? 0) + (p.timeDeltas[i] ?? 0));
    });
  }
  total.delete('(idle)');
  const usPerRequest = new Map<string, number>();
  for (const [k, v] of total) usPerRequest.set(k, v / Math.max(1, requests));
  return { usPerRequest, requests, files: files.length };
}

const [dirA, prefixA, dirB, prefixB, mode = 'file', rows = '30'] = process.argv.slice(2);
if (!prefixB) {
  console.error('usage: npx tsx bench/profile-diff.ts <dirA> <prefixA> <dirB> <prefixB> [function|file|package] [rows]');
  process.exit(2);
}
const a = loadProfiles(dirA, prefixA, mode as Mode);
const b = loadProfiles(dirB, prefixB, mode as Mode);
const sum = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
console.log(`A ${prefixA}: ${a.files} profiles, ${a.requests} requests, ${sum(a.usPerRequest).toFixed(1)} µs sampled a request`);
console.log(`B ${prefixB}: ${b.files} profiles, ${b.requests} requests, ${sum(b.usPerRequest).toFixed(1)} µs sampled a request`);
const keys = [...new Set([...a.usPerRequest.keys(), ...b.usPerRequest.keys()])];
const table = keys
  .map((k) => ({ k, a: a.usPerRequest.get(k) ?? 0, b: b.usPerRequest.get(k) ?? 0 }))
  .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a))
  .slice(0, Number(rows));
console.log('     A µs     B µs   B − A');
for (const r of table) console.log(`${r.a.toFixed(2).padStart(9)}${r.b.toFixed(2).padStart(9)}${((r.b >= r.a ? '+' : '') + (r.b - r.a).toFixed(2)).padStart(8)}  ${r.k}`);
