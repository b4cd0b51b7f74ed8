/**
 * Two trees' stock API side by side (issue 30): where did a change's time per request go? One stack
 * (this tree's), then for each target fresh `api` server processes of both trees beside it, sharing
 * its data directory and chain, and short measured rounds interleaved at a fine grain — A, B and the
 * bare route on process i, in alternating order — so that a machine shared with others, whose load
 * swings within a minute, weighs on both sides alike. `npm run bench` runs each tree at another
 * time, and on this 2-core machine two runs a few minutes apart differed by more than the change.
 *
 *   BENCH_AB_A=/work/wt-before npx tsx bench/stock-ab-bench.ts
 *
 * BENCH_AB_A: the other tree (a git worktree with node_modules and the generated ABI in place),
 * side A; side B is this tree. BENCH_TARGETS=price,calldata (also balance), BENCH_PROCESSES=2 per
 * side, BENCH_ROUNDS=6 of BENCH_SECONDS=2 s each. A process's figure is its rounds' median, a side's
 * its best process's (run-bench.ts on why the best). BENCH_CPU_PROF=1: each round's CPU profile in
 * bench-profiles/ab/<A|B>-<target>.p<i>.<round>.cpuprofile with its request count beside it, for
 * bench/profile-diff.ts.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { StockClient } from '@tokex/sdk';
import { median, startBenchServer, stopServers, type Server } from './bench-children.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PROCESSES = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 2));
const PROFILE = Boolean(process.env.BENCH_CPU_PROF);
const treeA = process.env.BENCH_AB_A;
const treeB = path.resolve(new URL('..', import.meta.url).pathname);
if (!treeA) throw new Error('BENCH_AB_A=<the other tree> is required');

/** A bench-server.ts of `tree`, run from that tree. */
const startServer = (tree: string, mode: 'bare' | 'stack' | 'api', env: Record<string, string> = {}) => startBenchServer(mode, env, tree);

function ask<T>(child: ChildProcess, msg: unknown, match: (m: any) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const onMsg = (m: any) => {
      const v = match(m);
      if (v !== undefined) {
        child.off('message', onMsg);
        resolve(v);
      }
    };
    child.on('message', onMsg);
    child.send(msg as any);
  });
}
const cpuOf = (c: ChildProcess) => ask(c, 'cpu', (m) => (m?.cpu ? (m.cpu as { user: number; system: number }) : undefined));
const profile = (c: ChildProcess, msg: { profile: 'start' | 'stop'; file?: string }) =>
  PROFILE ? ask(c, msg, (m) => (m?.profiled === msg.profile ? true : undefined)) : Promise.resolve(true);

type Load = (count: number) => autocannon.Options;

/** Absolute: the other tree's servers run from their own directory. */
const PROFILE_DIR = path.resolve('bench-profiles/ab');

async function measure(server: Server, load: Load, file: string): Promise<{ cpu: number; sys: number; requests: number; errors: number }> {
  const opts = load(Math.ceil(8_000 * DURATION));
  await profile(server.child, { profile: 'start' });
  const c0 = await cpuOf(server.child);
  const r = await autocannon({ ...opts, duration: DURATION, connections: CONNECTIONS });
  const c1 = await cpuOf(server.child);
  await profile(server.child, { profile: 'stop', file: path.join(PROFILE_DIR, `${file}.cpuprofile`) });
  if (PROFILE) fs.writeFileSync(path.join(PROFILE_DIR, `${file}.requests`), String(r.requests.total));
  const n = Math.max(1, r.requests.total);
  return { cpu: (c1.user + c1.system - c0.user - c0.system) / n, sys: (c1.system - c0.system) / n, requests: r.requests.total, errors: r.errors + r.non2xx };
}

/** Requests signed ahead of the round, as run-bench.ts does, so that signing does not load the generator. */
function signed(key: { apiKey: string; apiSecret: string; chainId: number }, method: 'GET' | 'POST', p: string, body?: unknown) {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return (base: string): Load => {
    const client = new StockClient({ baseUrl: base, ...key });
    const one = () => {
      const s = client.sign(method, p, { body: text });
      const url = new URL(s.url);
      return { method, path: url.pathname + url.search, headers: s.headers, body: text };
    };
    return (count) => {
      const ahead = Array.from({ length: count }, one);
      let next = 0;
      return { url: base, requests: [{ method, setupRequest: (req: any) => ({ ...req, ...(next < ahead.length ? ahead[next++] : one()) }) }] } as autocannon.Options;
    };
  };
}


