/**
 * `npm run bench`: load against 127.0.0.1 with autocannon, one run, one machine. For each target it
 * prints requests/s, p50/p99 latency and the server process's own CPU time per request, each as a
 * ratio to the bare Fastify route measured in the same run. On a 2-core machine the load generator
 * saturates its core first, so server CPU per request is the figure that counts.
 *
 * After the HTTP targets, issue 39's routing cost (BENCH_ONLY=multichain) and the indexer's and
 * executor's throughput on each of two chains running at once ÷ one chain alone
 * (bench/chain-roles-bench.ts; BENCH_ONLY=multichain-roles; BENCH_ROLES_EVENTS, BENCH_ROLES_ORDERS,
 * BENCH_ROLES_ROUNDS size it).
 * Then, each on a fresh anvil: the indexer's catch-up over BENCH_INDEXER_EVENTS router events
 * (default 50 000) next to the raw eth_getLogs + JSON parse ceiling of the same ranges, and the
 * executor's settlement throughput over BENCH_ORDERS orders (default 5 000); then One Click order
 * sends end to end beside anvil's pre-signed ceiling (bench/one-click-bench.ts), then (issue 38) the
 * executor's settlement with the proxies ÷ the same contracts without them, the One Click figure on
 * the proxied contracts and the migration of a venue from before the proxies per 1,000 holders and
 * open orders (bench/upgrade-bench.ts; BENCH_ONLY=upgrade), then perpetual withdrawals paid by the
 * vault against 6a0f45b's (bench/perp-withdrawal-bench.ts; BENCH_ONLY=perp-withdrawals).
 * BENCH_ONLY=http, indexer, executor, oneclick, upgrade, perp-withdrawals or perp runs one part. The perpetual part: the matching engine's
 * book against nodejs-order-book on the same streams (steady and deep books) and the full engine,
 * then the sequencer's group-committed journal against single-row commits of the same database, then
 * the journal and the projector with SQLite statements kept per text against prepared per query
 * (bench/sqlite-statements-bench.ts; BENCH_ONLY=sqlite-statements runs that alone), then what the
 * journal's group commit pays for each index an order's row lands in (bench/journal-index-cost-bench.ts;
 * BENCH_ONLY=journal-index), then what the history projection pays for each of its secondary indexes
 * (bench/projection-index-cost-bench.ts; BENCH_ONLY=projection-indexes), then signed orders end to end over HTTP against native signer recovery alone (libsecp256k1, with viem's
 * JS recovery beside it), the same against a bare Fastify route, and (issue 29) the same orders in
 * batches of 20 over HTTP and as place frames over the WebSocket against the same recovery
 * (BENCH_ONLY=perp-orders runs that alone, with the scale-out part after it), then the scale-out's
 * CPU per order: two perp API processes and the engine over Redis Streams against one process, on
 * PostgreSQL (bench/perp-scaleout-bench.ts; BENCH_ONLY=perp-scaleout) and what one hop between two processes costs
 * here (bench/wakeup-cost-bench.ts; BENCH_ONLY=wakeup), then (issue 40) the latency of each way in under an
 * open-loop load at half of that throughput (bench/perp-latency-bench.ts; BENCH_ONLY=perp-latency
 * runs that alone, measuring the saturation first), then (issue 40 item 6) the same orders with the
 * signature recovery pool on and off, the client pinned to one core (bench/recovery-pool-bench.ts;
 * BENCH_ONLY=recovery-pool runs that alone), then the same orders' server CPU with
 * the Prometheus metrics on and off (BENCH_ONLY=metrics runs that alone), then liquidation's cost
 * against the open positions and the engine's throughput with the liquidity pool quoting
 * (bench/perp-risk-bench.ts; BENCH_ONLY=perp-risk runs that alone), then a mark update against
 * 10,000 to 1,000,000 resting trigger orders crossing 1 % of them (bench/perp-trigger-bench.ts;
 * BENCH_ONLY=perp-triggers runs that alone). Last, stream fan-out to 1,000
 * WebSocket subscribers beside a bare ws broadcast (bench/stream-fanout-bench.ts; BENCH_ONLY=streams).
 * Then start-up: `tokex --help` and `tokex start` to its banner on an existing data directory, the
 * compiled build against the sources through tsx (bench/startup-bench.ts; BENCH_ONLY=startup), and
 * the history seed and journal replay's longest hold of the event loop (bench/startup-slices-bench.ts;
 * BENCH_ONLY=startup-slices).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import autocannon from 'autocannon';
import { encodeFunctionData } from 'viem';
import { stockRouterAbi } from '../src/chain/abi/generated/index.ts';
import { staticCallEncoder } from '../src/chain/static-call-encoder.ts';
import { StockClient } from '@tokex/sdk';
import { runChainRolesBench } from './chain-roles-bench.ts';
import { runExecutorBench } from './executor-bench.ts';
import { runIndexerBench } from './indexer-bench.ts';
import { runOneClickBench, type OneClickBenchResult } from './one-click-bench.ts';
import { median, startBenchServer, stopServers, type Server, type ServerMode } from './bench-children.ts';
import { runPerpEngineBench } from './perp-engine-bench.ts';
import { runPerpJournalBench } from './perp-journal-bench.ts';
import { runSqliteStatementsBench } from './sqlite-statements-bench.ts';
import { journalIndexCostTable, runJournalIndexCost } from './journal-index-cost-bench.ts';
import { projectionIndexCostTable, runProjectionIndexCost } from './projection-index-cost-bench.ts';
import { runPerpLatencyBench, type LatencyKind } from './perp-latency-bench.ts';
import { runMetricsCostBench, runPerpOrdersBench } from './perp-orders-bench.ts';
import { runPerpScaleOutBench } from './perp-scaleout-bench.ts';
import { runWakeupCostBench } from './wakeup-cost-bench.ts';
import { runSignatureRecoveryBench } from './signature-recovery-bench.ts';
import { runPerpRiskBench } from './perp-risk-bench.ts';
import { runRecoveryPoolBench } from './recovery-pool-bench.ts';
import { runPerpTriggerBench } from './perp-trigger-bench.ts';
import { runStartupBench } from './startup-bench.ts';
import { runStartupSlicesBench } from './startup-slices-bench.ts';
import { runStreamFanoutBench } from './stream-fanout-bench.ts';
import { runUpgradeBench } from './upgrade-bench.ts';
import { runPerpWithdrawalBench } from './perp-withdrawal-bench.ts';

/** Seconds per measured round. */
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
/** Rounds per target on each server process, each followed by a round of the bare route. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

const startServer = (mode: ServerMode, env: Record<string, string> = {}) => startBenchServer(mode, env);

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

/**
 * Requests signed ahead of a round: the rate its warm-up reached on that process, with headroom, for
 * the round's length (at least 5 000 a second).
 */
