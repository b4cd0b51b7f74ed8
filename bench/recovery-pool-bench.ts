/**
 * Issue 40, item 6: signature recovery on worker threads (SIGNATURE_WORKERS,
 * src/chain/signature-recovery-pool.ts) against recovery on the order thread, in one run, on the
 * perp-orders bench's server (one process, SQLite with synchronous = FULL, production logging).
 *
 * The load client (this process: autocannon and the WebSocket clients) is pinned to core 1 with
 * `taskset`, so that what the server may use is known. Each figure is a fresh server started
 * through taskset on
 * - one core (core 0): the single-core case. `auto` starts no worker there; the pool is forced
 *   (SIGNATURE_WORKERS=1) to show what it costs when no core is free for it (target: pool on ÷ off
 *   ≥ 0.95 in orders/s);
 * - both cores (0,1): what the second core adds, which it shares with the client.
 * For each: single REST orders (32 connections), batches of 20 (16 connections) and WebSocket place
 * frames (32 connections, 8 in flight), pool off (SIGNATURE_WORKERS=0) and on, alternating which
 * goes first, BENCH_POOL_ROUNDS (default 2) rounds, so that the ranges show the machine's noise.
 *
 * Before the servers, in this process: the calling thread's busy time per recovery through the pool
 * in batches of 1, 20 and 200, against recovering inline (what a message to a worker costs and saves).
 *
 *   BENCH_ONLY=recovery-pool npm run bench     (BENCH_POOL_ROUNDS, BENCH_POOL_ORDERS, BENCH_POOL_ENTRY_ORDERS, BENCH_POOL_WAYS=single,batch,ws)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { bytesToHex, type Hex } from 'viem';
import { SignatureRecoveryPool } from '../src/chain/signature-recovery-pool.ts';
import { recoverSigner } from '../src/chain/signature-recovery.ts';
import {
  batchesOf, childUsage, makeWallets, sendBatches, sendFrames, sendOrders, signOrders, startChild, stopChild,
  type ServerChild, type SignedOrder,
} from './perp-orders-bench.ts';

type Way = 'single' | 'batch' | 'ws';

interface Figure {
  way: Way;
  cores: string;
  workers: number;
  round: number;
  perSec: number;
  cpuUsPerOrder: number;
  loopUsPerOrder: number;
  p99Ms: number;
  refused: number;
  load: number;
}

export interface RecoveryPoolBenchResult {
  figures: Figure[];
  table: string;
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of process `pid` to `cpus` (a taskset list). */
function pin(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** µs of this thread's busy time per recovery: inline, and through a one-worker pool in batches of `b`. */
async function callingThreadCost(): Promise<string[]> {
  const native = createRequire(import.meta.url)('secp256k1/bindings') as { ecdsaSign(m: Uint8Array, k: Uint8Array): { signature: Uint8Array; recid: number } };
  const key = randomBytes(32);
  const n = 4_000;
  const cases = Array.from({ length: n }, () => {
    const d = randomBytes(32);
    const { signature, recid } = native.ecdsaSign(d, key);
    return { digest: bytesToHex(d), signature: `${bytesToHex(signature)}${(27 + recid).toString(16)}` as Hex };
  });
  const busy = async (f: () => Promise<void>) => {
    const e0 = performance.eventLoopUtilization();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await f();
    const e = performance.eventLoopUtilization(e0);
    const c = process.cpuUsage(c0);
    return { busyUs: (e.active * 1000) / n, wallUs: ((performance.now() - t0) * 1000) / n, cpuUs: (c.user + c.system) / n };
  };
  const rows: string[] = [];
  const inline = [];
  for (let r = 0; r < 3; r++) {
    inline.push(
      await busy(async () => {
        for (let i = 0; i < n; i += 20) {
          await new Promise((res) => setImmediate(res));
          for (const c of cases.slice(i, i + 20)) recoverSigner(c.digest, c.signature);
        }
      }),
    );
  }
  const best = (xs: Array<{ busyUs: number; wallUs: number }>) => xs.reduce((a, b) => (b.busyUs < a.busyUs ? b : a));
  const range = (xs: Array<{ busyUs: number; cpuUs: number }>, k: 'busyUs' | 'cpuUs' = 'busyUs') => `${Math.min(...xs.map((x) => x[k])).toFixed(1)}–${Math.max(...xs.map((x) => x[k])).toFixed(1)}`;
  rows.push(`| recovered on the calling thread | ${range(inline)} µs | ${range(inline, 'cpuUs')} µs | ${best(inline).wallUs.toFixed(1)} µs |`);
  const pool = new SignatureRecoveryPool({ workers: 1 });
  await pool.whenReady();
  try {
    for (const b of [1, 20, 200]) {
      const runs = [];
      for (let r = 0; r < 3; r++) {
        runs.push(
          await busy(async () => {
            for (let i = 0; i < n; i += b) await Promise.all(cases.slice(i, i + b).map((c) => pool.recover(c.digest, c.signature)));
          }),
        );
      }
      rows.push(`| through a one-worker pool, batches of ${b} | ${range(runs)} µs | ${range(runs, 'cpuUs')} µs | ${best(runs).wallUs.toFixed(1)} µs |`);
    }
  } finally {
    await pool.close();
  }
  return rows;
}

export async function runRecoveryPoolBench(): Promise<RecoveryPoolBenchResult> {
  const rounds = Math.max(1, Number(process.env.BENCH_POOL_ROUNDS ?? 2));
  const orders = Number(process.env.BENCH_POOL_ORDERS ?? 3_000);
  const entryOrders = Number(process.env.BENCH_POOL_ENTRY_ORDERS ?? 8_000);
  const warm = 1_000;
  const ways = (process.env.BENCH_POOL_WAYS ?? 'single,batch,ws').split(',').filter((w): w is Way => w === 'single' || w === 'batch' || w === 'ws');
  const walletCount = 16;
  const cores = os.availableParallelism();
  const taskset = hasTaskset();
  if (!taskset || cores < 2) {
    return { figures: [], table: `recovery pool bench: needs taskset and 2 cores (taskset ${taskset ? 'found' : 'missing'}, ${cores} cores); skipped` };
  }
  const costRows = await callingThreadCost();
  const wallets = makeWallets(walletCount);
  const signed = await signOrders(wallets, warm + Math.max(orders, entryOrders));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-pool-bench-'));
  const master = randomBytes(32).toString('hex');
  const figures: Figure[] = [];
  const mine = [...Array(cores).keys()].join(',');
  // The client on core 1 (every thread of this process); servers forked from here are pinned by startChild.
  pin(process.pid, '1');
  let n = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      for (const way of ways) {
        for (const serverCores of ['0', '0,1']) {
          const order = (round + (serverCores === '0' ? 0 : 1)) % 2 === 0 ? [0, 1] : [1, 0];
          for (const workers of order) {
            const env: Record<string, string> = { SIGNATURE_WORKERS: String(workers), ...(way === 'ws' ? { BENCH_PERP_WS: 'on' } : {}) };
            const server = await startChild(['server', path.join(dir, `s${n++}.sqlite`), '-', ...wallets.map((w) => w.address)], master, env, serverCores);
            try {
              figures.push({ way, cores: serverCores, workers, round, ...(await measure(way, server, signed, walletCount, warm, way === 'single' ? orders : entryOrders)) });
            } finally {
              await stopChild(server.child);
            }
          }
        }
      }
    }
  } finally {
    pin(process.pid, mine);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { figures, table: tableOf(figures, costRows, rounds) };
}

