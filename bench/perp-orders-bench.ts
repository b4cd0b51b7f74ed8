/**
 * Signed perpetual orders end to end, single REST, batches of 20 and the WebSocket, each against
 * the floor no venue removes (issue 40's overhead factor, bench/overhead-factor.ts): server CPU per
 * accepted order ÷ (native signer recovery alone + a bare Fastify route's CPU a request ÷ orders a
 * request), every input from the same run.
 *
 * The server is a child process: the perp API with a real engine behind it (sequencer journalling
 * to a fresh SQLite file with synchronous = FULL, the projector writing the history to its own
 * file), production logging, wired as the perp-engine and perp-api roles wire them. The parent
 * pre-signs every order (libsecp256k1 over the venue's digest, the first checked against viem), 16
 * wallets, half selling and half buying around one price, and sends them through autocannon (each
 * request HMAC-signed as it leaves). Each way in runs a first window (after 1,000 orders of
 * warm-up) and a warm window on the same server after BENCH_PERP_STEADY (24,000) more orders.
 *
 * `two-apis` (perp-scaleout-bench.ts, needs REDIS_URL and DATABASE_URL): the engine in a process of
 * its own serving two perp API processes over Redis Streams, on PostgreSQL.
 *
 *   npx tsx bench/perp-orders-bench.ts   (BENCH_PERP_ORDERS, BENCH_PERP_ENTRY=batch,ws, BENCH_PERP_ENTRY_ORDERS, BENCH_PERP_STEADY)
 */
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance as nodePerformance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { WebSocket } from 'ws';
import { signPerp } from '../src/auth/hmac.ts';
import { nextStreamAuthTs } from '../packages/sdk/src/stream-sign.ts';
import { orderType } from '../src/perp/order-typed-data.ts';
import { perpDomain } from '../src/perp/perp-key-service.ts';
import { recoverSigner } from '../src/chain/signature-recovery.ts';
import { overheadFactor } from './overhead-factor.ts';
import { childUsage } from './runner.ts';

export const CHAIN_ID = 31337;
const VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const SYMBOL = 'AAPL-USD';

export interface Ready {
  url: string;
  keys: Array<{ apiKey: string; apiSecret: string }>;
  /** The order-entry WebSocket when the server runs with BENCH_PERP_WS=on. */
  wsUrl?: string;
}

/** The venue's database: the SQLite file `dbPath`, or with BENCH_PG_SCHEMA that PostgreSQL schema. */
async function openBenchDatabase(dbPath: string, migrate: boolean) {
  const { openDatabase } = await import('../src/storage/database.ts');
  const schema = process.env.BENCH_PG_SCHEMA;
  return schema ? openDatabase({ url: process.env.DATABASE_URL!, schema, migrate }) : openDatabase({ sqlitePath: dbPath, migrate });
}

/** Answers the parent's `cpu` (CPU and event-loop busy time so far) and `stop` messages. */
function serveControl(stop: () => Promise<void>): void {
  process.on('message', async (m: any) => {
    if (m === 'cpu') process.send?.({ cpu: process.cpuUsage(), elu: nodePerformance.eventLoopUtilization() });
    if (m === 'stop') {
      await stop();
      process.exit(0);
    }
  });
}

/**
 * The engine's side: sequencer, projector, the mark, the wallets' deposits and API keys. With a
 * `prefix` (two-apis) it serves the engine over Redis Streams and answers no HTTP; otherwise it
 * also serves the perp API in process.
 */
