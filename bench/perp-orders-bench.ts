/**
 * Signed perpetual orders end to end over HTTP, against the ceiling of native signer recovery alone
 * (libsecp256k1, bench/signature-recovery-bench.ts) on the same machine in the same run — issue 21's
 * target: at least 0.25 of it — with each order's latency (p50/p99) and the server's CPU per order.
 *
 * The server is a child process: the perp API with a real engine behind it (sequencer journalling
 * to a fresh SQLite file with synchronous = FULL, the projector writing the history), production
 * logging. Each order goes through HMAC authentication, the typed message's checks, EIP-712
 * recovery, the nonce claim, admission and matching in the engine, the group-committed journal and
 * the answer. The parent pre-signs every order (the wallets' work, not the server's) and sends them
 * through autocannon from BENCH_PERP_CONNECTIONS (default 32) connections; half the wallets sell and
 * half buy around one price, so about half the orders trade. Then the floor: the same client and
 * bodies against bare Fastify (serveFloor). Beside it, on one core: signer recovery alone, native
 * (20 000 random signatures) and viem's JS; and EIP-712 recovery of the same signed orders (digest
 * and native recovery, what the server does per order) and with viem (digest and JS recovery, what
 * it did before issue 21).
 *
 *   npx tsx bench/perp-orders-bench.ts     (BENCH_PERP_ORDERS, BENCH_PERP_WALLETS, BENCH_PERP_CONNECTIONS, BENCH_PERP_PROF)
 *   npx tsx bench/perp-orders-bench.ts metrics-cost     (the metrics' cost alone: BENCH_METRICS_ORDERS, BENCH_METRICS_ROUNDS, BENCH_METRICS_SERVERS, BENCH_METRICS_SCRAPE_MS)
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance as nodePerformance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { signPerp } from '../src/auth/hmac.ts';
import { orderType } from '../src/perp/order-typed-data.ts';
import { perpDomain } from '../src/perp/perp-key-service.ts';
import { recoverSigner } from '../src/chain/signature-recovery.ts';
import { runSignatureRecoveryBench } from './signature-recovery-bench.ts';

const CHAIN_ID = 31337;
const VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const SYMBOL = 'AAPL-USD';

interface Ready {
  url: string;
  keys: Array<{ apiKey: string; apiSecret: string }>;
  /** The server's /metrics when it runs with BENCH_METRICS=on. */
  metricsUrl?: string;
}

/**
 * The venue's database: the SQLite file `dbPath`, or with BENCH_PG_SCHEMA (the two-apis topology
 * when DATABASE_URL is set) that PostgreSQL schema, as docs/deployment.md runs several processes.
 */
async function openBenchDatabase(dbPath: string, migrate: boolean) {
  const { openDatabase } = await import('../src/storage/database.ts');
  const schema = process.env.BENCH_PG_SCHEMA;
  return schema ? openDatabase({ url: process.env.DATABASE_URL!, schema, migrate }) : openDatabase({ sqlitePath: dbPath, migrate });
}

/** Answers the parent's `cpu` and `stop` messages for a server child. */
function serveControl(stop: () => Promise<void>): void {
  process.on('message', async (m: any) => {
    // The loop's busy time counts a synchronous SQLite commit waiting on fsync; CPU time does not.
    if (m === 'cpu') process.send?.({ cpu: process.cpuUsage(), elu: nodePerformance.eventLoopUtilization() });
    if (m === 'stop') {
      await stop();
      process.exit(0);
    }
  });
}

/**
 * The engine's side: sequencer journalling to `dbPath`, projector, the mark, the wallets' deposits
 * and API keys. With `prefix` (two-apis topology) it serves the engine over Redis Streams and
 * answers no HTTP; otherwise it also serves the perp API in process.
 */
