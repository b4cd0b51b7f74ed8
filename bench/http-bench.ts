/**
 * The stock API's HTTP figures: server CPU per request of each target against a bare Fastify route
 * in the same run (bench-server.ts processes; autocannon on 127.0.0.1). On a 2-core machine the
 * load generator saturates its core first, so server CPU per request is the figure that counts.
 *
 * Method: each side runs in BENCH_PROCESSES (3) processes, and each API target on fresh ones. A
 * Node process settles, at random and for its whole life, at one of a few speeds (2 of 6 identical
 * bare servers at 15.8 µs a request, 4 at 12.5; one process a side made the ratio a draw, 0.48 and
 * 0.70 for the same code), and a process that served another route first runs the next slower. So
 * every process runs BENCH_ROUNDS (2) rounds of BENCH_SECONDS (3), each followed by a bare round; a
 * process's figure is its median round, a side's its best process's. Signed requests are signed
 * ahead of each round so that signing does not make the client the bottleneck.
 */
import autocannon from 'autocannon';
import { encodeFunctionData } from 'viem';
import { StockClient } from '@tokex/sdk';
import { stockRouterAbi } from '../src/chain/abi/generated/index.ts';
import { staticCallEncoder } from '../src/chain/static-call-encoder.ts';
import { median, startBenchServer, stopServers, type Server } from './bench-children.ts';
import { measureLoad, type LoadResult, type Row } from './runner.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PROCESSES = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 3));

/** Options for `count` requests; a signed target signs that many ahead of the round. */
type Load = autocannon.Options | ((count: number) => autocannon.Options);
const optionsOf = (load: Load, count: number) => (typeof load === 'function' ? load(count) : load);

/** Requests signed ahead of a round: the warm-up's rate with headroom for the round (at least 5,000 a second). */
const presignCount = (warmRps: number) => Math.ceil(Math.max(5_000, warmRps * 1.3) * DURATION);