const stop = stopServers;

if (PROFILE) fs.mkdirSync(PROFILE_DIR, { recursive: true });
const bares: Server[] = [];
for (let i = 0; i < PROCESSES; i++) bares.push(await startServer(treeB, 'bare'));
const stack = await startServer(treeB, 'stack');
let apis: { A: Server[]; B: Server[] } = { A: [], B: [] };
try {
  const demo = stack.demo!;
  const keyOf = (k: { apiKey: string; apiSecret: string }) => ({ apiKey: k.apiKey, apiSecret: k.apiSecret, chainId: demo.chainId });
  const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
  const all = {
    price: signed(keyOf(demo.stock.keys.readOnly), 'GET', '/api/v1/prices/AAPL'),
    balance: signed(keyOf(demo.stock.keys.readOnly), 'GET', `/api/v1/users/${demo.wallets[0].address}/balance`),
    calldata: signed(keyOf(stack.unbound!), 'POST', '/api/v1/orders/calldata', order),
  } as const;
  const picked = (process.env.BENCH_TARGETS ?? 'price,calldata').split(',') as Array<keyof typeof all>;
  const bareLoad = (s: Server): Load => () => ({ url: s.url + '/bare' });
  const rows: Array<Record<string, string | number>> = [];
  for (const target of picked) {
    const env = { DATA_DIR: stack.dataDir!, RPC_URL: stack.rpcUrl! };
    apis = { A: [], B: [] };
    for (let i = 0; i < PROCESSES; i++) {
      apis.A.push(await startServer(treeA, 'api', env));
      apis.B.push(await startServer(treeB, 'api', env));
    }
    const load = all[target];
    for (const s of [...apis.A, ...apis.B]) await autocannon({ ...load(s.url)(30_000), duration: 2, connections: CONNECTIONS });
    for (const b of bares) await autocannon({ url: b.url + '/bare', duration: 1, connections: CONNECTIONS });
    const cpu = { A: apis.A.map(() => [] as number[]), B: apis.B.map(() => [] as number[]), bare: bares.map(() => [] as number[]) };
    const sys = { A: apis.A.map(() => [] as number[]), B: apis.B.map(() => [] as number[]) };
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < PROCESSES; i++) {
        // A then B on even rounds, B then A on odd: a drift within the round falls on both.
        const sides = (round + i) % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const);
        for (const side of sides) {
          const s = apis[side][i];
          const r = await measure(s, load(s.url), `${side}-${target}.p${i}.${round}`);
          cpu[side][i].push(r.cpu);
          sys[side][i].push(r.sys);
          errors += r.errors;
        }
        const b = bares[i];
        const r = await measure(b, bareLoad(b), `bare-${target}.p${i}.${round}`);
        cpu.bare[i].push(r.cpu);
      }
    }
    const best = (ps: number[][]) => Math.min(...ps.map(median));
    const bare = best(cpu.bare);
    const a = best(cpu.A);
    const bb = best(cpu.B);
    // The per-round difference on the same process index, B − A: its median is the change's cost.
    const diffs = cpu.A.flatMap((xs, i) => xs.map((x, r) => cpu.B[i][r] - x));
    rows.push({
      target,
      'bare µs': bare.toFixed(1),
      'A µs (per process)': `${a.toFixed(1)} (${cpu.A.map((x) => median(x).toFixed(1)).join(' / ')})`,
      'B µs (per process)': `${bb.toFixed(1)} (${cpu.B.map((x) => median(x).toFixed(1)).join(' / ')})`,
      'A kernel': median(sys.A.flat()).toFixed(1),
      'B kernel': median(sys.B.flat()).toFixed(1),
      'B − A µs (median of rounds)': median(diffs).toFixed(2),
      'ratio A': (bare / a).toFixed(3),
      'ratio B': (bare / bb).toFixed(3),
      errors,
    });
    await stop([...apis.A, ...apis.B]);
    apis = { A: [], B: [] };
  }
  console.log(`A = ${treeA}, B = ${treeB}; ${PROCESSES} processes per side, ${ROUNDS} rounds of ${DURATION} s, ${CONNECTIONS} connections; load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.table(rows);
} finally {
  await stop([...bares, ...apis.A, ...apis.B, stack]);
}
