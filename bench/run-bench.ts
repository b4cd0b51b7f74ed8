/**
 * `npm run bench`: load against 127.0.0.1 with autocannon, one run, one machine. For each target it
 * prints requests/s, p50/p99 latency and the server process's own CPU time per request, each as a
 * ratio to the bare Fastify route measured in the same run. On a 2-core machine the load generator
 * saturates its core first, so server CPU per request is the figure that counts.
 *
 * Then, each on a fresh anvil: the indexer's catch-up over BENCH_INDEXER_EVENTS router events
 * (default 50 000) next to the raw eth_getLogs + JSON parse ceiling of the same ranges, and the
 * executor's settlement throughput over BENCH_ORDERS orders (default 5 000). BENCH_ONLY=http,
 * indexer or executor runs one part.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import autocannon from 'autocannon';
import { StockClient } from '../src/sdk/stock-client.ts';
import type { DemoFile } from '../src/app/stack.ts';
import { runExecutorBench } from './executor-bench.ts';
import { runIndexerBench } from './indexer-bench.ts';

/** Seconds per measured round. */
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
/** Rounds per target, each between two rounds of the bare route. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

interface Server {
  child: ChildProcess;
  url: string;
  demo?: DemoFile;
  unbound?: { apiKey: string; apiSecret: string };
  dataDir?: string;
  rpcUrl?: string;
}

function startServer(mode: 'bare' | 'stack' | 'api', env: Record<string, string> = {}): Promise<Server> {
  const child = fork(new URL('./bench-server.ts', import.meta.url).pathname, [mode], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...env },
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    child.on('message', (m: any) => {
      if (m?.ready) resolve({ child, url: m.url, demo: m.demo, unbound: m.unbound, dataDir: m.dataDir, rpcUrl: m.rpcUrl });
    });
  });
}

/**
 * BENCH_CPU_PROF=1: a V8 CPU profile of the server over one target's measured rounds, written to
 * bench-profiles/<slug>.cpuprofile with the request count beside it, so time per request can be
 * read off each function.
 */
const PROFILE = Boolean(process.env.BENCH_CPU_PROF);
function profile(server: Server, msg: { profile: 'start' | 'stop'; file?: string }): Promise<void> {
  if (!PROFILE) return Promise.resolve();
  return new Promise((resolve) => {
    const onMsg = (m: any) => {
      if (m?.profiled === msg.profile) {
        server.child.off('message', onMsg);
        resolve();
      }
    };
    server.child.on('message', onMsg);
    server.child.send(msg);
  });
}

function cpuOf(child: ChildProcess): Promise<{ user: number; system: number }> {
  return new Promise((resolve) => {
    const onMsg = (m: any) => {
      if (m?.cpu) {
        child.off('message', onMsg);
        resolve(m.cpu);
      }
    };
    child.on('message', onMsg);
    child.send('cpu');
  });
}

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq: number;
  requests: number;
  /** Of which in the kernel (system time). */
  sysUsPerReq: number;
  errors: number;
}

/** Options for `count` requests; signed targets sign that many ahead of time (see `signed`). */
type Load = autocannon.Options | ((count: number) => autocannon.Options);
/** Requests signed ahead per second of load: above what any target reaches here. */
const PRESIGN_PER_SECOND = 20_000;

async function measure(name: string, server: Server, load: Load, warmUp = false): Promise<Result> {
  const opts = (seconds: number) => (typeof load === 'function' ? load(seconds * PRESIGN_PER_SECOND) : load);
  // Warm-up: JIT, connection pools and caches.
  if (warmUp) await autocannon({ ...opts(2), duration: 2, connections: CONNECTIONS });
  const run = opts(DURATION);
  const cpu0 = await cpuOf(server.child);
  const r = await autocannon({ ...run, duration: DURATION, connections: CONNECTIONS });
  const cpu1 = await cpuOf(server.child);
  const total = r.requests.total;
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: total,
    cpuUsPerReq: (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / Math.max(1, total),
    sysUsPerReq: (cpu1.system - cpu0.system) / Math.max(1, total),
    errors: r.errors + r.non2xx,
  };
}