async function serve(dbPath: string, masterHex: string, prefix: string, addresses: string[]): Promise<void> {
  const { createApiKeyService } = await import('../src/auth/api-key-service.ts');
  const { createMemoryNonceStore } = await import('../src/auth/nonce-store.ts');
  const { createSecretBox } = await import('../src/auth/secret-box.ts');
  const { createLogger } = await import('../src/lib/logger.ts');
  const { buildPerpApi } = await import('../src/perp/perp-api.ts');
  const { indexedBlockInfo } = await import('../src/perp/perp-venue.ts');
  const { createPerpProjector } = await import('../src/perp/projection/perp-projector.ts');
  const { createInProcessGateway } = await import('../src/perp/sequencer/engine-gateway.ts');
  const { EngineSequencer } = await import('../src/perp/sequencer/engine-sequencer.ts');
  const { perpStreams, serveEngineOverRedis } = await import('../src/perp/sequencer/redis-stream-transport.ts');
  const { openRedis } = await import('../src/storage/redis-client.ts');
  const db = await openBenchDatabase(dbPath, true);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const sequencer = new EngineSequencer({ db, logger });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  const projector = createPerpProjector({ db, gateway, feeAccount: sequencer.engine.feeAccountAddress, logger });
  await projector.start();
  await gateway.submit({ kind: 'setMarkPrice', id: 'bench-mark', ts: Date.now(), symbol: SYMBOL, markPriceTicks: 20_000, indexPriceTicks: 20_000 });
  const keys = createApiKeyService({ db, secretBox: createSecretBox(Buffer.from(masterHex, 'hex')), cacheTtlMs: 60_000 });
  const created: Ready['keys'] = [];
  for (const address of addresses) {
    await gateway.submit({ kind: 'deposit', id: `bench-dep-${address}`, ts: Date.now(), account: address.toLowerCase(), amount: 10_000_000n * 1_000_000n });
    const { key, apiSecret } = await keys.create({ api: 'perp', permissions: ['READ', 'TRADE'], ipWhitelist: [], chainId: CHAIN_ID, userAddress: address, label: 'bench' });
    created.push({ apiKey: key.apiKey, apiSecret });
  }
  if (prefix !== '-') {
    const redis = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: null, lazyConnect: true }, logger, 'perp bench engine');
    await redis.connect();
    const served = await serveEngineOverRedis(sequencer, redis, perpStreams(prefix));
    process.send?.({ ready: true, url: '', keys: created });
    serveControl(async () => {
      await served.stop();
      redis.disconnect();
      await projector.stop();
      await sequencer.stop();
      await db.close();
    });
    return;
  }
  const app = await buildPerpApi({
    chainId: CHAIN_ID, db, keys, nonces: createMemoryNonceStore(), rateLimit: { limit: 1_000_000_000 }, logger, bodyLimitBytes: 65_536,
    marginVault: VAULT, venue: { gateway, engine: () => sequencer.engine, blockInfo: () => indexedBlockInfo(db) },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  // BENCH_METRICS=on: as a stack with METRICS_PORT set serves them (instrumented hot paths, the
  // process metrics, the engine's gauges on a listener of its own); otherwise as METRICS_PORT=off.
  const { startMetricsServer } = await import('../src/observability/metrics-server.ts');
  const metrics = process.env.BENCH_METRICS === 'on'
    ? await startMetricsServer({ host: '127.0.0.1', port: 0, logger, source: { engine: () => sequencer.engine } })
    : undefined;
  if (metrics) {
    const { metricsRegistry } = await import('../src/observability/metrics-registry.ts');
    process.on('message', async (m: any) => {
      if (m !== 'render') return;
      const c0 = process.cpuUsage();
      for (let i = 0; i < 20; i++) await metricsRegistry.metrics();
      const c = process.cpuUsage(c0);
      process.send?.({ rendered: (c.user + c.system) / 20 });
    });
  }
  process.send?.({ ready: true, url, keys: created, metricsUrl: metrics?.url });
  serveControl(async () => {
    await metrics?.stop();
    await app.close();
    await projector.stop();
    await sequencer.stop();
    await db.close();
  });
}

/**
 * A perp API apart from the engine, as `--role perp-api` runs it with PERP_ENGINE_STREAM: commands
 * over Redis Streams, reads from a replica of the journal, nonces and rate limits in Redis.
 */
async function serveApi(dbPath: string, masterHex: string, prefix: string): Promise<void> {
  const { createApiKeyService } = await import('../src/auth/api-key-service.ts');
  const { createRedisNonceStore } = await import('../src/auth/nonce-store.ts');
  const { createSecretBox } = await import('../src/auth/secret-box.ts');
  const { createLogger } = await import('../src/lib/logger.ts');
  const { buildPerpApi } = await import('../src/perp/perp-api.ts');
  const { indexedBlockInfo } = await import('../src/perp/perp-venue.ts');
  const { createJournalReplica } = await import('../src/perp/sequencer/journal-replica.ts');
  const { createRedisGateway, perpStreams } = await import('../src/perp/sequencer/redis-stream-transport.ts');
  const { openRedis } = await import('../src/storage/redis-client.ts');
  const db = await openBenchDatabase(dbPath, false);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const commands = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: null, lazyConnect: true }, logger, 'perp bench commands');
  await commands.connect();
  const shared = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true }, logger, 'perp bench nonces');
  await shared.connect();
  const gateway = createRedisGateway(commands, perpStreams(prefix));
  const replica = createJournalReplica({ db, logger });
  await replica.start();
  const keys = createApiKeyService({ db, secretBox: createSecretBox(Buffer.from(masterHex, 'hex')), cacheTtlMs: 60_000 });
  const app = await buildPerpApi({
    chainId: CHAIN_ID, db, keys, nonces: createRedisNonceStore(shared, { prefix: `${prefix}:nonce:` }), rateLimit: { limit: 1_000_000_000, redis: shared }, logger, bodyLimitBytes: 65_536,
    marginVault: VAULT, venue: { gateway, engine: () => replica.engine(), blockInfo: () => indexedBlockInfo(db), caughtUp: (seq) => replica.caughtUp(seq) },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.send?.({ ready: true, url, keys: [] });
  serveControl(async () => {
    await app.close();
    await gateway.close();
    await replica.stop();
    commands.disconnect();
    shared.disconnect();
    await db.close();
  });
}

/**
 * The floor under the figure: bare Fastify (no hook, the default JSON parser) answering every POST
 * of an order with a fixed order-sized JSON, no work behind it. The same client sends it the same
 * bodies; what the venue does per order is the difference.
 */
async function serveFloor(): Promise<void> {
  const { default: fastify } = await import('fastify');
  const app = fastify({ logger: false });
  const answer = {
    code: 0, message: 'success', trace: 'floor',
    data: { orderId: '0x' + 'ab'.repeat(32), clientOrderId: '', symbol: SYMBOL, side: 'BUY', orderType: 'LIMIT', status: 'NEW', size: '1', price: '200.00', filledSize: '0', timeInForce: 'GTC', createdTime: 0 },
  };
  app.post('/v4/public/trader/orders', async (request) => {
    if (typeof (request.body as { signature?: unknown })?.signature !== 'string') throw new Error('no signature');
    return answer;
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.send?.({ ready: true, url, keys: [] });
  serveControl(() => app.close());
}

type SignedOrder = { wallet: number; body: string; message: Record<string, unknown>; signature: `0x${string}` };

/**
 * `count` orders signed by the wallets in turn: half the wallets sell and half buy, around one
 * price, so about half the orders trade. Each order's nonce is its index, so a list is sent once.
 */
async function signOrders(wallets: PrivateKeyAccount[], count: number): Promise<SignedOrder[]> {
  const domain = perpDomain(CHAIN_ID, VAULT);
  const signed: SignedOrder[] = [];
  for (let i = 0; i < count; i++) {
    const w = i % wallets.length;
    const sell = w % 2 === 0;
    const message = {
      account: wallets[w].address, symbol: SYMBOL, side: sell ? 'SELL' : 'BUY', orderType: 'LIMIT', size: '1',
      price: (200 + (sell ? -1 : 1) * ((i % 7) - 3) * 0.01).toFixed(2), timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
      nonce: String(i + 1), expiry: String(Date.now() + 3_600_000),
    };
    const typed = orderType.build(domain, message);
    const signature = await wallets[w].signTypedData(typed as never);
    signed.push({ wallet: w, message: typed.message, signature, body: JSON.stringify({ message: typed.message, signature }) });
  }
  return signed;
}

export interface PerpOrdersBenchResult {
  orders: number;
  failures: number;
  seconds: number;
  perSec: number;
  /** Per-order latency (client side, request to parsed answer), ms. */
  p50Ms: number;
  p99Ms: number;
  /** Server process CPU (user + system) per order, µs. */
  serverCpuUsPerOrder: number;
  /** Server event loop busy time per order, µs (includes blocking waits such as a synchronous fsync). */
  serverLoopUsPerOrder: number;
  /** Signer recovery alone, one core: native libsecp256k1 and viem's JS. */
  nativeRecoverPerSec: number;
  jsRecoverPerSec: number;
  /** EIP-712 recovery of the orders themselves (digest + recovery), one core: native and viem. */
  typedNativePerSec: number;
  typedViemPerSec: number;
  /** viem's hashTypedData of the orders alone, one core. */
  digestPerSec: number;
  /** Bare Fastify answering the same bodies from the same client (see serveFloor), and its CPU per request. */
  floorPerSec: number;
  floorCpuUsPerRequest: number;
  /** perSec ÷ nativeRecoverPerSec (target ≥ 0.25). */
  ratio: number;
  /** The former figure: perSec ÷ typedViemPerSec. */
  recoverPerSec: number;
  table: string;
}

export type PerpOrdersTopology = 'one-process' | 'two-apis';

interface ServerChild {
  child: ReturnType<typeof fork>;
  ready: Ready;
}

/** `masterHex` travels in the child's environment, never its argv (which `ps` shows to every user). */
function startChild(args: string[], masterHex: string, env: Record<string, string> = {}): Promise<ServerChild> {
  const child = fork(new URL(import.meta.url).pathname, args, {
    env: { ...process.env, ...env, BENCH_MASTER_KEY: masterHex },
    // BENCH_PERP_PROF=<dir>: a V8 CPU profile of each server process (start-up included) in <dir>.
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_PERP_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PERP_PROF] : [])],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<ServerChild>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`perp bench server exited with ${code}`)));
    child.on('message', (m: any) => m?.ready && resolve({ child, ready: m }));
  });
}