async function serve(dbPath: string, masterHex: string, prefix: string, addresses: string[]): Promise<void> {
  const { createApiKeyService } = await import('../src/auth/api-key-service.ts');
  const { createMemoryNonceStore } = await import('../src/auth/nonce-store.ts');
  const { createSecretBox } = await import('../src/auth/secret-box.ts');
  const { createLogger } = await import('../src/lib/logger.ts');
  const { buildPerpApi } = await import('../src/perp/perp-api.ts');
  const { indexedBlockInfo } = await import('../src/perp/perp-venue.ts');
  const { createPerpProjector } = await import('../src/perp/projection/perp-projector.ts');
  const { projectorOnWorker, workerProjectionWriter } = await import('../src/perp/projection/projection-worker-client.ts');
  const { createInProcessGateway } = await import('../src/perp/sequencer/engine-gateway.ts');
  const { EngineSequencer } = await import('../src/perp/sequencer/engine-sequencer.ts');
  const { journalOnWorker, workerJournalWriter } = await import('../src/perp/sequencer/journal-writer.ts');
  const { perpStreams, serveEngineOverRedis } = await import('../src/perp/sequencer/redis-stream-transport.ts');
  const { NONCE_RETENTION_MS, createJournalNonceLedger, createOrderNonceClaimer } = await import('../src/perp/store/order-nonce-store.ts');
  const { openRedis } = await import('../src/storage/redis-client.ts');
  const db = await openBenchDatabase(dbPath, true);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  // As the perp-engine role: with the API in this process the nonces are claimed in the journal's commits.
  const nonceLedger = prefix === '-' ? createJournalNonceLedger(db, { retentionMs: NONCE_RETENTION_MS }) : undefined;
  const journalWriter = journalOnWorker('auto', db.location) ? workerJournalWriter({ database: db.location, logger }) : undefined;
  const sequencer = new EngineSequencer({ db, logger, ...(nonceLedger ? { nonceLedger } : {}), ...(journalWriter ? { journalWriter } : {}) });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  const feeAccount = sequencer.engine.feeAccountAddress;
  // The history in a SQLite file of its own, as the role keeps it (PostgreSQL: the one database).
  const hdb = db.dialect === 'sqlite' && dbPath ? await openBenchDatabase(`${dbPath}.history`, true) : db;
  const projector = createPerpProjector({
    db: hdb, gateway, feeAccount, logger,
    ...(projectorOnWorker('auto', db.location) ? { writer: (onUnknownReason: (r: string) => void) => workerProjectionWriter({ database: hdb.location, feeAccount, onUnknownReason, logger }) } : {}),
  });
  await projector.start();
  await gateway.submit({ kind: 'setMarkPrice', id: 'bench-mark', ts: Date.now(), symbol: SYMBOL, markPriceTicks: 20_000, indexPriceTicks: 20_000 });
  const keys = createApiKeyService({ db, secretBox: createSecretBox(Buffer.from(masterHex, 'hex')), cacheTtlMs: 60_000 });
  const created: Ready['keys'] = [];
  for (const address of addresses) {
    await gateway.submit({ kind: 'deposit', id: `bench-dep-${address}`, ts: Date.now(), account: address.toLowerCase(), amount: 10_000_000n * 1_000_000n });
    const { key, apiSecret } = await keys.create({ api: 'perp', permissions: ['READ', 'TRADE'], ipWhitelist: [], chainId: CHAIN_ID, userAddress: address, label: 'bench' });
    created.push({ apiKey: key.apiKey, apiSecret });
  }
  const closeStorage = async () => {
    await projector.stop();
    await sequencer.stop();
    if (hdb !== db) await hdb.close();
    await db.close();
  };
  if (prefix !== '-') {
    const redis = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: null, lazyConnect: true }, logger, 'perp bench engine');
    await redis.connect();
    // As the role: no events to Redis (nothing reads them), the engine claims the APIs' nonces.
    const served = await serveEngineOverRedis(sequencer, redis, { ...perpStreams(prefix), publishEvents: false, nonces: createOrderNonceClaimer(db, { retentionMs: NONCE_RETENTION_MS }) });
    process.send?.({ ready: true, url: '', keys: created });
    serveControl(async () => {
      await served.stop();
      redis.disconnect();
      await closeStorage();
    });
    return;
  }
  const app = await buildPerpApi({
    chainId: CHAIN_ID, db, keys, nonces: createMemoryNonceStore(), rateLimit: { limit: 1_000_000_000 }, logger, bodyLimitBytes: 65_536,
    marginVault: VAULT, venue: { gateway, engine: () => sequencer.engine, blockInfo: () => indexedBlockInfo(db), ...(nonceLedger ? { nonces: nonceLedger } : {}) },
  });
  const ws = process.env.BENCH_PERP_WS === 'on' ? await attachBenchStreams(app, keys, logger, (s) => sequencer.engine.instrument(s) !== undefined) : undefined;
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.send?.({ ready: true, url, keys: created, wsUrl: ws ? `${url.replace(/^http/, 'ws')}${ws.path}` : undefined });
  serveControl(async () => {
    await ws?.close();
    await app.close();
    await closeStorage();
  });
}

