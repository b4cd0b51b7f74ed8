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
import autocannon from 'autocannon';
import { StockClient } from '../src/sdk/stock-client.ts';
import type { DemoFile } from '../src/app/stack.ts';
import { runExecutorBench } from './executor-bench.ts';
import { runIndexerBench } from './indexer-bench.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
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
    // BENCH_CPU_PROF=1 writes a V8 CPU profile of each server into ./bench-profiles.
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=bench-profiles'] : [])],
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

function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onMsg = (m: any) => {
      if (m?.cpu) {
        child.off('message', onMsg);
        resolve(m.cpu.user + m.cpu.system);
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
  errors: number;
}

async function measure(name: string, server: Server, opts: autocannon.Options): Promise<Result> {
  // Warm-up: JIT, connection pools and caches.
  await autocannon({ ...opts, duration: 2, connections: CONNECTIONS });
  const cpu0 = await cpuOf(server.child);
  const r = await autocannon({ ...opts, duration: DURATION, connections: CONNECTIONS });
  const cpu1 = await cpuOf(server.child);
  const total = r.requests.total;
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUsPerReq: (cpu1 - cpu0) / Math.max(1, total),
    errors: r.errors + r.non2xx,
  };
}

function signedPost(client: StockClient, base: string, path: string, body: unknown): autocannon.Options {
  const raw = JSON.stringify(body);
  return {
    url: base,
    requests: [
      {
        method: 'POST',
        setupRequest: (req: any) => {
          const s = client.sign('POST', path, { body: raw });
          return { ...req, method: 'POST', path, headers: s.headers, body: raw };
        },
      },
    ],
  } as autocannon.Options;
}

function signedGet(client: StockClient, base: string, path: string, query?: Record<string, string>): autocannon.Options {
  return {
    url: base,
    requests: [
      {
        method: 'GET',
        setupRequest: (req: any) => {
          const s = client.sign('GET', path, { query });
          return { ...req, method: 'GET', path: new URL(s.url).pathname + new URL(s.url).search, headers: s.headers };
        },
      },
    ],
  } as autocannon.Options;
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
    const results: Result[] = [];
    results.push(await measure('bare Fastify route', bare, { url: bare.url + '/bare' }));
    results.push(await measure('signed GET /prices/{symbol}', api, signedGet(client, apiUrl, '/api/v1/prices/AAPL')));
    results.push(await measure('signed GET /users/{id}/balance', api, signedGet(client, apiUrl, `/api/v1/users/${user}/balance`)));
    const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
    const unbound = new StockClient({ baseUrl: apiUrl, ...stack.unbound!, chainId: demo.chainId });
    results.push(await measure('signed POST /orders/calldata', api, signedPost(unbound, apiUrl, '/api/v1/orders/calldata', order)));
    const writable = new StockClient({ baseUrl: apiUrl, apiKey: demo.stock.keys.writable.apiKey, apiSecret: demo.stock.keys.writable.apiSecret, chainId: demo.chainId });
    results.push(await measure('  same, balance pre-check (eth_call)', api, signedPost(writable, apiUrl, '/api/v1/orders/calldata', order)));

    const base = results[0];
    const rows = results.map((r) => ({
      target: r.name,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'server CPU µs/req': r.cpuUsPerReq.toFixed(1),
      'CPU ratio (bare/this)': (base.cpuUsPerReq / r.cpuUsPerReq).toFixed(2),
      'req/s ratio (this/bare)': (r.rps / base.rps).toFixed(2),
      errors: r.errors,
    }));
    console.log(`autocannon ${CONNECTIONS} connections, ${DURATION} s per target, server CPU from the server process's own cpuUsage()`);
    console.table(rows);
    const price = results.find((r) => r.name.includes('/prices/'))!;
    const ratio = base.cpuUsPerReq / price.cpuUsPerReq;
    console.log(`target: bare CPU/req ÷ signed price read CPU/req ≥ 0.6 → ${ratio.toFixed(2)} ${ratio >= 0.6 ? 'met' : 'NOT met'}`);
    const calldata = results.find((r) => r.name.includes('orders/calldata'))!;
    const cRatio = base.cpuUsPerReq / calldata.cpuUsPerReq;
    console.log(`target: bare CPU/req ÷ signed orders/calldata CPU/req ≥ 0.5 → ${cRatio.toFixed(2)} ${cRatio >= 0.5 ? 'met' : 'NOT met'}`);
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
