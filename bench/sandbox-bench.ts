/**
 * The sandbox's speed (issue 61) against its baseline, a fresh venue: `npm start` on an empty data
 * directory to its banner (what `tokex demo reset` and a start cost an integrator today), a start
 * of the same seeded directory again, a snapshot and its reverts with trading between them, a reset,
 * and a clock advance of 30 days with a perpetual position open.
 * Each venue is a child process started as a user starts it (bin/tokex.mjs start).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpClient } from '@tokex/sdk';

const BIN = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'bin', 'tokex.mjs');

interface Venue {
  child: ChildProcess;
  demo: any;
  startMs: number;
}

/** Starts the embedded stack on `dataDir` and waits for its banner; answers the time it took. */
async function start(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Venue> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn', ...extraEnv };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'RPC_URL']) delete env[k];
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (out.includes('tokex all running')) done();
      else if (child.exitCode !== null) done(new Error(`tokex start exited ${child.exitCode}:\n${out.slice(-2000)}`));
    }, 20);
    const done = (err?: Error) => {
      clearInterval(check);
      if (err) reject(err);
      else resolve();
    };
  });
  const startMs = performance.now() - t0;
  return { child, startMs, demo: JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) };
}

async function stop(v: Venue): Promise<void> {
  const exited = new Promise((r) => v.child.once('exit', r));
  v.child.kill('SIGINT');
  await exited;
}

async function sandbox(v: Venue, route: string, body: unknown): Promise<any> {
  const res = await fetch(`${v.demo.sandbox.baseUrl}${route}`, { method: 'POST', headers: { authorization: `Bearer ${v.demo.sandbox.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { data: unknown; errMsg?: string };
  if (res.status !== 200) throw new Error(`${route}: ${res.status} ${json.errMsg}`);
  return json.data;
}

export interface SandboxBenchResult {
  freshStartMs: number;
  /** A cold start as the test kit's startVenue() makes one: an empty data directory, its week of history. */
  kitColdStartMs: number;
  kitHistoryDays: number;
  restartMs: number;
  advanceDays: number;
  advanceMs: number;
  steps: number;
  /** Where the advance's time went, by task, ms. */
  ran: Array<{ name: string; ms: number }>;
  chainMs: number;
  /** POST /snapshots once, then POST /snapshots/{id}/revert after trading, each time, ms. */
  snapshotMs: number;
  revertMs: number[];
  resetMs: number;
}

export function sandboxMedian(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export async function runSandboxBench(opts: { days: number; reverts: number; kitHistoryDays: number; log: (line: string) => void }): Promise<SandboxBenchResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-bench-sandbox-'));
  const kitDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-bench-kit-'));
  try {
    let v = await start(dataDir);
    const freshStartMs = v.startMs;
    await stop(v);
    // The test kit's cold start: the same start with the kit's HISTORY_DAYS (packages/testkit, startVenue()).
    const kit = await start(kitDir, { HISTORY_DAYS: String(opts.kitHistoryDays) });
    const kitColdStartMs = kit.startMs;
    await stop(kit);
    v = await start(dataDir);
    const restartMs = v.startMs;
    try {
      const trader = new PerpClient({ baseUrl: v.demo.perp.baseUrl, chainId: v.demo.chainId, apiKey: v.demo.perp.keys.trader.apiKey, apiSecret: v.demo.perp.keys.trader.apiSecret });
      for (;;) {
        const [t] = await trader.getTickers({ symbol: 'BTC-USD' });
        if (Number(t.markPrice) > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const account = privateKeyToAccount(v.demo.wallets[0].privateKey);
      // Reverts of the seeded venue with some trading on it: a snapshot, then each round a market
      // order, a resting order and a mint, and the revert (its own answer's time and the client's).
      let t = performance.now();
      const snap = await sandbox(v, '/snapshots', {});
      const snapshotMs = performance.now() - t;
      const revertMs: number[] = [];
      for (let i = 0; i < opts.reverts; i++) {
        await trader.placeOrder(account, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.01' });
        await trader.placeOrder(account, { symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', size: '0.01', price: '50000' });
        await sandbox(v, '/fund', { address: v.demo.wallets[3].address, asset: 'USDC', amount: '10' });
        t = performance.now();
        await sandbox(v, `/snapshots/${snap.id}/revert`, {});
        revertMs.push(performance.now() - t);
      }
      opts.log(`snapshot ${snapshotMs.toFixed(0)} ms; reverts ${revertMs.map((x) => x.toFixed(0)).join(', ')} ms`);
      t = performance.now();
      await sandbox(v, '/reset', {});
      const resetMs = performance.now() - t;
      for (;;) {
        const [tk] = await trader.getTickers({ symbol: 'BTC-USD' });
        if (Number(tk.markPrice) > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await trader.placeOrder(account, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.01' });
      const t0 = performance.now();
      const a = await sandbox(v, '/clock/advance', { seconds: opts.days * 86_400 });
      const advanceMs = performance.now() - t0;
      opts.log(`advance ${opts.days} d: ${advanceMs.toFixed(0)} ms, ${a.steps} steps; chain ${a.chainMs} ms; ${a.ran.map((r: any) => `${r.name} ${r.ms} ms`).join(', ')}`);
      return { freshStartMs, kitColdStartMs, kitHistoryDays: opts.kitHistoryDays, restartMs, advanceDays: opts.days, advanceMs, steps: a.steps, chainMs: a.chainMs, ran: a.ran.map((r: any) => ({ name: r.name, ms: r.ms })), snapshotMs, revertMs, resetMs };
    } finally {
      await stop(v);
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(kitDir, { recursive: true, force: true });
  }
}
