/**
 * What a signed order allocates, by site: reads the heap profiles `BENCH_PERP_HEAP=1
 * BENCH_PERP_PROF=<dir>` leaves (bench/perp-orders-bench.ts; V8's sampling heap profiler counting
 * collected objects too, cpu-profile.ts `startHeapSampling`) and prints bytes per order, by the
 * allocating function (self) and by the path's parts whose frames are on the stack (inclusive).
 *
 *   npx tsx bench/heap-sampling-summary.ts <dir> [name ...]
 */
import fs from 'node:fs';
import path from 'node:path';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const short = (url: string) => url.replace(/^file:\/\/.*?\/(src|node_modules|bench|packages)\//, '$1/');

export function summariseHeap(dir: string, name: string, top = 40): string {
  const profile = JSON.parse(fs.readFileSync(path.join(dir, `${name}.heapprofile`), 'utf8')) as { head: HeapNode };
  const orders = Number(fs.readFileSync(path.join(dir, `${name}.orders`), 'utf8'));
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const walk = (n: HeapNode, stack: string[]) => {
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${short(f.url)}:${f.lineNumber + 1}`;
    const file = short(f.url) || '(native)';
    const here = stack.includes(file) ? stack : [...stack, file];
    if (n.selfSize > 0) {
      total += n.selfSize;
      self.set(key, (self.get(key) ?? 0) + n.selfSize);
      for (const s of here) inclusive.set(s, (inclusive.get(s) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c, here);
  };
  walk(profile.head, []);
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `| ${k} | ${(v / orders).toFixed(0)} |`)
      .join('\n');
  return [
    `### ${name}: ${(total / orders / 1024).toFixed(1)} KiB allocated an order (${orders} orders)`,
    '',
    '| allocating function (self) | bytes an order |',
    '| --- | ---: |',
    rows(self),
    '',
    '| file on the stack (inclusive) | bytes an order |',
    '| --- | ---: |',
    rows(inclusive),
  ].join('\n');
}

const [dir, ...names] = process.argv.slice(2);
if (!dir) {
  console.error('usage: npx tsx bench/heap-sampling-summary.ts <dir> [name ...]');
  process.exit(2);
}
const list = names.length > 0 ? names : fs.readdirSync(dir).filter((f) => f.endsWith('.heapprofile')).map((f) => f.replace(/\.heapprofile$/, ''));
for (const n of list) console.log(`${summariseHeap(dir, n)}\n`);