const presignCount = (warmRps: number) => Math.ceil(Math.max(5_000, warmRps * 1.3) * DURATION);

async function measure(server: Server, load: Load, count = 0): Promise<Result> {
  const run = typeof load === 'function' ? load(count) : load;
  const cpu0 = await cpuOf(server.child);
  const r = await autocannon({ ...run, duration: DURATION, connections: CONNECTIONS });
  const cpu1 = await cpuOf(server.child);
  const total = r.requests.total;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: total,
    cpuUsPerReq: (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / Math.max(1, total),
    sysUsPerReq: (cpu1.system - cpu0.system) / Math.max(1, total),
    errors: r.errors + r.non2xx,
  };
}

/** One measured round, with its CPU profile and request count in bench-profiles/<name>.* under BENCH_CPU_PROF. */
async function measureRound(server: Server, load: Load, count: number, name: string): Promise<Result> {
  await profile(server, { profile: 'start' });
  const r = await measure(server, load, count);
  await profile(server, { profile: 'stop', file: `bench-profiles/${name}.cpuprofile` });
  if (PROFILE) fs.writeFileSync(`bench-profiles/${name}.requests`, String(r.requests));
  return r;
}

/** JIT, connection pools and caches; returns the rate reached, which sizes the signed supply. */
async function warmUp(load: Load): Promise<number> {
  const opts = typeof load === 'function' ? load(60_000) : load;
  const r = await autocannon({ ...opts, duration: 2, connections: CONNECTIONS });
  return r.requests.average;
}

/**
 * A signed target. Each request needs a fresh nonce, so the load generator signs every one; it signs
 * them ahead of the round (each stays valid for the 45 s window, longer than a round) so that signing
 * does not make the generator, which shares this 2-core machine, the bottleneck of the server it
 * measures. Past the pre-signed supply it signs on the fly.
 */
function signed(
  key: { apiKey: string; apiSecret: string; chainId: number },
  method: 'GET' | 'POST',
  path: string,
  opts: { query?: Record<string, string>; body?: unknown } = {},
): (base: string) => Load {
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return (base: string) => {
    // The base URL may carry a service prefix, which the request path keeps and the signature omits.
    const client = new StockClient({ baseUrl: base, ...key });
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
  };
}