/**
 * The perp stream endpoint with order entry, wired as the perp-api role wires it, its message rate
 * lifted as the REST rate limit is (the default, 20 a second a connection, would set the figure).
 */
async function attachBenchStreams(app: import('fastify').FastifyInstance, keys: import('../src/auth/api-key-service.ts').ApiKeyService, logger: import('../src/lib/logger.ts').Logger, isSymbol: (s: string) => boolean) {
  const { createMemoryNonceStore } = await import('../src/auth/nonce-store.ts');
  const { rateLimitOf } = await import('../src/http/rate-limiter.ts');
  const { perpOrderServiceOf } = await import('../src/perp/perp-api.ts');
  const { PERP_ERROR_CODES } = await import('../src/perp/perp-error-codes.ts');
  const { perpChannels } = await import('../src/perp/streams/perp-stream-channels.ts');
  const { attachPerpStreams, PERP_WS_PATH } = await import('../src/perp/streams/perp-stream-endpoint.ts');
  const { createMemoryStreamBroker } = await import('../src/streams/stream-broker.ts');
  const { createStreamHub } = await import('../src/streams/stream-hub.ts');
  const orders = perpOrderServiceOf(app);
  const rateLimit = rateLimitOf(app);
  if (!orders || !rateLimit) throw new Error('perp bench: the API has no order service or rate-limit checker for the stream');
  const hub = createStreamHub({ broker: createMemoryStreamBroker(), catalog: perpChannels(), goneCode: PERP_ERROR_CODES.SNAPSHOT_REQUIRED.code, logger });
  await hub.start();
  const nonces = createMemoryNonceStore();
  const endpoint = attachPerpStreams(app, { hub, keys, nonces, chainId: CHAIN_ID, isSymbol, logger, orders, rateLimit, limits: { messagesPerSecond: 1_000_000_000, burst: 1_000_000_000 } });
  return {
    path: PERP_WS_PATH,
    async close() {
      await endpoint.close();
      await hub.stop();
      await nonces.close();
    },
  };
}