async function measure(way: Way, server: ServerChild, signed: SignedOrder[], wallets: number, warm: number, orders: number) {
  const { keys, url } = server.ready;
  const send = async (l: SignedOrder[]) => {
    if (way === 'single') return { ...(await sendOrders(l, url, keys, 32)), p99: Number.NaN };
    if (way === 'batch') return sendBatches(batchesOf(l, wallets, 20), url, keys, 16);
    return sendFrames(l, server.ready.wsUrl!, keys, wallets, 32, 8);
  };
  const w = await send(signed.slice(0, warm));
  if (w.refused > 0) throw new Error(`recovery pool bench: ${w.refused} warm-up orders refused`);
  const u0 = await childUsage(server.child);
  const r = await send(signed.slice(warm, warm + orders));
  const u1 = await childUsage(server.child);
  return {
    perSec: orders / r.seconds,
    cpuUsPerOrder: (u1.us - u0.us) / orders,
    loopUsPerOrder: ((u1.activeMs - u0.activeMs) * 1000) / orders,
    p99Ms: r.p99,
    refused: r.refused,
    load: os.loadavg()[0],
  };
}

function tableOf(figures: Figure[], costRows: string[], rounds: number): string {
  const name = { single: 'single REST orders', batch: 'batches of 20', ws: 'WebSocket orders' } as const;
  const where = (c: string) => (c === '0' ? 'server on one core' : 'server on both cores');
  const fmt = (xs: number[], d = 0) => (xs.length === 0 ? '–' : Math.min(...xs) === Math.max(...xs) ? xs[0].toFixed(d) : `${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)}`);
  const rows: string[] = [];
  const ratios: string[] = [];
  for (const way of ['single', 'batch', 'ws'] as const) {
    for (const cores of ['0', '0,1']) {
      const of = (workers: number) => figures.filter((f) => f.way === way && f.cores === cores && f.workers === workers);
      const off = of(0);
      const on = of(1);
      if (off.length === 0) continue;
      for (const [label, fs_] of [['pool off (SIGNATURE_WORKERS=0)', off], ['pool on (SIGNATURE_WORKERS=1)', on]] as const) {
        rows.push(
          `| ${name[way]}, ${where(cores)}, ${label} | ${fmt(fs_.map((f) => f.perSec))}/s | ${fmt(fs_.map((f) => f.cpuUsPerOrder))} µs | ${fmt(fs_.map((f) => f.loopUsPerOrder))} µs | ${fmt(fs_.map((f) => f.p99Ms).filter((x) => !Number.isNaN(x)), 1)} ms | ${fs_.reduce((a, f) => a + f.refused, 0)} | ${fmt(fs_.map((f) => f.load), 1)} |`,
        );
      }
      // Each round's on ÷ off (the two servers of a round ran back to back).
      const perRound = [...Array(rounds).keys()].flatMap((r) => {
        const a = off.find((f) => f.round === r);
        const b = on.find((f) => f.round === r);
        return a && b ? [b.perSec / a.perSec] : [];
      });
      const what = cores === '0' ? 'the single-core case: pool on ÷ off, orders/s (target ≥ 0.95)' : 'what the second core adds: pool on ÷ off, orders/s';
      ratios.push(`| ${name[way]}: ${what} | **${fmt(perRound, 2)}** (rounds: ${perRound.map((x) => x.toFixed(2)).join(', ')}) |`);
    }
  }
  return [
    'the calling thread\'s busy time per recovery (4,000 signatures, 3 rounds; event-loop busy time, so the worker\'s own time is not in it) and the process\'s CPU per recovery (every thread, the worker\'s included):',
    '',
    '| way | calling thread busy per recovery (range) | process CPU per recovery, all threads (range) | wall time per recovery (best round) |',
    '| --- | ---: | ---: | ---: |',
    ...costRows,
    '',
    `signed perp orders, the load client pinned to core 1, each figure a fresh server; ${rounds} round(s), ranges over the rounds:`,
    '',
    '| figure | orders/s | server CPU per order (all threads) | order thread busy per order | p99 | refused | load average |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    '| ratio | value |',
    '| --- | ---: |',
    ...ratios,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log((await runRecoveryPoolBench()).table);
}
