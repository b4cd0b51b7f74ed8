/**
 * The newcomer's first start on a busy machine (issue 27): `npm start` on a fresh data directory
 * while two other processes keep both cores busy for its first 30 s. The history seed (30 days,
 * ~390,000 candles) then took longer than half the lease TTL in one synchronous transaction, the
 * market-data role lost its lease and waited for itself for ever: every price froze 7 s after
 * start. After the load (45 s after the start; two minutes with FRESH_START_CHECK_AFTER_MS=120000)
 * the stock quotes, the perpetual index and mark, and the stock quotes stream must still move, and
 * both APIs must say they are ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { PerpClient, StockClient } from '@tokex/sdk';
import { openSocket } from '../support/ws-client.ts';

const LOAD_MS = 30_000;
// The freeze came 7 s after the start and lasted for ever: a check 15 s after the load ends (and
// well after the seed's 7 s) sees it. FRESH_START_CHECK_AFTER_MS=120000 is the original two minutes.
const CHECK_AFTER_MS = Number(process.env.FRESH_START_CHECK_AFTER_MS ?? LOAD_MS + 15_000);
const children: ChildProcess[] = [];
let out = '';
let dataDir: string | undefined;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  const npm = children.find((c) => c.spawnargs.includes('start'));
  if (npm && npm.exitCode === null) {
    const exited = new Promise((r) => npm.once('exit', r));
    const killer = setTimeout(() => npm.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  }
  // 40 MB of history and a chain state: not left behind in the temporary folder.
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** One process spinning a core until `ms` have passed. */
function burnCore(ms: number): ChildProcess {
  const c = spawn(process.execPath, ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end) {}`], { stdio: 'ignore' });
  children.push(c);
  return c;
}

async function waitFor<T>(what: string, look: () => T | undefined | Promise<T | undefined>, limitMs: number): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms\n${out.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a fresh npm start on a busy machine keeps its quotes, index, mark and quotes stream moving once the load is over', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-fresh-load-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info' };
  // A newcomer's machine: SQLite and the embedded anvil, nothing shared.
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'RPC_URL', 'HISTORY_DAYS', 'LEASE_TTL_MS', 'MARKETDATA_TICK_MS']) delete env[k];

  // Both cores busy from before the start, for its first 30 s.
  burnCore(LOAD_MS);
  burnCore(LOAD_MS);
  const startedAt = Date.now();
  const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(npm);
  npm.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  npm.once('exit', (code) => (out += `\n[npm exited with ${code}]`));

  const demoFile = path.join(dataDir, 'demo.json');
  await waitFor('the banner', () => (out.includes('tokex all running') && fs.existsSync(demoFile) ? true : undefined), 240_000);
  const demo = JSON.parse(fs.readFileSync(demoFile, 'utf8'));
  const stock = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.readOnly });
  const perp = new PerpClient({ baseUrl: demo.perp.baseUrl, chainId: demo.chainId, apiKey: demo.perp.keys.trader.apiKey, apiSecret: demo.perp.keys.trader.apiSecret });

  // A fixed wait on purpose: the claim is about the stack after its busy start (the freeze came 7 s
  // after it and lasted for ever), so that time must pass; no state to poll for stands in.
  await sleep(Math.max(0, startedAt + CHECK_AFTER_MS - Date.now()));

  // Stock quotes: a later read carries a later quote, made after this check began (moving now, not
  // a frozen one; no age figure, which a busy machine's slow reads would stretch).
  const checkAt = Date.now();
  const q1 = await stock.getPrice('AAPL');
  await waitFor('an AAPL quote newer than the last one and than the check', async () => {
    const q = await stock.getPrice('AAPL');
    return q.timestamp > q1.timestamp && q.timestamp > checkAt ? q : undefined;
  }, 30_000);

  // The perpetual index and mark: both change within seconds (the simulator walks every second).
  const t1 = (await perp.getTickers({ symbol: 'BTC-USD' }))[0];
  await waitFor('BTC-USD index and mark to move', async () => {
    const t = (await perp.getTickers({ symbol: 'BTC-USD' }))[0];
    return t.indexPrice !== t1.indexPrice && t.markPrice !== t1.markPrice ? t : undefined;
  }, 20_000);

  // The stock quotes stream: updates keep arriving.
  const s = await openSocket(demo.stock.wsUrl);
  try {
    s.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
    const snap = await s.next((f) => f.type === 'subscribed');
    const first = await s.next((f) => f.type === 'update', { timeoutMs: 10_000 });
    const second = await s.next((f) => f.type === 'update' && f.seq! > first.seq!, { timeoutMs: 10_000 });
    expect(second.data.timestamp).toBeGreaterThan(snap.data.timestamp);
  } finally {
    s.close();
  }

  // And the stack says so: both APIs ready, every role fresh, no lease lost on the way.
  for (const base of [new URL(demo.stock.baseUrl).origin, demo.perp.baseUrl]) {
    const res = await fetch(`${base}/readyz`);
    const body = (await res.json()) as { data: { status: string } };
    expect({ base, status: res.status, ready: body.data.status }).toEqual({ base, status: 200, ready: 'ready' });
  }
  expect(out).not.toContain('lease lost');
}, 420_000);