const only = process.env.BENCH_ONLY;
/** Server processes per side: the bare route's and the measured API's. */
const PROCESSES = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 3));


/** Rounds of one process: its typical CPU per request is their median. */
interface ProcessRounds {
  rounds: Result[];
}
const typical = (p: ProcessRounds) => median(p.rounds.map((r) => r.cpuUsPerReq));
/** The process with the lowest typical CPU per request (see httpBench on why the best). */
const best = (ps: ProcessRounds[]) => ps.filter((p) => p.rounds.length > 0).reduce((a, b) => (typical(b) < typical(a) ? b : a));

async function httpBench(): Promise<void> {
  // Each side runs in several processes. A Node process settles, at random and for its whole life,
  // at one of a few speeds: measured here, 2 of 6 identical bare Fastify servers cost 15.8 µs a
  // request and the other 4 about 12.5 (other runs saw 14–15), V8 runtime calls in Node's own stream
  // and nextTick code (object literals whose maps keep migrating) making the difference. With one
  // process per side the ratio was a draw: the same code measured 0.48 and 0.70 in two consecutive
  // runs. So each side's figure is its best process's median round, one rule for both sides.
  const bares: Server[] = [];
  for (let i = 0; i < PROCESSES; i++) bares.push(await startServer('bare'));
  const stack = await startServer('stack');
  // The measured API runs in processes of its own beside the stack, sharing its database and chain,
  // fresh ones for each target: a process that served another route first has different JIT
  // feedback in the shared code (measured: the signed price read cost 26–28 µs on processes that
  // had served /healthz, 22.5–23 on fresh ones), and the bare route's processes only ever serve it.
  let apis: Server[] = [];
  const stopAll = stopServers;
  try {
    const demo = stack.demo!;
    const keyOf = (k: { apiKey: string; apiSecret: string }) => ({ apiKey: k.apiKey, apiSecret: k.apiSecret, chainId: demo.chainId });
    const readOnly = keyOf(demo.stock.keys.readOnly);
    const unbound = keyOf(stack.unbound!);
    const writable = keyOf(demo.stock.keys.writable);
    const user = demo.wallets[0].address;
    // BENCH_TARGETS=barepost,healthz,price,balance,calldata,precheck picks targets (the bare baseline always runs).
    const picked = (process.env.BENCH_TARGETS ?? 'barepost,healthz,price,balance,calldata,precheck').split(',');
    const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
    type Target = { id: string; name: string; side: 'bare' | 'api'; load: (base: string) => Load };
    const all: Target[] = [
      { id: 'barepost', name: 'bare Fastify POST, same JSON body', side: 'bare', load: (b) => ({ url: b + '/bare', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) }) },
      { id: 'healthz', name: 'unsigned GET /healthz (same stack, no auth)', side: 'api', load: (b) => ({ url: b + '/healthz' }) },
      { id: 'price', name: 'signed GET /prices/{symbol}', side: 'api', load: signed(readOnly, 'GET', '/api/v1/prices/AAPL') },
      { id: 'balance', name: 'signed GET /users/{id}/balance', side: 'api', load: signed(readOnly, 'GET', `/api/v1/users/${user}/balance`) },
      { id: 'calldata', name: 'signed POST /orders/calldata', side: 'api', load: signed(unbound, 'POST', '/api/v1/orders/calldata', { body: order }) },
      { id: 'precheck', name: '  same, balance pre-check (eth_call)', side: 'api', load: signed(writable, 'POST', '/api/v1/orders/calldata', { body: order }) },
    ];
    const chosen = all.filter((t) => picked.includes(t.id));
    const bareLoad = (b: Server): Load => ({ url: b.url + '/bare' });
    const bareRounds: ProcessRounds[] = bares.map(() => ({ rounds: [] }));
    const rows: Array<{ target: Target; processes: ProcessRounds[] }> = [];
    for (const b of bares) await warmUp(bareLoad(b));
    for (const target of chosen) {
      if (target.side === 'api') {
        await stopAll(apis);
        apis = [];
        for (let i = 0; i < PROCESSES; i++) apis.push(await startServer('api', { DATA_DIR: stack.dataDir!, RPC_URL: stack.rpcUrl! }));
      }
      const servers = target.side === 'bare' ? bares : apis;
      const slug = target.name.trim().replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase();
      const warmRps: number[] = [];
      for (const s of servers) warmRps.push(await warmUp(target.load(s.url)));
      const processes: ProcessRounds[] = servers.map(() => ({ rounds: [] }));
      // BENCH_ROUNDS rounds on each process, alternating processes, each followed by a round of the
      // bare route (on the bare process of the same index), so every process sees the same drift.
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < servers.length; i++) {
          processes[i].rounds.push(await measureRound(servers[i], target.load(servers[i].url), presignCount(warmRps[i]), `${slug}.p${i}.${round}`));
          const b = i % bares.length;
          bareRounds[b].rounds.push(await measureRound(bares[b], bareLoad(bares[b]), 0, `bare-after-${slug}.p${i}.${round}`));
        }
      }
      rows.push({ target, processes });
    }
    const bestBare = typical(best(bareRounds));
    /** One table row: the best process's median round, and every process's median CPU. */
    const summary = (name: string, ps: ProcessRounds[]) => {
      const top = best(ps);
      const med = (f: (r: Result) => number) => median(top.rounds.map(f));
      return {
        target: name,
        'req/s': Math.round(med((r) => r.rps)),
        'p50 ms': med((r) => r.p50),
        'p99 ms': med((r) => r.p99),
        'server CPU µs/req': med((r) => r.cpuUsPerReq).toFixed(1),
        'per process': ps.map((p) => typical(p).toFixed(1)).join(' / '),
        'of which kernel': med((r) => r.sysUsPerReq).toFixed(1),
        'CPU ratio (bare/this)': (bestBare / typical(top)).toFixed(3),
        errors: ps.reduce((a, p) => a + p.rounds.reduce((e, r) => e + r.errors, 0), 0),
      };
    };
    console.log(
      `autocannon ${CONNECTIONS} connections; ${PROCESSES} server processes per side; per target ${ROUNDS} rounds of ${DURATION} s on each process, each followed by a bare round; ` +
        `server CPU from each server process's own cpuUsage(); a process's figure is the median of its rounds, a side's the best process's (the others in "per process"), the ratio best bare ÷ best target`,
    );
    console.table([summary('bare Fastify route', bareRounds), ...rows.map(({ target, processes }) => summary(target.name, processes))]);
    const ratioOf = (id: string) => {
      const row = rows.find((r) => r.target.id === id);
      return row ? bestBare / typical(best(row.processes)) : undefined;
    };
    const price = ratioOf('price');
    // Three decimals: 0.497 printed as "0.50 NOT met" read as a contradiction.
    if (price !== undefined) console.log(`target: bare CPU/req ÷ signed price read CPU/req ≥ 0.6 → ${price.toFixed(3)} ${price >= 0.6 ? 'met' : 'NOT met'}`);
    const calldata = ratioOf('calldata');
    if (calldata !== undefined) console.log(`target: bare CPU/req ÷ signed orders/calldata CPU/req ≥ 0.5 → ${calldata.toFixed(3)} ${calldata >= 0.5 ? 'met' : 'NOT met'}`);
    // The same request shape without the API's work: how much of the calldata cost is the framework's body reading.
    const barePost = ratioOf('barepost');
    if (calldata !== undefined && barePost !== undefined) {
      console.log(`for comparison: bare POST (same body) CPU/req ÷ signed orders/calldata CPU/req → ${(calldata / barePost).toFixed(3)}`);
    }
    const calldataRow = rows.find((r) => r.target.id === 'calldata');
    if (calldataRow) {
      // The one hand-made part of this path, against the library it replaces, in this run.
      const e = compareOrderEncoders();
      const cpu = typical(best(calldataRow.processes));
      console.log(
        `order encoding: static-call-encoder.ts ${e.fixedUs.toFixed(2)} µs, viem encodeFunctionData ${e.viemUs.toFixed(2)} µs (a tight loop; in a server profile viem's took 11.8 µs); ` +
          `with viem's the calldata request would cost at least ${(e.viemUs - e.fixedUs).toFixed(2)} µs more: +${(((e.viemUs - e.fixedUs) / cpu) * 100).toFixed(1)} % on ${cpu.toFixed(1)} µs`,
      );
    }
    const results = [...bareRounds, ...rows.flatMap((r) => r.processes)].flatMap((p) => p.rounds);
    if (results.some((r) => r.errors > 0)) console.log('warning: some requests failed; figures are not comparable');
  } finally {
    await stopAll([...bares, ...apis, stack]);
  }
}