/** A perp API apart from the engine, as `--role perp-api` with PERP_ENGINE_STREAM: Redis Streams, a journal replica, nonces and rate limits in Redis. */
async function serveApi(dbPath: string, masterHex: string, prefix: string): Promise<void> {
  const { createApiKeyService } = await import('../src/auth/api-key-service.ts');
  const { createRedisNonceStore } = await import('../src/auth/nonce-store.ts');
  const { createSecretBox } = await import('../src/auth/secret-box.ts');
  const { createLogger } = await import('../src/lib/logger.ts');
  const { buildPerpApi } = await import('../src/perp/perp-api.ts');
  const { replicaVenue } = await import('../src/perp/perp-venue.ts');
  const { createJournalReplica } = await import('../src/perp/sequencer/journal-replica.ts');
  const { createRedisGateway, perpStreams } = await import('../src/perp/sequencer/redis-stream-transport.ts');
  const { openRedis } = await import('../src/storage/redis-client.ts');
  const db = await openBenchDatabase(dbPath, false);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const commands = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: null, lazyConnect: true, enableAutoPipelining: true }, logger, 'perp bench commands');
  await commands.connect();
  const shared = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, enableAutoPipelining: true }, logger, 'perp bench nonces');
  await shared.connect();
  const gateway = createRedisGateway(commands, perpStreams(prefix));
  const replica = createJournalReplica({ db, logger });
  await replica.start();
  const keys = createApiKeyService({ db, secretBox: createSecretBox(Buffer.from(masterHex, 'hex')), cacheTtlMs: 60_000 });
  const app = await buildPerpApi({
    chainId: CHAIN_ID, db, keys, nonces: createRedisNonceStore(shared, { prefix: `${prefix}:nonce:` }), rateLimit: { limit: 1_000_000_000, redis: shared }, logger, bodyLimitBytes: 65_536,
    marginVault: VAULT, venue: replicaVenue({ gateway, replica, db }),
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

/** The floor: bare Fastify answering every order POST with a fixed order-sized JSON, no work behind it. */
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

export type SignedOrder = { wallet: number; body: string; message: Record<string, unknown>; signature: `0x${string}` };
interface BenchWallet {
  address: `0x${string}`;
  account: PrivateKeyAccount;
  key: Uint8Array;
}
interface NativeSign {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
}
const nativeSign = () => createRequire(import.meta.url)('secp256k1/bindings') as NativeSign;

function makeWallets(n: number): BenchWallet[] {
  return Array.from({ length: n }, () => {
    const hex = generatePrivateKey();
    const account = privateKeyToAccount(hex);
    return { address: account.address, account, key: hexToBytes(hex) };
  });
}

/** `count` orders signed by the wallets in turn, nonces from `firstNonce`; the first few checked against viem's signature. */
async function signOrders(wallets: BenchWallet[], count: number, firstNonce = 1): Promise<SignedOrder[]> {
  const sign = nativeSign();
  const domain = perpDomain(CHAIN_ID, VAULT);
  const signed: SignedOrder[] = [];
  const expiry = String(Date.now() + 3_600_000);
  for (let i = 0; i < count; i++) {
    const w = i % wallets.length;
    const sell = w % 2 === 0;
    const message = {
      account: wallets[w].address, symbol: SYMBOL, side: sell ? 'SELL' : 'BUY', orderType: 'LIMIT', size: '1',
      price: (200 + (sell ? -1 : 1) * ((i % 7) - 3) * 0.01).toFixed(2), timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
      nonce: String(firstNonce + i), expiry,
    };
    const typed = orderType.build(domain, message);
    const digest = orderType.hash(domain, typed.message as Record<string, unknown>);
    const { signature: rs, recid } = sign.ecdsaSign(hexToBytes(digest), wallets[w].key);
    const signature = `0x${Buffer.from(rs).toString('hex')}${(27 + recid).toString(16)}` as Hex;
    if (i < 4 && signature !== (await wallets[w].account.signTypedData(typed as never))) throw new Error('perp bench: the native signature differs from viem\'s');
    signed.push({ wallet: w, message: typed.message, signature, body: JSON.stringify({ message: typed.message, signature }) });
  }
  return signed;
}

/** Native signer recovery alone (recoverSigner, libsecp256k1), one core: three rounds of `n` signatures, each round's rate in recoveries per CPU second. */
export function recoveryAloneRounds(n = Number(process.env.BENCH_RECOVER_SIGNATURES ?? 20_000)): number[] {
  const sign = nativeSign();
  const keys = Array.from({ length: 16 }, () => randomBytes(32));
  const signers = keys.map((k) => privateKeyToAccount(bytesToHex(k)).address);
  const cases = Array.from({ length: n }, (_, i) => {
    const digest = randomBytes(32);
    const { signature, recid } = sign.ecdsaSign(digest, keys[i % 16]);
    return { digest: bytesToHex(digest), signature: `${bytesToHex(signature)}${(27 + recid).toString(16)}` as Hex, signer: signers[i % 16] };
  });
  // CPU time, as the server's side of the factor is: on a busy machine the wall clock counts the
  // time this process waited for a core (it read 427-555 µs a recovery at load average 9 against 52).
  const rates: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = process.cpuUsage();
    for (const c of cases) if (recoverSigner(c.digest, c.signature) !== c.signer) throw new Error('perp bench: wrong signer');
    const u = process.cpuUsage(t0);
    rates.push(n / ((u.user + u.system) / 1e6));
  }
  return rates;
}

/** One measured window: orders a second, client latency, the server's CPU and loop busy time an order. */
export interface WindowFigure {
  orders: number;
  refused: number;
  perSec: number;
  /** Client side, ms: per order, or per batch for batches. */
  p50Ms: number;
  p99Ms: number;
  cpuUsPerOrder: number;
  loopUsPerOrder: number;
  /** Each server process's CPU and loop busy time an order (the engine's, or the one process's, first). */
  perServerCpuUsPerOrder: number[];
  perServerLoopUsPerOrder: number[];
  /** PostgreSQL and Redis servers' CPU an order over the window (serviceCpuUs). */
  servicesCpuUsPerOrder: number;
}
export type Way = 'single' | 'batch' | 'ws';
export interface WayFigure {
  way: Way;
  ordersPerRequest: number;
  first: WindowFigure;
  /** The same server after `warmOrders` orders (BENCH_PERP_STEADY). */
  warm?: WindowFigure & { warmOrders: number };
}
export interface OverheadRow {
  way: Way;
  window: 'first' | 'warm';
  cpuUsPerOrder: number;
  recoveryUs: number;
  floorUsPerOrder: number;
  factor: number;
  target: number;
  refused: number;
}
export interface PerpOrdersBenchResult {
  ways: WayFigure[];
  /** Native recovery alone, µs (best round) and every round's. */
  recoveryUs: number;
  recoveryRoundsUs: number[];
  floorPerSec: number;
  floorCpuUsPerRequest: number;
  overhead: OverheadRow[];
}

export type PerpOrdersTopology = 'one-process' | 'two-apis';

let clockTicksPerSec: number | undefined;
/** CPU (µs) of every PostgreSQL and Redis server process on this machine, from /proc (0 without /proc). */
export function serviceCpuUs(): number {
  if (!fs.existsSync('/proc/self/stat')) return 0;
  clockTicksPerSec ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    if (comm !== 'postgres' && comm !== 'redis-server') continue;
    const rest = stat.slice(close + 2).split(' ');
    ticks += Number(rest[11]) + Number(rest[12]);
  }
  return (ticks * 1e6) / clockTicksPerSec;
}