/**
 * A signed target. Each request needs a fresh nonce, so the load generator signs every one; it signs
 * them ahead of the run (each stays valid for the 45 s window, longer than a run) so that signing
 * does not make the generator, which shares this 2-core machine, the bottleneck of the server it
 * measures. Past the pre-signed supply it signs on the fly.
 */
function signed(client: StockClient, base: string, method: 'GET' | 'POST', path: string, opts: { query?: Record<string, string>; body?: unknown } = {}): Load {
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const one = () => {
    const s = client.sign(method, path, { query: opts.query, body });
    const url = new URL(s.url);
    return { method, path: url.pathname + url.search, headers: s.headers, body };
  };
  return (count: number) => {
    const ahead = Array.from({ length: count }, one);
    let next = 0;
    return {
      url: base,
      requests: [{ method, setupRequest: (req: any) => ({ ...req, ...(next < ahead.length ? ahead[next++] : one()) }) }],
    } as autocannon.Options;
  };
}

const only = process.env.BENCH_ONLY;

async function httpBench(): Promise<void> {
  const bare = await startServer('bare');
  const stack = await startServer('stack');
  // The measured API: its own process beside the stack, sharing its database and chain.
  const api = await startServer('api', { DATA_DIR: stack.dataDir!, RPC_URL: stack.rpcUrl! });
  const apiUrl = api.url;
  try {
    const demo = stack.demo!;
    const client = new StockClient({ baseUrl: apiUrl, apiKey: demo.stock.keys.readOnly.apiKey, apiSecret: demo.stock.keys.readOnly.apiSecret, chainId: demo.chainId });
    const user = demo.wallets[0].address;
    // BENCH_TARGETS=barepost,healthz,price,balance,calldata,precheck picks targets (the bare baseline always runs).
    const picked = (process.env.BENCH_TARGETS ?? 'barepost,healthz,price,balance,calldata,precheck').split(',');
    const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
    const unbound = new StockClient({ baseUrl: apiUrl, ...stack.unbound!, chainId: demo.chainId });
    const writable = new StockClient({ baseUrl: apiUrl, apiKey: demo.stock.keys.writable.apiKey, apiSecret: demo.stock.keys.writable.apiSecret, chainId: demo.chainId });
    const targets: Array<[string, string, () => Load]> = [
      ['healthz', 'unsigned GET /healthz (same stack, no auth)', () => ({ url: apiUrl + '/healthz' })],
      ['price', 'signed GET /prices/{symbol}', () => signed(client, apiUrl, 'GET', '/api/v1/prices/AAPL')],
      ['balance', 'signed GET /users/{id}/balance', () => signed(client, apiUrl, 'GET', `/api/v1/users/${user}/balance`)],
      ['calldata', 'signed POST /orders/calldata', () => signed(unbound, apiUrl, 'POST', '/api/v1/orders/calldata', { body: order })],
      ['precheck', '  same, balance pre-check (eth_call)', () => signed(writable, apiUrl, 'POST', '/api/v1/orders/calldata', { body: order })],
    ];
    // This is a shared 2-core VM: its speed drifts during a run and jumps for seconds at a time (a
    // neighbour on the host). So each target runs ROUNDS short rounds, each between two rounds of the
    // bare route, and its ratio is the median over rounds of (mean of the bare rounds around it) ÷
    // (the target's round): slow drift cancels within a round, a disturbed round drops out.
    const bareLoad: Load = { url: bare.url + '/bare' };
    const median = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    };
    const extra: Array<[string, Server, () => Load]> = picked.includes('barepost')
      ? [['bare Fastify POST, same JSON body', bare, () => ({ url: bare.url + '/bare', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) })]]
      : [];
    const chosen: Array<[string, Server, () => Load]> = [...extra, ...targets.filter(([id]) => picked.includes(id)).map(([, name, load]) => [name, api, load] as [string, Server, () => Load])];
    const rows: Array<{ name: string; rounds: Result[]; ratio: number }> = [];
    const allBares: Result[] = [];
    await measure('bare Fastify route', bare, bareLoad, true);
    for (const [name, server, load] of chosen) {
      await measure(name, server, load(), true);
      let before = await measure('bare Fastify route', bare, bareLoad);
      allBares.push(before);
      const rounds: Result[] = [];
      const ratios: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const slug = name.trim().replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase();
        await profile(server, { profile: 'start' });
        const r = await measure(name, server, load());
        await profile(server, { profile: 'stop', file: `bench-profiles/${slug}.${i}.cpuprofile` });
        if (PROFILE) fs.writeFileSync(`bench-profiles/${slug}.${i}.requests`, String(r.requests));
        await profile(bare, { profile: 'start' });
        const after = await measure('bare Fastify route', bare, bareLoad);
        await profile(bare, { profile: 'stop', file: `bench-profiles/bare-after-${slug}.${i}.cpuprofile` });
        if (PROFILE) fs.writeFileSync(`bench-profiles/bare-after-${slug}.${i}.requests`, String(after.requests));
        ratios.push((before.cpuUsPerReq + after.cpuUsPerReq) / 2 / r.cpuUsPerReq);
        rounds.push(r);
        allBares.push(after);
        before = after;
      }
      rows.push({ name, rounds, ratio: median(ratios) });
    }
    /** One table row: medians over the rounds, the CPU figure with its range. */
    const summary = (target: string, rs: Result[], ratio: number) => {
      const med = (f: (r: Result) => number) => median(rs.map(f));
      const cpu = rs.map((r) => r.cpuUsPerReq);
      return {
        target,
        'req/s': Math.round(med((r) => r.rps)),
        'p50 ms': med((r) => r.p50),
        'p99 ms': med((r) => r.p99),
        'server CPU µs/req': `${med((r) => r.cpuUsPerReq).toFixed(1)} (${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)})`,
        'of which kernel': med((r) => r.sysUsPerReq).toFixed(1),
        'CPU ratio (bare/this)': ratio.toFixed(2),
        errors: rs.reduce((a, r) => a + r.errors, 0),
      };
    };
    const table = [
      summary(`bare Fastify route (median of ${allBares.length} rounds)`, allBares, 1),
      ...rows.map(({ name, rounds, ratio }) => summary(name, rounds, ratio)),
    ];
    console.log(
      `autocannon ${CONNECTIONS} connections; per target ${ROUNDS} rounds of ${DURATION} s, each between two ${DURATION} s rounds of the bare route; ` +
        `server CPU from the server process's own cpuUsage(); figures are medians over rounds (range in brackets), the ratio the median of per-round ratios`,
    );
    console.table(table);
    const ratioOf = (part: string) => rows.find((r) => r.name.includes(part))?.ratio;
    const price = ratioOf('/prices/');
    if (price !== undefined) console.log(`target: bare CPU/req ÷ signed price read CPU/req ≥ 0.6 → ${price.toFixed(2)} ${price >= 0.6 ? 'met' : 'NOT met'}`);
    const calldata = ratioOf('orders/calldata');
    if (calldata !== undefined) console.log(`target: bare CPU/req ÷ signed orders/calldata CPU/req ≥ 0.5 → ${calldata.toFixed(2)} ${calldata >= 0.5 ? 'met' : 'NOT met'}`);
    const results = [...allBares, ...rows.flatMap((r) => r.rounds)];
    if (results.some((r) => r.errors > 0)) console.log('warning: some requests failed; figures are not comparable');
  } finally {
    for (const s of [bare, api, stack]) {
      s.child.removeAllListeners('exit');
      s.child.send('stop');
    }
  }
}

if (!only || only === 'http') await httpBench();
if (!only || only === 'indexer') {
  console.log('\nindexer catch-up (fresh anvil):');
  const r = await runIndexerBench({ events: Number(process.env.BENCH_INDEXER_EVENTS ?? 50_000), log: (l) => console.log(l) });
  for (const c of r.catchUp) {
    console.log(`target: indexer catch-up ÷ raw eth_getLogs ceiling ≥ 0.5 (${c.engine}) → ${c.ratio.toFixed(2)} ${c.ratio >= 0.5 ? 'met' : 'NOT met'}`);
  }
}
if (!only || only === 'executor') {
  console.log('\nexecutor settlement (fresh anvil):');
  const r = await runExecutorBench({ orders: Number(process.env.BENCH_ORDERS ?? 5_000) });
  const ok = r.statuses.Filled === r.orders;
  console.log(`target: orders settled per second ≥ 1000 → ${r.ordersPerSecond} ${r.ordersPerSecond >= 1000 && ok ? 'met' : 'NOT met'}${ok ? '' : ' (not every order filled)'}`);
}