/** µs per order call for the hand-made encoder and viem's, best of 3 alternating rounds. */
function compareOrderEncoders(): { fixedUs: number; viemUs: number } {
  const stock = '0x8ce361602B935680E8DeC218b820ff5056BeB7af' as const;
  const fixed = staticCallEncoder(stockRouterAbi, 'placeLimitOrder');
  const args = (i: number) => [stock, i & 1, 10n ** 18n + BigInt(i), 123_450_000_000_000_000_000n, 1n, 1_800_000_000n + BigInt(i)] as const;
  const viem = (i: number) => encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: args(i) as never });
  const hand = (i: number) => fixed(...args(i));
  if (viem(7) !== hand(7)) throw new Error('the encoders disagree');
  const n = 50_000;
  const time = (fn: (i: number) => string) => {
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) fn(i);
    const u = process.cpuUsage(t);
    return (u.user + u.system) / n;
  };
  let fixedUs = Infinity;
  let viemUs = Infinity;
  for (let round = 0; round < 3; round++) {
    fixedUs = Math.min(fixedUs, time(hand));
    viemUs = Math.min(viemUs, time(viem));
  }
  return { fixedUs, viemUs };
}

type GcKinds = Record<string, { count: number; ms: number }>;
interface GcReading {
  kinds: GcKinds;
  heapUsed: number;
}