interface ServerChild {
  child: ReturnType<typeof fork>;
  ready: Ready;
}

/** A server child of this file; `masterHex` travels in its environment, never its argv. */
function startChild(args: string[], masterHex: string, env: Record<string, string> = {}): Promise<ServerChild> {
  const child = fork(new URL(import.meta.url).pathname, args, {
    env: { ...process.env, ...env, BENCH_MASTER_KEY: masterHex },
    execArgv: ['--import', 'tsx'],
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

/** Sends `n` orders through `send` and reads every server's CPU and loop time, and the services', around them. */
async function measureWindow(servers: ServerChild[], n: number, send: () => Promise<{ seconds: number; refused: number; p50: number; p99: number }>): Promise<WindowFigure> {
  const s0 = serviceCpuUs();
  const u0 = await Promise.all(servers.map((s) => childUsage(s.child)));
  const r = await send();
  const u1 = await Promise.all(servers.map((s) => childUsage(s.child)));
  const cpu = u1.map((u, i) => (u.us - u0[i].us) / n);
  const loop = u1.map((u, i) => ((u.activeMs - u0[i].activeMs) * 1000) / n);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    orders: n, refused: r.refused, perSec: n / r.seconds, p50Ms: r.p50, p99Ms: r.p99, cpuUsPerOrder: sum(cpu), loopUsPerOrder: sum(loop),
    perServerCpuUsPerOrder: cpu, perServerLoopUsPerOrder: loop, servicesCpuUsPerOrder: (serviceCpuUs() - s0) / n,
  };
}

/**
 * The ways in, each on a fresh server: a first window of `orders` after 1,000 of warm-up, then
 * (steadyWarm > 0) a warm window of as many orders after steadyWarm more. With `ways: ['single']`
 * and `topology: 'two-apis'` or `database: 'pg'` it is one scale-out round (perp-scaleout-bench.ts),
 * without the floor and recovery.
 */
export async function runPerpOrdersBench(opts: { topology?: PerpOrdersTopology; database?: 'default' | 'pg'; ways?: Way[]; orders?: number; steadyWarm?: number; withFloor?: boolean } = {}): Promise<PerpOrdersBenchResult> {
  const topology = opts.topology ?? 'one-process';
  const ways = opts.ways ?? (['single', ...(process.env.BENCH_PERP_ENTRY ?? 'batch,ws').split(',').filter((k) => k === 'batch' || k === 'ws')] as Way[]);
  const singleOrders = opts.orders ?? Number(process.env.BENCH_PERP_ORDERS ?? 4_000);
  const entryOrders = Number(process.env.BENCH_PERP_ENTRY_ORDERS ?? 12_000);
  const steadyWarm = opts.steadyWarm ?? Number(process.env.BENCH_PERP_STEADY ?? 24_000);
  const warm = 1_000;
  const walletCount = 16;
  const wallets = makeWallets(walletCount);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-perp-bench-'));
  const master = randomBytes(32).toString('hex');
  const prefix = topology === 'two-apis' ? `bench-perp-${process.pid}-${Date.now().toString(36)}` : '-';
  const pgSchema = (topology === 'two-apis' || opts.database === 'pg') && process.env.DATABASE_URL ? `bench_perp_${process.pid}_${Date.now().toString(36)}` : undefined;
  const env: Record<string, string> = pgSchema ? { BENCH_PG_SCHEMA: pgSchema } : {};
  const most = Math.max(...ways.map((w) => (w === 'single' ? singleOrders : entryOrders)));
  const signed = await signOrders(wallets, warm + most + (steadyWarm > 0 ? steadyWarm + most : 0));
  const figures: WayFigure[] = [];
  let venueKeys: Ready['keys'] = [];
  try {
    for (const way of ways) {
      const n = way === 'single' ? singleOrders : entryOrders;
      const dbPath = path.join(dir, `${way}.sqlite`);
      const servers = [await startChild(['server', dbPath, prefix, ...wallets.map((w) => w.address)], master, { ...env, ...(way === 'ws' ? { BENCH_PERP_WS: 'on' } : {}) })];
      if (topology === 'two-apis') servers.push(...(await Promise.all([0, 1].map(() => startChild(['api', dbPath, prefix], master, env)))));
      const keys = (venueKeys = servers[0].ready.keys);
      const urls = topology === 'two-apis' ? servers.slice(1).map((s) => s.ready.url) : [servers[0].ready.url];
      const send = (list: SignedOrder[]) =>
        way === 'single' ? sendOrders(list, urls, keys, 32)
        : way === 'batch' ? sendBatches(batchesOf(list, walletCount, 20), urls[0], keys, 16)
        : sendFrames(list, servers[0].ready.wsUrl!, keys, walletCount, 32, 8);
      try {
        const w = await send(signed.slice(0, warm));
        if (w.refused > 0) throw new Error(`perp bench: ${w.refused} warm-up orders refused (${way})`);
        const first = await measureWindow(servers, n, () => send(signed.slice(warm, warm + n)));
        let warmFigure: WayFigure['warm'];
        if (steadyWarm > 0) {
          await send(signed.slice(warm + n, warm + n + steadyWarm));
          const from = warm + n + steadyWarm;
          warmFigure = { ...(await measureWindow(servers, n, () => send(signed.slice(from, from + n)))), warmOrders: from };
        }
        figures.push({ way, ordersPerRequest: way === 'batch' ? 20 : 1, first, warm: warmFigure });
      } finally {
        for (const s of servers.slice().reverse()) await stopChild(s.child);
      }
    }
    if (opts.withFloor === false) return { ways: figures, recoveryUs: 0, recoveryRoundsUs: [], floorPerSec: 0, floorCpuUsPerRequest: 0, overhead: [] };
    // The floor: bare Fastify, the same client and bodies, three times as many requests (it checks no nonce).
    const floor = await startChild(['floor'], master);
    let floorFigure: WindowFigure;
    try {
      const list = Array.from({ length: 3 * singleOrders }, (_, i) => signed[i % signed.length]);
      await sendOrders(list.slice(0, 5_000), [floor.ready.url], venueKeys, 32);
      floorFigure = await measureWindow([floor], list.length, () => sendOrders(list, [floor.ready.url], venueKeys, 32));
    } finally {
      await stopChild(floor.child);
    }
    const roundsUs = recoveryAloneRounds().map((r) => 1e6 / r);
    const recoveryUs = Math.min(...roundsUs);
    const overhead = figures.flatMap((f) =>
      (f.warm ? (['first', 'warm'] as const) : (['first'] as const)).map((window) => {
        const w = window === 'first' ? f.first : f.warm!;
        const o = overheadFactor({ cpuUsPerOrder: w.cpuUsPerOrder, nativeRecoverPerSec: 1e6 / recoveryUs, floorCpuUsPerRequest: floorFigure.cpuUsPerOrder, ordersPerRequest: f.ordersPerRequest });
        return { way: f.way, window, cpuUsPerOrder: w.cpuUsPerOrder, recoveryUs, floorUsPerOrder: o.floorUsPerOrder, factor: o.factor, target: f.way === 'single' ? 2.5 : 2.0, refused: w.refused };
      }),
    );
    return { ways: figures, recoveryUs, recoveryRoundsUs: roundsUs, floorPerSec: floorFigure.perSec, floorCpuUsPerRequest: floorFigure.cpuUsPerOrder, overhead };
  } finally {
    if (pgSchema) {
      const { openDatabase } = await import('../src/storage/database.ts');
      const { sql } = await import('kysely');
      const admin = await openDatabase({ url: process.env.DATABASE_URL!, migrate: false });
      await sql`drop schema if exists ${sql.id(pgSchema)} cascade`.execute(admin.kysely);
      await admin.close();
    }
    // The run's streams and keys in Redis: left behind they filled a shared Redis with hundreds of MB.
    if (prefix !== '-' && process.env.REDIS_URL) {
      const { Redis } = await import('ioredis');
      const redis = new Redis(process.env.REDIS_URL);
      for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1_000 }) as AsyncIterable<string[]>) if (keys.length > 0) await redis.unlink(...keys);
      redis.disconnect();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const percentile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/** From the first request sent to the last answer (autocannon's own `amount` run ends on its next 1 s tick). */
function requestSpan() {
  let first = 0n;
  let last = 0n;
  return {
    sent: () => void (first === 0n && (first = process.hrtime.bigint())),
    answered: () => void (last = process.hrtime.bigint()),
    seconds: () => Number(last - first) / 1e9,
  };
}

/** An HMAC-signed POST of `body` to `pathOf` with `key`, signed as it leaves (the timestamp is checked against a window). */
function signedPost(req: Record<string, unknown>, pathOf: string, body: string, key: Ready['keys'][number]) {
  const ts = String(Date.now());
  const sign = signPerp(key.apiSecret, { ts, method: 'POST', requestPath: pathOf, body });
  return { ...req, method: 'POST', path: pathOf, body, headers: { 'content-type': 'application/json', 'X-Api-Key': key.apiKey, 'X-Api-Ts': ts, 'X-Chain-Id': String(CHAIN_ID), 'X-Api-Sign': sign } };
}

/** Single REST orders through autocannon, `connections` spread over `urls`; the worse target's percentiles. */
async function sendOrders(list: SignedOrder[], urls: string[], keys: Ready['keys'], connections: number) {
  let next = 0;
  let refused = 0;
  const span = requestSpan();
  const share = Math.ceil(list.length / urls.length);
  const results = await Promise.all(
    urls.map((url, t) =>
      autocannon({
        url,
        connections: Math.max(1, Math.floor(connections / urls.length)),
        amount: Math.min(share, list.length - t * share),
        requests: [{
          setupRequest: (req: Record<string, unknown>) => {
            span.sent();
            const o = list[next++];
            return signedPost(req, '/v4/public/trader/orders', o.body, keys[o.wallet]);
          },
          onResponse: (status: number, body: string) => {
            span.answered();
            if (status !== 200 || (JSON.parse(body) as { code: number }).code !== 0) refused++;
          },
        }],
      }),
    ),
  );
  return { seconds: span.seconds(), refused: refused + results.reduce((n, r) => n + r.errors, 0), p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) };
}

/** Batches of one wallet's orders, the wallets' batches in turn (buyers and sellers alternate). */
function batchesOf(list: SignedOrder[], wallets: number, size: number): SignedOrder[][] {
  const per: SignedOrder[][] = Array.from({ length: wallets }, () => []);
  for (const o of list) per[o.wallet].push(o);
  const chunks = per.map((l) => Array.from({ length: Math.ceil(l.length / size) }, (_, i) => l.slice(i * size, (i + 1) * size)));
  const out: SignedOrder[][] = [];
  for (let i = 0; chunks.some((c) => i < c.length); i++) for (const c of chunks) if (i < c.length) out.push(c[i]);
  return out;
}

/** `POST orders/batch` through autocannon; counts the orders refused inside answered batches. */
async function sendBatches(batches: SignedOrder[][], url: string, keys: Ready['keys'], connections: number) {
  let next = 0;
  let refused = 0;
  const span = requestSpan();
  const r = await autocannon({
    url,
    connections,
    amount: batches.length,
    requests: [{
      setupRequest: (req: Record<string, unknown>) => {
        span.sent();
        const b = batches[next++];
        return signedPost(req, '/v4/public/trader/orders/batch', `{"orders":[${b.map((o) => o.body).join(',')}]}`, keys[b[0].wallet]);
      },
      onResponse: (status: number, body: string) => {
        span.answered();
        if (status !== 200) return void refused++;
        const answer = JSON.parse(body) as { code: number; data?: { results?: Array<{ code: number }> } };
        const results = answer.data?.results ?? [];
        if (answer.code !== 0) refused += Math.max(1, results.length);
        for (const x of results) if (x.code !== 0) refused++;
      },
    }],
  });
  return { seconds: span.seconds(), refused: refused + r.errors, p50: r.latency.p50, p99: r.latency.p99 };
}

/**
 * Place frames over `connections` WebSockets, each authenticated with one wallet's key and sending
 * only its orders, `window` frames in flight on each (answers come back in order).
 */
async function sendFrames(list: SignedOrder[], wsUrl: string, keys: Ready['keys'], wallets: number, connections: number, window: number) {
  const queues: string[][] = Array.from({ length: connections }, () => []);
  const dealt = Array.from({ length: wallets }, () => 0);
  const perWallet = (w: number) => Math.floor((connections - 1 - w) / wallets) + 1;
  for (const [i, o] of list.entries()) queues[o.wallet + wallets * (dealt[o.wallet]++ % perWallet(o.wallet))].push(`{"op":"order","id":"${i}","action":"place","body":${o.body}}`);
  const sockets = await Promise.all(queues.map((_, c) => openOrderStream(wsUrl, keys[c % wallets])));
  let refused = 0;
  const latencies: number[] = [];
  const t0 = process.hrtime.bigint();
  await Promise.all(
    sockets.map(
      (ws, c) =>
        new Promise<void>((resolve, reject) => {
          const q = queues[c];
          const sent: number[] = [];
          let next = 0;
          let done = 0;
          const send = () => {
            sent.push(performance.now());
            ws.send(q[next++]);
          };
          ws.on('message', (raw) => {
            const f = JSON.parse(raw.toString()) as { type: string; code?: number };
            if (f.type !== 'result') return reject(new Error(`perp bench: unexpected frame ${raw.toString().slice(0, 200)}`));
            latencies.push(performance.now() - sent[done]);
            if (f.code !== 0) refused++;
            done++;
            if (next < q.length) send();
            if (done === q.length) resolve();
          });
          ws.once('close', () => (done < q.length ? reject(new Error('perp bench: a stream closed early')) : undefined));
          if (q.length === 0) return resolve();
          while (next < q.length && next < window) send();
        }),
    ),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  for (const ws of sockets) ws.close();
  latencies.sort((a, b) => a - b);
  return { seconds, refused, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

/** An order-entry WebSocket authenticated with `key` (the SDK's per-key stamp keeps same-millisecond auths apart). */
function openOrderStream(wsUrl: string, key: Ready['keys'][number]): Promise<WebSocket> {
  return new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
    ws.once('error', reject);
    ws.once('open', () => {
      const ts = String(nextStreamAuthTs(key.apiKey, Date.now()));
      ws.send(JSON.stringify({ op: 'auth', id: 'auth', apiKey: key.apiKey, ts, sign: signPerp(key.apiSecret, { ts, method: 'GET', requestPath: '/v4/public/ws', body: '' }) }));
      ws.once('message', (raw) => {
        const f = JSON.parse(raw.toString()) as { type: string };
        if (f.type !== 'authenticated') reject(new Error(`perp bench: stream auth refused: ${raw.toString()}`));
        else resolve(ws);
      });
    });
  });
}

if (process.argv[2] === 'server') {
  const [dbPath, prefix, ...addresses] = process.argv.slice(3);
  await serve(dbPath, process.env.BENCH_MASTER_KEY!, prefix, addresses);
} else if (process.argv[2] === 'floor') {
  await serveFloor();
} else if (process.argv[2] === 'api') {
  const [dbPath, prefix] = process.argv.slice(3);
  await serveApi(dbPath, process.env.BENCH_MASTER_KEY!, prefix);
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify((await runPerpOrdersBench()).overhead, null, 1));
}
