/**
 * An A/B of one setting on the signed order path, as these shared 2-core machines need it: fresh
 * servers of bench/perp-orders-bench.ts (single REST orders, the closed loop), the two values in
 * ABBA order (A B, B A, A B, …) so that neither always runs first, and the result as the paired
 * ratios B ÷ A of server CPU per order with their spread. Identical servers differ here by ±15 % from
 * one minute to the next (docs/performance.md, "Statement journals in memory"), so a change is
 * reported as measured only when every pair's ratio lies on the same side of 1.
 *
 *   npx tsx bench/ab-pairs.ts NAME A B [pairs]     e.g.  npx tsx bench/ab-pairs.ts BENCH_SQLITE_TEMP_STORE file memory 4
 *   (BENCH_AB_ORDERS, default 8 000 orders a server; other BENCH_PERP_* settings pass through)
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The order of the 2×pairs runs: ABBA ABBA …, each pair's first side alternating. */
export function abbaOrder(pairs: number): Array<'A' | 'B'> {
  const out: Array<'A' | 'B'> = [];
  for (let i = 0; i < pairs; i++) out.push(...(i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)));
  return out;
}

export interface PairsSummary {
  ratios: number[];
  geometricMean: number;
  min: number;
  max: number;
  /** Every ratio below 1 (B cheaper), above 1 (B dearer), or neither. */
  verdict: 'B cheaper' | 'B dearer' | 'within the noise';
}

/** B ÷ A for each pair of CPU figures, in run order. */
export function summarisePairs(a: readonly number[], b: readonly number[]): PairsSummary {
  if (a.length !== b.length || a.length === 0) throw new Error('ab-pairs: needs as many A figures as B figures, at least one');
  const ratios = a.map((x, i) => b[i] / x);
  const geometricMean = Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length);
  const min = Math.min(...ratios);
  const max = Math.max(...ratios);
  const verdict = max < 1 ? 'B cheaper' : min > 1 ? 'B dearer' : 'within the noise';
  return { ratios, geometricMean, min, max, verdict };
}

/** The server CPU per order a perp-orders bench run printed, in µs. */
export function cpuPerOrder(output: string): number | undefined {
  const m = /server CPU per order \(user \+ system, all threads\) \| (\d+(?:\.\d+)?) µs/.exec(output);
  return m ? Number(m[1]) : undefined;
}

function runServer(name: string, value: string, orders: number): number {
  const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(HERE, 'perp-orders-bench.ts')], {
    env: { ...process.env, [name]: value, BENCH_PERP_ORDERS: String(orders), BENCH_PERP_ENTRY: '', BENCH_PERP_PROJECTOR_AB: 'off', BENCH_PERP_METRICS: 'off' },
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const cpu = cpuPerOrder(res.stdout ?? '');
  if (res.status !== 0 || cpu === undefined) throw new Error(`ab-pairs: the bench with ${name}=${value} failed (exit ${res.status}): ${(res.stderr ?? '').slice(-2000)}`);
  return cpu;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [name, valueA, valueB, pairsText] = process.argv.slice(2);
  if (!name || valueA === undefined || valueB === undefined) {
    console.error('usage: npx tsx bench/ab-pairs.ts NAME A B [pairs]');
    process.exit(2);
  }
  const pairs = Number(pairsText ?? 4);
  const orders = Number(process.env.BENCH_AB_ORDERS ?? 8_000);
  const a: number[] = [];
  const b: number[] = [];
  console.log(`| run | ${name} | server CPU an order | load average |`);
  console.log('| ---: | --- | ---: | ---: |');
  abbaOrder(pairs).forEach((side, i) => {
    const value = side === 'A' ? valueA : valueB;
    const cpu = runServer(name, value, orders);
    (side === 'A' ? a : b).push(cpu);
    console.log(`| ${i + 1} | ${value} | ${cpu} µs | ${os.loadavg()[0].toFixed(2)} |`);
  });
  const s = summarisePairs(a, b);
  console.log(`\n${valueB} ÷ ${valueA}, pair by pair: ${s.ratios.map((r) => r.toFixed(2)).join(', ')}; geometric mean ${s.geometricMean.toFixed(3)}, range ${s.min.toFixed(2)}–${s.max.toFixed(2)}: ${s.verdict}`);
}