function gcOf(child: ChildProcess): Promise<GcReading> {
  return new Promise((resolve) => {
    const onMsg = (m: any) => {
      if (m?.gc) {
        child.off('message', onMsg);
        resolve({ kinds: m.gc, heapUsed: m.heapUsed });
      }
    };
    child.on('message', onMsg);
    child.send('gc');
  });
}

async function gcOfGroups<K extends string>(groups: Record<K, Server[]>): Promise<Record<K, GcReading[]>> {
  const out = {} as Record<K, GcReading[]>;
  for (const k of Object.keys(groups) as K[]) out[k] = await Promise.all(groups[k].map((s) => gcOf(s.child)));
  return out;
}

/** Collections between two readings of the same processes, per request: which kind a side pays more of. */
function gcPerRequest(before: GcReading[], after: GcReading[], requests: number): Record<string, string> {
  const row: Record<string, string> = {};
  for (const kind of ['minor', 'major', 'incremental']) {
    let count = 0;
    let ms = 0;
    for (let i = 0; i < after.length; i++) {
      count += (after[i].kinds[kind]?.count ?? 0) - (before[i].kinds[kind]?.count ?? 0);
      ms += (after[i].kinds[kind]?.ms ?? 0) - (before[i].kinds[kind]?.ms ?? 0);
    }
    row[`${kind} /1k req`] = ((count * 1000) / Math.max(1, requests)).toFixed(2);
    row[`${kind} µs/req`] = ((ms * 1000) / Math.max(1, requests)).toFixed(2);
  }
  row['heap MB (each process)'] = after.map((r) => (r.heapUsed / 2 ** 20).toFixed(0)).join(' / ');
  return row;
}

/**
 * Issue 39: what routing by `x-api-chain-id` costs. A stack with two embedded chains
 * (EMBEDDED_CHAIN_IDS); beside it, stock API processes serving the first chain alone and processes
 * serving both (STOCK_CHAINS, RPC_URL_<id>), the same signed requests for the first chain to each, in
 * alternating rounds. Figure: CPU per request with one chain ÷ with two (target ≥ 0.95), and the
 * second chain's requests on the two-chain processes beside it.
 */