async function stopChild(child: ServerChild['child']): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.send('stop');
  await exited;
}

/**
 * `one-process`: the perp API with the engine in one process. `two-apis` (needs REDIS_URL): the
 * engine in a process of its own serving two perp API processes over Redis Streams, the orders
 * sent to both in turn; then `nativeRecoverPerSec` (measured by a one-process run) replaces the
 * one-core measures.
 */
export async function runPerpOrdersBench(
  opts: { orders?: number; wallets?: number; connections?: number; topology?: PerpOrdersTopology; nativeRecoverPerSec?: number } = {},
): Promise<PerpOrdersBenchResult> {
  const orders = opts.orders ?? Number(process.env.BENCH_PERP_ORDERS ?? 4_000);
  const walletCount = opts.wallets ?? Number(process.env.BENCH_PERP_WALLETS ?? 16);
  const connections = opts.connections ?? Number(process.env.BENCH_PERP_CONNECTIONS ?? 32);
  const topology = opts.topology ?? 'one-process';
  const wallets: PrivateKeyAccount[] = Array.from({ length: walletCount }, () => privateKeyToAccount(generatePrivateKey()));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-perp-bench-'));
  const dbPath = path.join(dir, 'bench.sqlite');
  const master = randomBytes(32).toString('hex');
  const prefix = topology === 'two-apis' ? `bench-perp-${process.pid}-${Date.now().toString(36)}` : '-';
  // Several processes share PostgreSQL when there is one (the deployed topology): on one SQLite file
  // the API processes' nonce claims would queue behind the engine's journal for the file's lock.
  const pgSchema = topology === 'two-apis' && process.env.DATABASE_URL ? `bench_perp_${process.pid}_${Date.now().toString(36)}` : undefined;
  const env: Record<string, string> = pgSchema ? { BENCH_PG_SCHEMA: pgSchema } : {};
  const servers: ServerChild[] = [await startChild(['server', dbPath, prefix, ...wallets.map((w) => w.address)], master, env)];
  if (topology === 'two-apis') servers.push(...(await Promise.all([0, 1].map(() => startChild(['api', dbPath, prefix], master, env)))));
  const ready: Ready = { url: servers[0].ready.url, keys: servers[0].ready.keys };
  const urls = topology === 'two-apis' ? servers.slice(1).map((s) => s.ready.url) : [ready.url];
  try {
    const domain = perpDomain(CHAIN_ID, VAULT);
    // Pre-signed: each order's signature is the wallet's work, done before the clock starts.
    const warm = Math.min(200, Math.floor(orders / 10));
    const signed = await signOrders(wallets, orders + warm);
    let failures = 0;
    let latency = { p50: 0, p99: 0 };
    /**
     * Sends `list` through autocannon, `connections` spread over `targets`, each request HMAC-signed
     * as it leaves (the timestamp is checked against a window). autocannon writes raw HTTP on its
     * sockets: fetch cost this client about as much CPU per request as the bare server below it
     * (it held the floor near 900/s), so the client, not the venue, would have set the figure.
     */
    const run = async (list: typeof signed, targets: string[] = urls): Promise<number> => {
      let next = 0;
      let refused = 0;
      const t0 = process.hrtime.bigint();
      const share = Math.ceil(list.length / targets.length);
      const results = await Promise.all(
        targets.map((url, t) =>
          autocannon({
            url,
            connections: Math.max(1, Math.floor(connections / targets.length)),
            amount: Math.min(share, list.length - t * share),
            requests: [
              signedOrderRequest(() => list[next++], ready.keys, () => refused++),
            ],
          }),
        ),
      );
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      failures = refused + results.reduce((n, r) => n + r.errors, 0);
      // Each target's percentiles; with two, the worse of them.
      latency = { p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) };
      return seconds;
    };
    const cpuOf = (child: ServerChild['child']) =>
      new Promise<{ us: number; activeMs: number }>((resolve) => {
        const on = (m: any) => {
          if (m?.cpu) {
            child.off('message', on);
            resolve({ us: m.cpu.user + m.cpu.system, activeMs: m.elu.active });
          }
        };
        child.on('message', on);
        child.send('cpu');
      });
    // Every server process's CPU and loop time, summed.
    const cpu = async (of: ServerChild[] = servers) => {
      const all = await Promise.all(of.map((s) => cpuOf(s.child)));
      return all.reduce((a, b) => ({ us: a.us + b.us, activeMs: a.activeMs + b.activeMs }), { us: 0, activeMs: 0 });
    };
    await run(signed.slice(0, warm));
    const cpu0 = await cpu();
    const seconds = await run(signed.slice(warm));
    const cpu1 = await cpu();
    const serverCpuUsPerOrder = (cpu1.us - cpu0.us) / orders;
    const serverLoopUsPerOrder = ((cpu1.activeMs - cpu0.activeMs) * 1000) / orders;
    const perSec = orders / seconds;
    const { p50: p50Ms, p99: p99Ms } = latency;
    const refusedInRun = failures;

    if (opts.nativeRecoverPerSec !== undefined) {
      const ratio = perSec / opts.nativeRecoverPerSec;
      const table = [
        '| figure | value |',
        '| --- | ---: |',
        `| signed orders end to end over HTTP, ${topology === 'two-apis' ? `two perp API processes and one engine over Redis Streams, ${pgSchema ? 'PostgreSQL' : 'one SQLite file'}` : 'one process'} (${walletCount} wallets, ${connections} connections, ${orders} orders, ${refusedInRun} refused) | ${perSec.toFixed(0)}/s |`,
        `| latency per order p50 / p99 | ${p50Ms.toFixed(1)} / ${p99Ms.toFixed(1)} ms |`,
        `| CPU per order, all ${servers.length} server processes (user + system) | ${serverCpuUsPerOrder.toFixed(0)} µs |`,
        `| end to end ÷ native recovery alone (target ≥ 0.25) | ${ratio.toFixed(3)} ${ratio >= 0.25 && refusedInRun === 0 ? 'met' : 'NOT met'} |`,
      ].join('\n');
      return {
        orders, failures: refusedInRun, seconds, perSec, p50Ms, p99Ms, serverCpuUsPerOrder, serverLoopUsPerOrder,
        nativeRecoverPerSec: opts.nativeRecoverPerSec, jsRecoverPerSec: 0, typedNativePerSec: 0, typedViemPerSec: 0, digestPerSec: 0,
        floorPerSec: 0, floorCpuUsPerRequest: 0, ratio, recoverPerSec: 0, table,
      };
    }
    // The floor: bare Fastify, the same client and bodies (serveFloor), once the venue is idle.
    const floor = await startChild(['floor'], master);
    let floorPerSec: number;
    let floorCpuUsPerRequest: number;
    try {
      await run(signed.slice(0, warm), [floor.ready.url]);
      const f0 = await cpu([floor]);
      floorPerSec = orders / (await run(signed.slice(warm), [floor.ready.url]));
      floorCpuUsPerRequest = ((await cpu([floor])).us - f0.us) / orders;
    } finally {
      await stopChild(floor.child);
    }
    // Signer recovery alone, one core, in this process once the server is idle.
    const alone = await runSignatureRecoveryBench();
    // EIP-712 recovery of the same signed orders, one core: digest and recovery, native and viem.
    const types = orderType.build(domain, signed[0].message).types;
    const sample = signed.slice(warm, warm + Math.min(orders, 1_000));
    const typedArgs = (o: (typeof signed)[number]) =>
      ({ domain, types, primaryType: 'Order', message: orderType.parseMessage(o.message), signature: o.signature }) as Parameters<typeof recoverTypedDataAddress>[0];
    let typedNativePerSec = 0;
    let typedViemPerSec = 0;
    let digestPerSec = 0;
    for (let round = 0; round < 3; round++) {
      let t0 = process.hrtime.bigint();
      for (const o of sample) hashTypedData(typedArgs(o) as Parameters<typeof hashTypedData>[0]);
      digestPerSec = Math.max(digestPerSec, sample.length / (Number(process.hrtime.bigint() - t0) / 1e9));
      t0 = process.hrtime.bigint();
      for (const o of sample) {
        const a = typedArgs(o);
        if (recoverSigner(hashTypedData(a as Parameters<typeof hashTypedData>[0]), o.signature) !== o.message.account) throw new Error('perp bench: wrong signer');
      }
      typedNativePerSec = Math.max(typedNativePerSec, sample.length / (Number(process.hrtime.bigint() - t0) / 1e9));
      if (round === 2) break;
      t0 = process.hrtime.bigint();
      for (const o of sample) await recoverTypedDataAddress(typedArgs(o));
      typedViemPerSec = Math.max(typedViemPerSec, sample.length / (Number(process.hrtime.bigint() - t0) / 1e9));
    }
    const ratio = perSec / alone.nativePerSec;
    const table = [
      '| figure | value |',
      '| --- | ---: |',
      `| signed orders end to end over HTTP (${walletCount} wallets, ${connections} connections, ${orders} orders, ${refusedInRun} refused) | ${perSec.toFixed(0)}/s |`,
      `| latency per order p50 / p99 | ${p50Ms.toFixed(1)} / ${p99Ms.toFixed(1)} ms |`,
      `| server CPU per order (user + system, all threads) | ${serverCpuUsPerOrder.toFixed(0)} µs |`,
      `| server event loop busy per order (its CPU, synchronous waits such as SQLite's fsync, time descheduled) | ${serverLoopUsPerOrder.toFixed(0)} µs (${((100 * (cpu1.activeMs - cpu0.activeMs)) / (seconds * 1000)).toFixed(0)}% of the run) |`,
      `| floor: bare Fastify answering the same bodies from the same client, no work behind it | ${floorPerSec.toFixed(0)}/s (CPU ${floorCpuUsPerRequest.toFixed(0)} µs a request; end to end is ${(perSec / floorPerSec).toFixed(2)} of it) |`,
      `| signer recovery alone, native libsecp256k1 (${alone.signatures} signatures, one core) | ${alone.nativePerSec.toFixed(0)}/s |`,
      `| signer recovery alone, viem JS (${alone.jsSignatures} signatures, one core) | ${alone.jsPerSec.toFixed(0)}/s |`,
      `| EIP-712 digest alone of these orders, viem hashTypedData (one core) | ${digestPerSec.toFixed(0)}/s (${(1e6 / digestPerSec).toFixed(0)} µs) |`,
      `| EIP-712 recovery of these orders, digest + native (one core) | ${typedNativePerSec.toFixed(0)}/s |`,
      `| EIP-712 recovery of these orders, viem recoverTypedDataAddress (one core) | ${typedViemPerSec.toFixed(0)}/s |`,
      `| end to end ÷ native recovery alone (target ≥ 0.25) | ${ratio.toFixed(3)} ${ratio >= 0.25 && refusedInRun === 0 ? 'met' : 'NOT met'} |`,
      `| end to end ÷ viem EIP-712 recovery (the former yardstick) | ${(perSec / typedViemPerSec).toFixed(2)} |`,
    ].join('\n');
    return {
      orders, failures: refusedInRun, seconds, perSec, p50Ms, p99Ms, serverCpuUsPerOrder, serverLoopUsPerOrder,
      nativeRecoverPerSec: alone.nativePerSec, jsRecoverPerSec: alone.jsPerSec, typedNativePerSec, typedViemPerSec, digestPerSec,
      floorPerSec, floorCpuUsPerRequest, ratio, recoverPerSec: typedViemPerSec, table,
    };
  } finally {
    for (const { child } of servers.slice().reverse()) await stopChild(child);
    if (pgSchema) {
      const { openDatabase } = await import('../src/storage/database.ts');
      const { sql } = await import('kysely');
      const admin = await openDatabase({ url: process.env.DATABASE_URL!, migrate: false });
      await sql`drop schema if exists ${sql.id(pgSchema)} cascade`.execute(admin.kysely);
      await admin.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One autocannon request that takes the next order from `take` and HMAC-signs it as it leaves (the
 * timestamp is checked against a window); `refused` hears every answer that is not code 0.
 */
function signedOrderRequest(take: () => SignedOrder, keys: Ready['keys'], refused: () => void) {
  const pathOf = '/v4/public/trader/orders';
  return {
    setupRequest: (req: Record<string, unknown>) => {
      const o = take();
      const key = keys[o.wallet];
      const ts = String(Date.now());
      return {
        ...req, method: 'POST', path: pathOf, body: o.body,
        headers: {
          'content-type': 'application/json', 'X-Api-Key': key.apiKey, 'X-Api-Ts': ts, 'X-Chain-Id': String(CHAIN_ID),
          'X-Api-Sign': signPerp(key.apiSecret, { ts, method: 'POST', requestPath: pathOf, body: o.body }),
        },
      };
    },
    onResponse: (status: number, body: string) => {
      if (status !== 200 || (JSON.parse(body) as { code: number }).code !== 0) refused();
    },
  };
}

/** Sends `list` to one server through autocannon, each request HMAC-signed as it leaves; answers the seconds and the refused. */
async function sendOrders(list: SignedOrder[], url: string, keys: Ready['keys'], connections: number): Promise<{ seconds: number; refused: number }> {
  let next = 0;
  let refused = 0;
  const t0 = process.hrtime.bigint();
  const r = await autocannon({
    url,
    connections,
    amount: list.length,
    requests: [
      signedOrderRequest(() => list[next++], keys, () => refused++),
    ],
  });
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, refused: refused + r.errors };
}

let metricsModule: typeof import('../src/observability/metrics-registry.ts') | undefined;

/**
 * The record calls one signed order makes with the metrics on, timed alone in this process: the
 * HTTP request counted and timed (its route pattern read as the hook reads it), the engine clock
 * read twice, and its share of a journal flush (the command counted and timed; the flush timed once
 * per batch of `batch` rows, about what group commit gives under this load). A floor under the
 * end-to-end figure, without its noise.
 */
function measureMetricsCalls(batch = 16, n = 200_000): { usPerOrder: number; batch: number } {
  const { acquireMetrics, metricsClock, recordHttpRequest, recordJournalFlush } = metricsModule!;
  const release = acquireMetrics();
  try {
    const app = {};
    const rows = Array.from({ length: batch }, () => ({ row: { kind: 'placeOrder' }, result: { ok: true }, appliedAt: 0 }));
    // As Fastify's request.routeOptions getter builds it, per request.
    const context = { config: { url: '/v4/public/trader/orders', method: 'POST' }, handler: () => undefined, schema: {} };
    const routeOptions = () => ({ method: context.config.method, url: context.config.url, bodyLimit: 65_536, handlerTimeout: 0, attachValidation: false, logLevel: '', exposeHeadRoute: true, prefixTrailingSlash: '', handler: context.handler, config: context.config, schema: context.schema, version: undefined });
    let best = Infinity;
    for (let round = 0; round < 3; round++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        recordHttpRequest(app, 'POST', routeOptions().url, 200, 1.5);
        rows[i % batch].appliedAt = metricsClock();
        if (i % batch === batch - 1) recordJournalFlush(metricsClock(), rows);
      }
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e3 / n);
    }
    return { usPerOrder: best, batch };
  } finally {
    release();
  }
}