/** A signed target: every request needs a fresh nonce, so the client signs each, ahead of the round (valid 45 s). */
function signed(key: { apiKey: string; apiSecret: string; chainId: number }, method: 'GET' | 'POST', path: string, body?: unknown): (base: string) => Load {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return (base) => {
    const client = new StockClient({ baseUrl: base, ...key });
    const one = () => {
      const s = client.sign(method, path, { body: text });
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

const round = (s: Server, load: Load, count: number): Promise<LoadResult> =>
  measureLoad(s.child, { ...optionsOf(load, count), duration: DURATION, connections: CONNECTIONS });
const warmUp = async (load: Load) => (await autocannon({ ...optionsOf(load, 60_000), duration: 2, connections: CONNECTIONS })).requests.average;
/** A process's figure is its median round; a side's its best process's. */
const bestOf = (ps: LoadResult[][]) => Math.min(...ps.filter((p) => p.length > 0).map((p) => median(p.map((r) => r.cpuUsPerReq))));

/** The hand-made router encoder against viem's in a tight loop, µs an order (the hand-made rule's same-run check). */
function compareOrderEncoders(): { fixedUs: number; viemUs: number } {
  const stock = '0x8ce361602B935680E8DeC218b820ff5056BeB7af' as const;
  const fixed = staticCallEncoder(stockRouterAbi, 'placeLimitOrder');
  const args = (i: number) => [stock, i & 1, 10n ** 18n + BigInt(i), 123_450_000_000_000_000_000n, 1n, 1_800_000_000n + BigInt(i)] as const;
  const viem = (i: number) => encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: args(i) as never });
  const hand = (i: number) => fixed(...args(i));
  if (viem(7) !== hand(7)) throw new Error('the encoders disagree');
  const time = (fn: (i: number) => string) => {
    const t = process.cpuUsage();
    for (let i = 0; i < 50_000; i++) fn(i);
    const u = process.cpuUsage(t);
    return (u.user + u.system) / 50_000;
  };
  let fixedUs = Infinity;
  let viemUs = Infinity;
  for (let r = 0; r < 3; r++) {
    fixedUs = Math.min(fixedUs, time(hand));
    viemUs = Math.min(viemUs, time(viem));
  }
  return { fixedUs, viemUs };
}

export async function runHttpBench(log: (line: string) => void = console.log): Promise<Row[]> {
  const bares: Server[] = [];
  for (let i = 0; i < PROCESSES; i++) bares.push(await startBenchServer('bare'));
  const stack = await startBenchServer('stack');
  let apis: Server[] = [];
  try {
    const demo = stack.demo!;
    const keyOf = (k: { apiKey: string; apiSecret: string }) => ({ apiKey: k.apiKey, apiSecret: k.apiSecret, chainId: demo.chainId });
    const user = demo.wallets[0].address;
    const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
    const targets = [
      { id: 'barepost', name: 'bare Fastify POST, the same JSON body', target: undefined, bare: true, load: (b: string): Load => ({ url: b + '/bare', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) }) },
      { id: 'healthz', name: 'unsigned GET /healthz (HTTP machinery, no auth)', target: undefined, bare: false, load: (b: string): Load => ({ url: b + '/healthz' }) },
      { id: 'price', name: 'signed GET /prices/{symbol}', target: 0.6, bare: false, load: signed(keyOf(demo.stock.keys.readOnly), 'GET', '/api/v1/prices/AAPL') },
      { id: 'balance', name: 'signed GET /users/{id}/balance (one eth_call)', target: undefined, bare: false, load: signed(keyOf(demo.stock.keys.readOnly), 'GET', `/api/v1/users/${user}/balance`) },
      { id: 'calldata', name: 'signed POST /orders/calldata', target: 0.5, bare: false, load: signed(keyOf(stack.unbound!), 'POST', '/api/v1/orders/calldata', order) },
      { id: 'precheck', name: 'signed POST /orders/calldata with the balance pre-check', target: undefined, bare: false, load: signed(keyOf(demo.stock.keys.writable), 'POST', '/api/v1/orders/calldata', order) },
    ];
    const picked = (process.env.BENCH_TARGETS ?? targets.map((t) => t.id).join(',')).split(',');
    const bareLoad = (b: Server): Load => ({ url: b.url + '/bare' });
    const bareRounds: LoadResult[][] = bares.map(() => []);
    for (const b of bares) await warmUp(bareLoad(b));
    const measured: Array<{ t: (typeof targets)[number]; ps: LoadResult[][] }> = [];
    for (const t of targets.filter((x) => picked.includes(x.id))) {
      if (!t.bare) {
        await stopServers(apis);
        apis = [];
        for (let i = 0; i < PROCESSES; i++) apis.push(await startBenchServer('api', { DATA_DIR: stack.dataDir!, RPC_URL: stack.rpcUrl! }));
      }
      const servers = t.bare ? bares : apis;
      const warmRps: number[] = [];
      for (const s of servers) warmRps.push(await warmUp(t.load(s.url)));
      const ps: LoadResult[][] = servers.map(() => []);
      // Processes alternate, each round followed by a bare round, so every process sees the same drift.
      for (let r = 0; r < ROUNDS; r++) {
        for (let i = 0; i < servers.length; i++) {
          ps[i].push(await round(servers[i], t.load(servers[i].url), presignCount(warmRps[i])));
          const b = bares[i % bares.length];
          bareRounds[i % bares.length].push(await round(b, bareLoad(b), 0));
        }
      }
      const errors = ps.flat().reduce((n, r) => n + r.errors, 0);
      log(`${t.name}: ${ps.map((p) => median(p.map((r) => r.cpuUsPerReq)).toFixed(1)).join(' / ')} µs a request by process, ${Math.round(median(ps.flat().map((r) => r.rps)))} req/s, p99 ${median(ps.flat().map((r) => r.p99))} ms${errors ? `, ${errors} errors` : ''}`);
      measured.push({ t, ps });
    }
    const bare = bestOf(bareRounds);
    const rows: Row[] = [{ figure: 'bare Fastify GET, server CPU a request (the baseline)', value: bare, unit: 'µs' }];
    for (const { t, ps } of measured) {
      const us = bestOf(ps);
      rows.push({ figure: `${t.name}, server CPU a request`, value: us, unit: 'µs', baseline: `bare GET ${bare.toFixed(1)} µs`, ratio: bare / us, target: t.target ? `≥ ${t.target}` : 'report', met: t.target ? bare / us >= t.target : undefined });
    }
    if (picked.includes('calldata')) {
      const e = compareOrderEncoders();
      rows.push({ figure: 'router calldata encoding, static-call-encoder.ts (hand-made), tight loop', value: e.fixedUs, unit: 'µs', baseline: `viem encodeFunctionData ${e.viemUs.toFixed(2)} µs`, ratio: e.viemUs / e.fixedUs, target: 'report' });
    }
    return rows;
  } finally {
    await stopServers([...bares, ...apis, stack]);
  }
}