async function multichainBench(): Promise<void> {
  const stack = await startServer('stack', { EMBEDDED_CHAIN_IDS: '31337,31338', CHAIN_ID: '31337' });
  // The second chain's requests go to processes of their own: a process that served both chains
  // would hold twice the recent nonces (45 s of them), and its heap, not the routing, would cost more.
  const groups: Record<'one' | 'two' | 'second', Server[]> = { one: [], two: [], second: [] };
  try {
    const demo = stack.demo!;
    const second = demo.stock.chains.find((c) => c.chainId !== demo.chainId);
    if (!second) throw new Error('multichain bench: the stack serves one chain');
    const oneEnv = { DATA_DIR: stack.dataDir!, RPC_URL: stack.rpcUrl! };
    const twoEnv = { ...oneEnv, STOCK_CHAINS: `${demo.chainId},${second.chainId}`, [`RPC_URL_${second.chainId}`]: second.rpcUrl };
    const perGroup = Math.max(1, Math.min(PROCESSES, 2));
    for (let i = 0; i < perGroup; i++) {
      groups.one.push(await startServer('api', oneEnv));
      groups.two.push(await startServer('api', twoEnv));
      groups.second.push(await startServer('api', twoEnv));
    }
    const read = demo.stock.keys.readOnly;
    const first = { apiKey: read.apiKey, apiSecret: read.apiSecret, chainId: demo.chainId };
    const other = { ...first, chainId: second.chainId };
    const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
    // As httpBench's `calldata`: a WRITABLE key bound to no wallet (no balance pre-check), with a
    // scope on each chain.
    const wFirst = { apiKey: stack.unbound!.apiKey, apiSecret: stack.unbound!.apiSecret, chainId: demo.chainId };
    const targets = [
      { name: 'signed GET /prices/{symbol}', slug: 'price', load: (k: typeof first) => signed(k, 'GET', '/api/v1/prices/AAPL') },
      { name: 'signed POST /orders/calldata', slug: 'calldata', load: (k: typeof first) => signed(k, 'POST', '/api/v1/orders/calldata', { body: order }) },
    ];
    const rows: Array<Record<string, string | number>> = [];
    const gcRows: Array<Record<string, string | number>> = [];
    for (const t of targets) {
      const key = t.name.includes('POST') ? wFirst : first;
      const rounds: Record<'one' | 'two' | 'second', ProcessRounds[]> = {
        one: groups.one.map(() => ({ rounds: [] })),
        two: groups.two.map(() => ({ rounds: [] })),
        second: groups.second.map(() => ({ rounds: [] })),
      };
      const warm: Record<'one' | 'two' | 'second', number[]> = { one: [], two: [], second: [] };
      for (const s of groups.one) warm.one.push(await warmUp(t.load(key)(s.url)));
      for (const s of groups.two) warm.two.push(await warmUp(t.load(key)(s.url)));
      for (const s of groups.second) warm.second.push(await warmUp(t.load({ ...key, chainId: other.chainId })(s.url)));
      const gcBefore = await gcOfGroups(groups);
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < perGroup; i++) {
          rounds.one[i].rounds.push(await measureRound(groups.one[i], t.load(key)(groups.one[i].url), presignCount(warm.one[i]), `multichain-one-${t.slug}.p${i}.${round}`));
          rounds.two[i].rounds.push(await measureRound(groups.two[i], t.load(key)(groups.two[i].url), presignCount(warm.two[i]), `multichain-two-${t.slug}.p${i}.${round}`));
          rounds.second[i].rounds.push(await measureRound(groups.second[i], t.load({ ...key, chainId: other.chainId })(groups.second[i].url), presignCount(warm.second[i]), `multichain-second-${t.slug}.p${i}.${round}`));
        }
      }
      const gcAfter = await gcOfGroups(groups);
      for (const side of ['one', 'two', 'second'] as const) {
        const requests = rounds[side].reduce((a, p) => a + p.rounds.reduce((n, r) => n + r.requests, 0), 0);
        gcRows.push({ target: t.slug, side, ...gcPerRequest(gcBefore[side], gcAfter[side], requests) });
      }
      const errors = (ps: ProcessRounds[]) => ps.reduce((a, p) => a + p.rounds.reduce((e, r) => e + r.errors, 0), 0);
      const [one, two, sec] = [typical(best(rounds.one)), typical(best(rounds.two)), typical(best(rounds.second))];
      const ratio = one / two;
      rows.push({
        target: t.name,
        'one chain µs/req': one.toFixed(1),
        'two chains µs/req (first chain)': two.toFixed(1),
        'two chains µs/req (second chain)': sec.toFixed(1),
        'one ÷ two (target ≥ 0.95)': `${ratio.toFixed(3)} ${ratio >= 0.95 ? 'met' : 'NOT met'}`,
        errors: errors(rounds.one) + errors(rounds.two) + errors(rounds.second),
      });
    }
    console.log(`autocannon ${CONNECTIONS} connections; ${perGroup} API processes per side beside one stack of two embedded chains; ${ROUNDS} rounds of ${DURATION} s each, alternating; each figure the best process's median round of server CPU per request`);
    console.table(rows);
    console.log('garbage collection over the measured rounds, every process of a side together (µs and collections per 1,000 requests), and the heap at the end:');
    console.table(gcRows);
  } finally {
    await stopServers([...groups.one, ...groups.two, ...groups.second]);
    await stopServers([stack]);
  }
}