/** A server child's CPU (user + system, µs) so far. */
function childCpuUs(child: ServerChild['child']): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: any) => {
      if (m?.cpu) {
        child.off('message', on);
        resolve(m.cpu.user + m.cpu.system);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

export interface MetricsCostBenchResult {
  /** Orders each server took in the measured rounds. */
  orders: number;
  rounds: number;
  /** Servers of each kind. */
  servers: number;
  /** Server CPU per order, mean of the servers without metrics and of those with. */
  offCpuUsPerOrder: number;
  onCpuUsPerOrder: number;
  /** (on − off) ÷ off, percent (target ≤ 3). */
  overheadPct: number;
  /** The spread between servers of the same kind (largest − smallest) ÷ their mean, percent: the noise. */
  offSpreadPct: number;
  onSpreadPct: number;
  /** What the record calls of one order cost alone, in process, µs. */
  callsUsPerOrder: number;
  /** CPU of one /metrics rendering in the instrumented server, µs. */
  renderUs: number;
  perSec: number;
  scrapes: number;
  failures: number;
  table: string;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The cost of the metrics on the signed order path (issue 27's target: at most 3 % of server CPU
 * per order). BENCH_METRICS_SERVERS (default 3) servers as above as with METRICS_PORT=off, and as
 * many with the metrics on (BENCH_METRICS=on: hot paths recording, process metrics, /metrics on its
 * own listener, each scraped every BENCH_METRICS_SCRAPE_MS, default 15 000 as Prometheus does), all
 * taking the same pre-signed orders at the same time, in BENCH_METRICS_ROUNDS rounds whose send
 * order turns. At once, so that whatever else runs on the shared cores weighs on each alike (run one
 * after the other, single rounds differed by ±30 %); several of each, because two identical server
 * processes differ by a few percent on their own (each one's JIT decisions): the spread within
 * each kind is printed beside the difference between them. Beside it, two floors without that
 * noise: the record calls of one order timed alone in process, and one scrape's rendering timed in
 * an instrumented server.
 */
export async function runMetricsCostBench(opts: { orders?: number; rounds?: number; servers?: number; wallets?: number; connections?: number } = {}): Promise<MetricsCostBenchResult> {
  const orders = opts.orders ?? Number(process.env.BENCH_METRICS_ORDERS ?? 9_000);
  const rounds = Math.max(2, opts.rounds ?? Number(process.env.BENCH_METRICS_ROUNDS ?? 9));
  const perKind = Math.max(1, opts.servers ?? Number(process.env.BENCH_METRICS_SERVERS ?? 3));
  const walletCount = opts.wallets ?? Number(process.env.BENCH_PERP_WALLETS ?? 16);
  const connections = opts.connections ?? Number(process.env.BENCH_PERP_CONNECTIONS ?? 32);
  const scrapeMs = Number(process.env.BENCH_METRICS_SCRAPE_MS ?? 15_000);
  metricsModule = await import('../src/observability/metrics-registry.ts');
  const wallets = Array.from({ length: walletCount }, () => privateKeyToAccount(generatePrivateKey()));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-metrics-bench-'));
  const master = randomBytes(32).toString('hex');
  const addresses = wallets.map((w) => w.address);
  // Interleaved (off, on, off, on, …): no kind is always started first.
  const kinds = Array.from({ length: 2 * perKind }, (_, i) => (i % 2 === 0 ? 'off' : 'on'));
  const servers: ServerChild[] = [];
  let scraper: NodeJS.Timeout | undefined;
  try {
    for (const [i, kind] of kinds.entries()) {
      servers.push(await startChild(['server', path.join(dir, `${i}-${kind}.sqlite`), '-', ...addresses], master, { BENCH_METRICS: kind }));
    }
    const scraped = servers.filter((_, i) => kinds[i] === 'on');
    if (scraped.some((s) => !s.ready.metricsUrl) || servers.some((s, i) => kinds[i] === 'off' && s.ready.metricsUrl)) throw new Error('metrics bench: the servers did not start as asked');
    const each = Math.max(1, Math.floor(connections / servers.length));
    const warm = 1_000;
    const chunk = Math.floor(orders / rounds);
    const signed = await signOrders(wallets, warm + chunk * rounds);
    await Promise.all(servers.map((s) => sendOrders(signed.slice(0, warm), s.ready.url, s.ready.keys, each)));
    let scrapes = 0;
    const scrape = () => {
      for (const s of scraped) {
        void fetch(s.ready.metricsUrl!).then(async (r) => {
          await r.text();
          if (r.status === 200) scrapes++;
        });
      }
    };
    scrape();
    scraper = setInterval(scrape, scrapeMs);
    const cpuUs = servers.map(() => 0);
    let seconds = 0;
    let failures = 0;
    for (let k = 0; k < rounds; k++) {
      const list = signed.slice(warm + k * chunk, warm + (k + 1) * chunk);
      const cpu0 = await Promise.all(servers.map((s) => childCpuUs(s.child)));
      // Which server's load starts first turns each round, so none is always first (or last).
      const order = servers.map((_, i) => (i + k) % servers.length);
      const sentInOrder = await Promise.all(order.map((i) => sendOrders(list, servers[i].ready.url, servers[i].ready.keys, each)));
      const cpu1 = await Promise.all(servers.map((s) => childCpuUs(s.child)));
      servers.forEach((_, i) => (cpuUs[i] += cpu1[i] - cpu0[i]));
      seconds += Math.max(...sentInOrder.map((r) => r.seconds));
      failures += sentInOrder.reduce((n, r) => n + r.refused, 0);
    }
    clearInterval(scraper);
    scraper = undefined;
    // The instrumented servers did record: every order each took is in its request counter (read
    // once the last rendering, which answers scrapes for a second, has expired).
    await new Promise((r) => setTimeout(r, 1_100));
    for (const s of scraped) {
      const text = await (await fetch(s.ready.metricsUrl!)).text();
      const counted = /tokex_http_requests_total\{api="perp",method="POST",route="\/v4\/public\/trader\/orders",status="200"\} (\d+)/.exec(text);
      if (!counted || Number(counted[1]) < warm + chunk * rounds) throw new Error(`metrics bench: an instrumented server did not count its orders (${counted?.[1]})`);
    }
    const calls = measureMetricsCalls();
    const renderUs = await new Promise<number>((resolve) => {
      const child = scraped[0].child;
      const onMsg = (m: any) => {
        if (typeof m?.rendered === 'number') {
          child.off('message', onMsg);
          resolve(m.rendered);
        }
      };
      child.on('message', onMsg);
      child.send('render');
    });
    const measured = chunk * rounds;
    const perOrder = cpuUs.map((u) => u / measured);
    const off = perOrder.filter((_, i) => kinds[i] === 'off');
    const on = perOrder.filter((_, i) => kinds[i] === 'on');
    const offUs = mean(off);
    const onUs = mean(on);
    const overheadPct = (100 * (onUs - offUs)) / offUs;
    const spread = (xs: number[]) => (100 * (Math.max(...xs) - Math.min(...xs))) / mean(xs);
    const perSec = measured / seconds;
    const pct = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} %`;
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    const table = [
      '| figure | value |',
      '| --- | ---: |',
      `| signed orders, ${measured} to each of ${servers.length} servers at once (${rounds} rounds, ${each} connections each, ${failures} refused) | ${perSec.toFixed(0)}/s each |`,
      `| server CPU per order, metrics off (METRICS_PORT=off), ${perKind} servers | ${offUs.toFixed(1)} µs (${list(off)}; spread ${spread(off).toFixed(1)} %) |`,
      `| server CPU per order, metrics on, /metrics scraped every ${scrapeMs / 1000} s (${scrapes} scrapes), ${perKind} servers | ${onUs.toFixed(1)} µs (${list(on)}; spread ${spread(on).toFixed(1)} %) |`,
      `| cost of the metrics per order: on ÷ off − 1 (target ≤ 3 %) | ${pct(overheadPct)} ${overheadPct <= 3 && failures === 0 ? 'met' : 'NOT met'} |`,
      `| one scrape's rendering in an instrumented server (CPU; per order at ${perSec.toFixed(0)} orders/s and one scrape every ${scrapeMs / 1000} s) | ${(renderUs / 1000).toFixed(2)} ms (${(renderUs / ((scrapeMs / 1000) * perSec)).toFixed(2)} µs) |`,
      `| the record calls of one order alone, in process, one core (the request counted and timed, the command counted and timed, its share of a ${calls.batch}-row journal flush) | ${calls.usPerOrder.toFixed(2)} µs = ${((100 * calls.usPerOrder) / offUs).toFixed(2)} % |`,
    ].join('\n');
    return {
      orders: measured, rounds, servers: perKind, offCpuUsPerOrder: offUs, onCpuUsPerOrder: onUs, overheadPct,
      offSpreadPct: spread(off), onSpreadPct: spread(on), callsUsPerOrder: calls.usPerOrder, renderUs, perSec, scrapes, failures, table,
    };
  } finally {
    if (scraper) clearInterval(scraper);
    for (const s of servers.reverse()) await stopChild(s.child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'server') {
  const [dbPath, prefix, ...addresses] = process.argv.slice(3);
  await serve(dbPath, process.env.BENCH_MASTER_KEY!, prefix, addresses);
} else if (process.argv[2] === 'floor') {
  await serveFloor();
} else if (process.argv[2] === 'api') {
  const [dbPath, prefix] = process.argv.slice(3);
  await serveApi(dbPath, process.env.BENCH_MASTER_KEY!, prefix);
} else if (process.argv[2] === 'metrics-cost') {
  console.log((await runMetricsCostBench()).table);
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await runPerpOrdersBench();
  console.log(r.table);
  console.log((await runMetricsCostBench()).table);
  if (process.env.REDIS_URL) console.log((await runPerpOrdersBench({ topology: 'two-apis', nativeRecoverPerSec: r.nativeRecoverPerSec })).table);
}