if (!only || only === 'http') await httpBench();
if (!only || only === 'multichain') {
  console.log('\nseveral chains (issue 39): stock API processes serving one chain against processes serving two, the same signed requests (bench/run-bench.ts, multichainBench):');
  await multichainBench();
}
if (!only || only === 'multichain-roles') {
  console.log('\nseveral chains (issue 39): the indexer and the executor on each of two chains running at once ÷ on one chain alone, two fresh anvils (bench/chain-roles-bench.ts):');
  const num = (v: string | undefined) => (v ? Number(v) : undefined);
  const r = await runChainRolesBench({ events: num(process.env.BENCH_ROLES_EVENTS), orders: num(process.env.BENCH_ROLES_ORDERS), rounds: num(process.env.BENCH_ROLES_ROUNDS) });
  console.log(r.table);
}
if (!only || only === 'indexer') {
  console.log('\nindexer catch-up (fresh anvil):');
  const r = await runIndexerBench({ events: Number(process.env.BENCH_INDEXER_EVENTS ?? 50_000), log: (l) => console.log(l) });
  for (const c of r.catchUp) {
    console.log(`target: indexer catch-up ÷ raw eth_getLogs ceiling ≥ 0.5 (${c.engine}) → ${c.ratio.toFixed(3)} ${c.ratio >= 0.5 ? 'met' : 'NOT met'}`);
  }
}
if (!only || only === 'executor') {
  console.log('\nexecutor settlement (fresh anvil):');
  const r = await runExecutorBench({ orders: Number(process.env.BENCH_ORDERS ?? 5_000) });
  const ok = r.statuses.Filled === r.orders;
  console.log(`target: orders settled per second ≥ 1000 → ${r.ordersPerSecond} ${r.ordersPerSecond >= 1000 && ok ? 'met' : 'NOT met'}${ok ? '' : ' (not every order filled)'}`);
}
/** The One Click figure of this run, for the upgrade section's summary. */
let oneClick: OneClickBenchResult | undefined;
if (!only || only === 'oneclick') {
  console.log('\nOne Click order sends (stack in a child process) and anvil\'s ceiling for the same orders pre-signed (same chain):');
  oneClick = await runOneClickBench({ users: Number(process.env.BENCH_ONE_CLICK_USERS ?? 16), perUser: Number(process.env.BENCH_ONE_CLICK_SENDS ?? 40) });
}
if (!only || only === 'upgrade') {
  console.log('\nupgrades and proxies: executor settlement with proxies ÷ the same code without them (6a0f45b), One Click on the proxied contracts, and the migration of a venue from before the proxies per 1,000 holders and open orders (bench/upgrade-bench.ts):');
  const num = (v: string | undefined) => (v ? Number(v) : undefined);
  const u = await runUpgradeBench({
    oneClick,
    orders: num(process.env.BENCH_UPGRADE_ORDERS),
    rounds: num(process.env.BENCH_UPGRADE_ROUNDS),
    holders: num(process.env.BENCH_UPGRADE_HOLDERS),
    openOrders: num(process.env.BENCH_UPGRADE_OPEN_ORDERS),
  });
  console.log(u.table);
}
if (!only || only === 'perp-withdrawals') {
  console.log("\nperpetual withdrawals paid by the vault: this release's payWithdrawal (the wallet's signature, the cap, the pause) ÷ 6a0f45b's operator withdraw, one anvil, alternating rounds (bench/perp-withdrawal-bench.ts):");
  const w = await runPerpWithdrawalBench({ payments: Number(process.env.BENCH_WITHDRAWALS ?? 300) });
  console.log(w.table);
  console.log(`report: vault payments a second after ÷ before → ${w.paymentsPerSecondRatio.toFixed(3)}; gas a payment ÷ before → ${w.gasRatio.toFixed(3)}`);
}
if (!only || only === 'perp') {
  console.log('\nperpetual engine, in process, one core (bench/perp-engine-bench.ts):');
  const e = await runPerpEngineBench();
  console.log(e.table);
  console.log('\nperpetual journal, group commit against single-row commits (bench/perp-journal-bench.ts):');
  const j = await runPerpJournalBench();
  console.log(j.table);
}
if (!only || only === 'perp' || only === 'sqlite-statements') {
  console.log('\nSQLite statements kept per text (issue 40): the journal and the projector in one process, against each query prepared anew (bench/sqlite-statements-bench.ts):');
  console.log((await runSqliteStatementsBench()).table);
}
if (!only || only === 'perp' || only === 'journal-index') {
  console.log('\nthe journal\'s group commit by index layout (issue 40): CPU a journalled order, by default commits of 20 over 200,000 orders already there (bench/journal-index-cost-bench.ts):');
  console.log(journalIndexCostTable(await runJournalIndexCost()));
}
if (!only || only === 'perp' || only === 'projection-indexes') {
  console.log('\nthe history projection by index layout (issue 40): its CPU an order, writes of 400 orders as the projector makes them at 4,000 orders a second (bench/projection-index-cost-bench.ts):');
  console.log(projectionIndexCostTable(await runProjectionIndexCost()));
}
/** The closed-loop throughputs of the perp-orders part, orders a second: the latency part's saturation in a full run. */
let perpSaturation: Partial<Record<LatencyKind, number>> | undefined;
/** Native recovery alone from the perp-orders part, for the scale-out part's ratios. */
let perpNativeRecoverPerSec: number | undefined;
if (!only || only === 'perp' || only === 'perp-orders') {
  console.log('\nsigned perpetual orders end to end over HTTP, against native signer recovery alone (bench/perp-orders-bench.ts):');
  const o = await runPerpOrdersBench();
  console.log(o.table);
  perpSaturation = { single: o.perSec, ...Object.fromEntries(o.entry.map((e) => [e.kind, e.perSec])) };
  perpNativeRecoverPerSec = o.nativeRecoverPerSec;
}
if (!only || only === 'perp' || only === 'perp-orders' || only === 'perp-scaleout') {
  if (process.env.REDIS_URL && process.env.DATABASE_URL) {
    console.log('\nscale-out (issue 40 item 5): the same single REST orders through one process and through two perp API processes and one engine over Redis Streams, both on PostgreSQL, CPU per order (bench/perp-scaleout-bench.ts):');
    perpNativeRecoverPerSec ??= (await runSignatureRecoveryBench()).nativePerSec;
    console.log((await runPerpScaleOutBench({ nativeRecoverPerSec: perpNativeRecoverPerSec })).table);
    console.log('\nwhat one hop between processes costs on this machine, the floor under each of the scale-out\'s hops (bench/wakeup-cost-bench.ts; BENCH_ONLY=wakeup alone):');
    console.log((await runWakeupCostBench()).table);
  } else {
    console.log('(set REDIS_URL and DATABASE_URL for the scale-out figure: two perp API processes and one engine over Redis Streams against one process, on PostgreSQL)');
  }
}
if (only === 'wakeup') {
  console.log('\nwhat one hop between processes costs on this machine (bench/wakeup-cost-bench.ts):');
  console.log((await runWakeupCostBench()).table);
}
if (!only || only === 'perp' || only === 'perp-latency') {
  console.log(
    `\nlatency at half of saturation (issue 40): an open loop at half the closed-loop throughput${perpSaturation ? ' measured above' : ''}, each latency from its scheduled send (bench/perp-latency-bench.ts):`,
  );
  console.log((await runPerpLatencyBench({ saturated: perpSaturation })).table);
}
if (!only || only === 'perp' || only === 'recovery-pool') {
  console.log('\nsignature recovery on worker threads (issue 40 item 6): SIGNATURE_WORKERS on and off, the load client pinned to core 1, the server on one core and on both (bench/recovery-pool-bench.ts):');
  console.log((await runRecoveryPoolBench()).table);
}
if (!only || only === 'perp' || only === 'perp-orders' || only === 'metrics') {
  console.log('\nthe cost of the Prometheus metrics on the same signed orders, with and without them (bench/perp-orders-bench.ts, runMetricsCostBench):');
  console.log((await runMetricsCostBench()).table);
}
if (!only || only === 'perp' || only === 'perp-risk') {
  console.log('\nliquidation against the open positions, and the engine with the liquidity pool quoting, in process, one core (bench/perp-risk-bench.ts):');
  const r = await runPerpRiskBench({ print: (l) => console.error(l) });
  console.log(r.table);
}
if (!only || only === 'perp' || only === 'perp-triggers') {
  console.log('\ntrigger orders: a mark update against resting stops and take-profits crossing 1 % of them, in process, one core (bench/perp-trigger-bench.ts):');
  const t = await runPerpTriggerBench({ print: (l) => console.error(l) });
  console.log(t.table);
}
if (!only || only === 'streams') {
  console.log('\nstream fan-out: 1,000 subscribers of one book while orders move it, against a bare ws broadcast of the same frames (bench/stream-fanout-bench.ts):');
  const f = await runStreamFanoutBench({ print: (l) => console.log(l) });
  console.log(`target: fan-out ÷ bare broadcast ≥ 0.5 → ${f.ratio.toFixed(2)} ${f.ratio >= 0.5 ? 'met' : 'NOT met'}`);
}
if (!only || only === 'startup') {
  console.log('\nstart-up, the compiled build against the sources through tsx (bench/startup-bench.ts):');
  const s = await runStartupBench();
  console.log(s.table);
}
if (!only || only === 'startup' || only === 'startup-slices') {
  console.log('\nthe bulk steps of a start beside a held lease (bench/startup-slices-bench.ts):');
  await runStartupSlicesBench({ print: (l) => console.log(l) });
}
