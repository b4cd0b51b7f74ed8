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
 * bodies against bare Fastify (serveFloor); issue 29's target for a single order is at least 0.4 of
 * its rate. Beside it, on one core: signer recovery alone, native
 * (20 000 random signatures) and viem's JS; and EIP-712 recovery of the same signed orders (digest
 * and native recovery, what the server does per order) and with viem (digest and JS recovery, what
 * it did before issue 21).
 *
 * Issue 29's order entry for trading firms, each on a fresh server of the same kind, from the same
 * signed orders (BENCH_PERP_ENTRY_ORDERS, default 12 000, after 1 000 of warm-up), both against the
 * same native recovery (target ≥ 0.25 each):
 * - `POST orders/batch` in batches of BENCH_PERP_BATCH (default 20) orders of one wallet, from
 *   BENCH_PERP_BATCH_CONNECTIONS (default 16) autocannon connections, each batch HMAC-signed as it
 *   leaves. A batch weighs 1 + ⌊n/10⌋ against the key's rate limit; the bench server's limit is a
 *   billion a minute, so nothing is throttled (a 429 would count as a refusal).
 * - place frames over the private WebSocket (BENCH_PERP_WS=on in the server: the perp stream
 *   endpoint with order entry, wired as the perp-api role wires it), from BENCH_PERP_WS_CONNECTIONS
 *   (default 32) connections, each authenticated with one wallet's key and keeping
 *   BENCH_PERP_WS_WINDOW (default 8, at most the endpoint's 16) frames in flight. The endpoint's
 *   per-connection message rate (20 a second, bursts of 40, by default) is lifted in the bench
 *   server as the REST rate limit is.
 * Issue 40's overhead factor for each way in (bench/overhead-factor.ts): server CPU per accepted order
 * ÷ (native recovery alone + the floor's CPU per request ÷ orders a request), all from this run.
 * Orders are signed with libsecp256k1 over the venue's own digest (the first ones checked against
 * viem's signTypedData), since viem's JS signing would take a minute for these lists.
 *
 * BENCH_PERP_PROF=<dir>: each measured run's window is CPU-profiled inside its server
 * (<dir>/rest-order, floor, batch-orders, ws-orders .cpuprofile, the orders in .orders, the SQLite
 * time by purpose in .sql.json, bench/sqlite-timing.ts) and the breakdown per order is printed
 * (bench/perp-profile-summary.ts). The profiler slows the run: its figures are not the bench's.
 *
 * Issue 40's warm window: the single REST orders again on the same server after BENCH_PERP_STEADY
 * (default 24 000) more, past V8's optimising of the order path and the sequencer's full event buffer,
 * with its own overhead factor; every window's server CPU by thread (threadSplit; BENCH_THREADS_ALL=1
 * lists every thread). BENCH_NODE_ARGS passes Node or V8 flags to the servers (BENCH_CHILD_STDOUT=inherit
 * shows what V8 prints, such as --trace-opt).
 *
 *   npx tsx bench/perp-orders-bench.ts     (BENCH_PERP_ORDERS, BENCH_PERP_WALLETS, BENCH_PERP_CONNECTIONS, BENCH_PERP_PROF, BENCH_PERP_FLOOR_REQUESTS, BENCH_PERP_STEADY, BENCH_PERP_METRICS=off, BENCH_PERP_LEAN,
 *                                           BENCH_PERP_ENTRY=batch,ws, BENCH_PERP_ENTRY_ORDERS, BENCH_PERP_BATCH, BENCH_PERP_BATCH_CONNECTIONS,
 *                                           BENCH_PERP_WS_CONNECTIONS, BENCH_PERP_WS_WINDOW)
 *   npx tsx bench/perp-orders-bench.ts metrics-cost     (the metrics' cost alone: BENCH_METRICS_ORDERS, BENCH_METRICS_ROUNDS, BENCH_METRICS_SERVERS, BENCH_METRICS_SCRAPE_MS)
 */
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, performance as nodePerformance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import autocannon from 'autocannon';
import { hashTypedData, hexToBytes, recoverTypedDataAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { WebSocket } from 'ws';
import { signPerp } from '../src/auth/hmac.ts';
import { nextStreamAuthTs } from '../packages/sdk/src/stream-sign.ts';
import { orderType } from '../src/perp/order-typed-data.ts';
import { perpDomain } from '../src/perp/perp-key-service.ts';
import { recoverSigner } from '../src/chain/signature-recovery.ts';
import { runSignatureRecoveryBench } from './signature-recovery-bench.ts';
import { overheadFactor } from './overhead-factor.ts';
import { startCpuProfile, startHeapSampling, type CpuProfile } from './cpu-profile.ts';
import { instrumentSqlite, sqlDelta, type SqlTotals } from './sqlite-timing.ts';
import { breakdownTable, summariseProfile } from './perp-profile-summary.ts';

export const CHAIN_ID = 31337;
const VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const SYMBOL = 'AAPL-USD';

export interface Ready {
  url: string;
  keys: Array<{ apiKey: string; apiSecret: string }>;
  /** The server's /metrics when it runs with BENCH_METRICS=on. */
  metricsUrl?: string;
  /** The order-entry WebSocket when it runs with BENCH_PERP_WS=on. */
  wsUrl?: string;
}

/**
 * The venue's database: the SQLite file `dbPath`, or with BENCH_PG_SCHEMA (the two-apis topology
 * when DATABASE_URL is set) that PostgreSQL schema, as docs/deployment.md runs several processes.
 */
async function openBenchDatabase(dbPath: string, migrate: boolean) {
  const { openDatabase } = await import('../src/storage/database.ts');
  const schema = process.env.BENCH_PG_SCHEMA;
  // BENCH_SQLITE_PAGE_SIZE: a new file's page size other than the release's (the 4 KiB ÷ 64 KiB A/B, docs/performance.md).
  const pageSize = process.env.BENCH_SQLITE_PAGE_SIZE ? Number(process.env.BENCH_SQLITE_PAGE_SIZE) : undefined;
  // BENCH_SQLITE_TEMP_STORE=file: statement journals spilled to temporary files, SQLite's default (the A/B).
  const tempStore = process.env.BENCH_SQLITE_TEMP_STORE === 'file' ? ('file' as const) : undefined;
  return schema
    ? openDatabase({ url: process.env.DATABASE_URL!, schema, migrate })
    : openDatabase({ sqlitePath: dbPath, migrate, ...(pageSize ? { pageSize } : {}), ...(tempStore ? { tempStore } : {}) });
}

/**
 * BENCH_PERP_LEAN (diagnosis only, never a venue): parts of the durable path left out of the server, to
 * measure the floor the storage's design sets (docs/performance.md "The design's floor"):
 * - `journal`: the journal append-only (`seq` the rowid, no index on `command_id`: the table rebuilt
 *   after the migrations) and the order nonce claims decided in memory but never written. A restart
 *   of such a server would accept a replay: it is the bound a journal whose keys are kept elsewhere
 *   can approach, not a way to run.
 * - `projection`: no projector, so no history rows and no projection worker.
 */
export function benchLean(env: NodeJS.ProcessEnv = process.env): Set<'journal' | 'projection'> {
  const parts = (env.BENCH_PERP_LEAN ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of parts) if (p !== 'journal' && p !== 'projection') throw new Error(`BENCH_PERP_LEAN: unknown part ${p} (journal, projection)`);
  return new Set(parts as Array<'journal' | 'projection'>);
}

async function leanJournal(db: Awaited<ReturnType<typeof openBenchDatabase>>): Promise<void> {
  if (db.dialect !== 'sqlite') throw new Error('BENCH_PERP_LEAN=journal: SQLite only');
  const { sql } = await import('kysely');
  await db.kysely.transaction().execute(async (tx) => {
    await sql`create table perp_journal_lean (seq integer primary key, command_id text not null, kind text not null, command text not null, ts bigint not null, code text not null, last_event_seq bigint not null, result text not null)`.execute(tx);
    await sql`insert into perp_journal_lean (seq, command_id, kind, command, ts, code, last_event_seq, result) select seq, command_id, kind, command, ts, code, last_event_seq, result from perp_journal`.execute(tx);
    await sql`drop table perp_journal`.execute(tx);
    await sql`alter table perp_journal_lean rename to perp_journal`.execute(tx);
  });
}

/** BENCH_PERP_PROF: every SQLite call of a server child timed by purpose (bench/sqlite-timing.ts). */
const sqlTimer = process.env.BENCH_PERP_PROF && ['server', 'api'].includes(process.argv[2] ?? '') ? instrumentSqlite() : undefined;

/**
 * Answers the parent's `cpu` and `stop` messages for a server child, and with BENCH_PERP_PROF its
 * `profile` ones: a V8 CPU profile of the window between them (a measured run, not the start-up).
 */
function serveControl(stop: () => Promise<void>, eventsPublished?: () => number): void {
  let profile: CpuProfile | undefined;
  let sql0: SqlTotals | undefined;
  // The main thread's GC pauses so far, [kind, ms] (V8's `gc` entries: kind 1 = a scavenge; the
  // others are the mark-compact's: its atomic pause (4), incremental marking steps (8), weak
  // callbacks (16)), for the latency bench: whether the tail is a collection or a queue.
  const gcPauses: Array<[number, number]> = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcPauses.push([(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0, e.duration]);
  }).observe({ entryTypes: ['gc'] });
  process.on('message', async (m: any) => {
    // The loop's busy time counts a synchronous SQLite commit waiting on fsync; CPU time does not.
    // A mark between V8's own trace lines (--trace-opt, --trace-gc) when they are shown.
    if (m === 'cpu' && process.env.BENCH_CHILD_STDOUT === 'inherit') fs.writeSync(1, `--- cpu ${process.pid} ${Date.now()}\n`);
    if (m === 'cpu') process.send?.({ cpu: process.cpuUsage(), elu: nodePerformance.eventLoopUtilization(), threads: threadTimes(), waits: threadTimes(1), wakeups: threadTimes(2), events: eventsPublished?.(), gcPauses: gcPauses.length });
    // A heap snapshot of the server (bench/perp-heap-growth.ts): what its orders leave behind.
    if (m?.heapSnapshot) process.send?.({ heapSnapshot: v8.writeHeapSnapshot(String(m.heapSnapshot)) });
    if (m?.gcPausesFrom !== undefined) process.send?.({ gcPausesSince: gcPauses.slice(Number(m.gcPausesFrom)) });
    if (m?.profile === 'start') {
      sql0 = sqlTimer?.totals();
      // BENCH_PERP_HEAP=1: what the window allocates (cpu-profile.ts startHeapSampling) instead of its CPU.
      profile = process.env.BENCH_PERP_HEAP === '1' ? await startHeapSampling() : await startCpuProfile();
      process.send?.({ profiled: 'start' });
    }
    if (m?.profile === 'stop') {
      await profile?.stop(m.file);
      profile = undefined;
      // Beside the profile: the window's SQLite time by purpose (sqlite-timing.ts).
      if (sqlTimer && sql0) fs.writeFileSync(String(m.file).replace(/\.cpuprofile$/, '.sql.json'), JSON.stringify(sqlDelta(sql0, sqlTimer.totals())));
      process.send?.({ profiled: 'stop' });
    }
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
  const lean = benchLean();
  if (lean.has('journal')) await leanJournal(db);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const stopRecoveryPool = await startRecoveryPool(logger);
  // As the perp-engine role does: with the API in this process (no Redis transport) the order nonces
  // are claimed in the journal's commits. BENCH_PERP_NONCES=api: the API's own claimer (before issue 40's change).
  const { NONCE_RETENTION_MS, createJournalNonceLedger, createOrderNonceClaimer } = await import('../src/perp/store/order-nonce-store.ts');
  const nonceLedger = prefix === '-' && process.env.BENCH_PERP_NONCES !== 'api' ? createJournalNonceLedger(db, { retentionMs: NONCE_RETENTION_MS }) : undefined;
  // BENCH_PERP_JOURNAL=thread|worker: where the group commits run; default as the perp-engine role's
  // PERP_JOURNAL_WRITER=auto decides (a worker thread for a SQLite file, the thread for PostgreSQL).
  const { journalOnWorker, workerJournalWriter } = await import('../src/perp/sequencer/journal-writer.ts');
  const journalWriter = journalOnWorker((process.env.BENCH_PERP_JOURNAL as 'thread' | 'worker' | undefined) ?? 'auto', db.location) ? workerJournalWriter({ database: db.location, logger }) : undefined;
  // PERP_EVENT_BUFFER and PERP_RECENT_RESULTS as the perp-engine role reads them (defaults 100 000 each).
  const buffers = {
    ...(process.env.PERP_EVENT_BUFFER ? { eventBuffer: Number(process.env.PERP_EVENT_BUFFER) } : {}),
    ...(process.env.PERP_RECENT_RESULTS ? { recentResults: Number(process.env.PERP_RECENT_RESULTS) } : {}),
  };
  if (nonceLedger && lean.has('journal')) {
    // The claims stay decided in memory (the bench sends no replays) and none reaches a commit.
    const take = nonceLedger.take.bind(nonceLedger);
    nonceLedger.take = () => {
      nonceLedger.written(take());
      return [];
    };
  }
  const sequencer = new EngineSequencer({ db, logger, ...buffers, ...(nonceLedger ? { nonceLedger } : {}), ...(journalWriter ? { journalWriter } : {}) });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  // BENCH_PERP_PROJECTOR=thread|worker: where the projection is written; default as the perp-engine
  // role's PERP_PROJECTOR=auto decides (its worker thread).
  const { projectorOnWorker, workerProjectionWriter } = await import('../src/perp/projection/projection-worker-client.ts');
  const feeAccount = sequencer.engine.feeAccountAddress;
  // The history in a SQLite file of its own, as the perp-engine role keeps it since issue 40's ninth
  // session (storage-wiring.ts openHistoryDatabase: its own write lock and WAL, so the journal's commits
  // never wait behind the projection's); BENCH_PERP_HISTORY_FILE=shared writes it into the main file,
  // as before, for the A/B. PostgreSQL keeps it in the one database. Nothing in these benches reads
  // the history, so only the write side is wired.
  // BENCH_PERP_PROJECTION_CHUNK: the worker's most events a transaction (PROJECTION_WORKER_CHUNK).
  const hdb = process.env.BENCH_PERP_HISTORY_FILE !== 'shared' && db.dialect === 'sqlite' && dbPath ? await openBenchDatabase(`${dbPath}.history`, true) : db;
  const projector = createPerpProjector({
    db: hdb, gateway, feeAccount, logger,
    // BENCH_PERP_PROJECTOR_INTERVAL: the projector's least time between writes (ms), the role's default otherwise.
    ...(process.env.BENCH_PERP_PROJECTOR_INTERVAL ? { minWriteIntervalMs: Number(process.env.BENCH_PERP_PROJECTOR_INTERVAL) } : {}),
    ...(!projectorOnWorker((process.env.BENCH_PERP_PROJECTOR as 'thread' | 'worker' | undefined) ?? 'auto', db.location) ? {} : { writer: (onUnknownReason: (r: string) => void) => workerProjectionWriter({ database: hdb.location, feeAccount, onUnknownReason, logger, ...(process.env.BENCH_PERP_PROJECTION_CHUNK ? { chunkEvents: Number(process.env.BENCH_PERP_PROJECTION_CHUNK) } : {}) }) }),
  });
  if (!lean.has('projection')) await projector.start();
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
    // BENCH_ENGINE_CLAIMS=off: the APIs claim order nonces themselves (before protocol 2), for an A/B.
    // The engine publishes its events to Redis only with BENCH_ENGINE_EVENTS=on, as the perp-engine
    // role does only with PERP_ENGINE_EVENTS=on: these APIs follow the journal (their replica), and
    // nothing reads the events stream. Before the eighth session of issue 40 the bench published them
    // (serveEngineOverRedis's default), a cost the role's default does not pay.
    const served = await serveEngineOverRedis(sequencer, redis, {
      ...perpStreams(prefix),
      publishEvents: process.env.BENCH_ENGINE_EVENTS === 'on',
      ...(process.env.BENCH_ENGINE_CLAIMS === 'off' ? {} : { nonces: createOrderNonceClaimer(db, { retentionMs: NONCE_RETENTION_MS }) }),
    });
    process.send?.({ ready: true, url: '', keys: created });
    serveControl(async () => {
      await served.stop();
      redis.disconnect();
      await projector.stop();
      await sequencer.stop();
      if (hdb !== db) await hdb.close();
      await db.close();
    });
    return;
  }
  const app = await buildPerpApi({
    chainId: CHAIN_ID, db, keys, nonces: createMemoryNonceStore(), rateLimit: { limit: 1_000_000_000 }, logger, bodyLimitBytes: 65_536,
    marginVault: VAULT, venue: { gateway, engine: () => sequencer.engine, blockInfo: () => indexedBlockInfo(db), ...(nonceLedger ? { nonces: nonceLedger } : {}) },
  });
  // BENCH_PERP_WS=on: order entry over the private WebSocket, wired as the perp-api role wires it (the
  // API's own order service and rate-limit checker), with the per-connection message rate lifted as
  // the REST rate limit is above (the default, 20 a second and bursts of 40, would set the figure).
  const ws = process.env.BENCH_PERP_WS === 'on' ? await attachBenchStreams(app, keys, logger, (s) => sequencer.engine.instrument(s) !== undefined) : undefined;
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
  process.send?.({ ready: true, url, keys: created, metricsUrl: metrics?.url, wsUrl: ws ? `${url.replace(/^http/, 'ws')}${ws.path}` : undefined });
  serveControl(async () => {
    await metrics?.stop();
    await ws?.close();
    await app.close();
    await projector.stop();
    await sequencer.stop();
    if (hdb !== db) await hdb.close();
    await db.close();
    await stopRecoveryPool();
  }, () => sequencer.engine.lastSeq);
}

/**
 * The signature recovery pool as the API roles start it (src/app/stack.ts): SIGNATURE_WORKERS, by
 * default 0 (none); ready before the server says so, so that no measured order waits for a worker to load.
 */
async function startRecoveryPool(logger: import('../src/lib/logger.ts').Logger): Promise<() => Promise<void>> {
  const { configureSignatureRecovery, signatureWorkerCount } = await import('../src/chain/signature-recovery-pool.ts');
  const { parseSignatureWorkers } = await import('../src/config/app-config.ts');
  const pool = await configureSignatureRecovery({ workers: signatureWorkerCount(parseSignatureWorkers(process.env.SIGNATURE_WORKERS)), logger });
  await pool?.whenReady();
  return async () => {
    await configureSignatureRecovery({ workers: 0 });
  };
}

/** The perp stream endpoint with order entry on `app` (see serve), before it listens. */
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
  const endpoint = attachPerpStreams(app, {
    hub, keys, nonces, chainId: CHAIN_ID, isSymbol, logger, orders, rateLimit,
    limits: { messagesPerSecond: 1_000_000_000, burst: 1_000_000_000 },
  });
  return {
    path: PERP_WS_PATH,
    async close() {
      await endpoint.close();
      await hub.stop();
      await nonces.close();
    },
  };
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
  const { replicaVenue } = await import('../src/perp/perp-venue.ts');
  const { createJournalReplica } = await import('../src/perp/sequencer/journal-replica.ts');
  const { createRedisGateway, perpStreams } = await import('../src/perp/sequencer/redis-stream-transport.ts');
  const { openRedis } = await import('../src/storage/redis-client.ts');
  const db = await openBenchDatabase(dbPath, false);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const stopRecoveryPool = await startRecoveryPool(logger);
  const commands = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: null, lazyConnect: true, enableAutoPipelining: PIPELINE }, logger, 'perp bench commands');
  await commands.connect();
  const shared = openRedis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, enableAutoPipelining: PIPELINE }, logger, 'perp bench nonces');
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
    await stopRecoveryPool();
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

export type SignedOrder = { wallet: number; body: string; message: Record<string, unknown>; signature: `0x${string}` };

/** A bench wallet: its viem account and its private key for the native signer. */
export interface BenchWallet {
  address: `0x${string}`;
  account: PrivateKeyAccount;
  key: Uint8Array;
}

export function makeWallets(n: number): BenchWallet[] {
  return Array.from({ length: n }, () => {
    const hex = generatePrivateKey();
    const account = privateKeyToAccount(hex);
    return { address: account.address, account, key: hexToBytes(hex) };
  });
}

interface NativeSign {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
}
let nativeSign: NativeSign | undefined;

/**
 * `count` orders signed by the wallets in turn: half the wallets sell and half buy, around one
 * price, so about half the orders trade. Each order's nonce is its index from `firstNonce`, so a
 * list is sent once to a server (a second list for the same server starts past the first). Signed
 * with libsecp256k1 over the venue's own EIP-712 digest (about 0.1 ms an order, where viem's
 * signTypedData takes about 3: the batch and stream figures need tens of thousands); the first orders are checked against viem's signature of the same typed data.
 */
export async function signOrders(wallets: BenchWallet[], count: number, firstNonce = 1): Promise<SignedOrder[]> {
  nativeSign ??= createRequire(import.meta.url)('secp256k1/bindings') as NativeSign;
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
    const { signature: rs, recid } = nativeSign.ecdsaSign(hexToBytes(digest), wallets[w].key);
    const signature = `0x${Buffer.from(rs).toString('hex')}${(27 + recid).toString(16)}` as Hex;
    if (i < 4 && signature !== (await wallets[w].account.signTypedData(typed as never))) throw new Error('perp bench: the native signature differs from viem\'s');
    signed.push({ wallet: w, message: typed.message, signature, body: JSON.stringify({ message: typed.message, signature }) });
  }
  return signed;
}

export interface PerpOrdersBenchResult {
  /** The single REST figure again with the projection written on the order thread (issue 40 item 3; the default is its worker thread). */
  onThread?: { perSec: number; cpuUsPerOrder: number; loopUsPerOrder: number; p99Ms: number; refused: number };
  /** The single REST figure on the same server once warm (one process only). */
  steady?: SteadyFigure;
  orders: number;
  failures: number;
  seconds: number;
  perSec: number;
  /** Per-order latency (client side, request to parsed answer), ms. */
  p50Ms: number;
  p99Ms: number;
  /** Server process CPU (user + system) per order, µs. */
  serverCpuUsPerOrder: number;
  /** The same for each server process (the engine's, or the one process's, first), and its loop's busy time. */
  perServerCpuUsPerOrder?: number[];
  perServerLoopUsPerOrder?: number[];
  /**
   * The CPU of this machine's PostgreSQL and Redis server processes per order over the same window
   * (serviceCpuUs): the part of a topology's cost that is not in its own processes. It counts
   * whatever else uses those services meanwhile.
   */
  servicesCpuUsPerOrder?: number;
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
  /** perSec ÷ floorPerSec (issue 29's target ≥ 0.4). */
  floorRatio: number;
  /** The former figure: perSec ÷ typedViemPerSec. */
  recoverPerSec: number;
  /** Issue 29: the same orders in batches over HTTP and over the WebSocket. */
  entry: EntryFigure[];
  /** Issue 40's overhead factors, each from this run's figures (bench/overhead-factor.ts). */
  overhead: OverheadRow[];
  table: string;
}

export interface OverheadRow {
  /** `single-steady`: single REST orders in the steady window (SteadyFigure). */
  kind: 'single' | 'single-steady' | EntryKind | `${EntryKind}-steady`;
  ordersPerRequest: number;
  cpuUsPerOrder: number;
  recoveryUs: number;
  floorUsPerOrder: number;
  /** With the best round of native recovery alone (the figure). */
  factor: number;
  /** With the slowest round: how much of the factor the shared cores' noise can move. */
  factorSlowestRecovery: number;
  target: number;
}

export type EntryKind = 'batch' | 'ws';

/** What one measured window of orders gave, on one server. */
interface WindowFigure {
  orders: number;
  refused: number;
  perSec: number;
  /** Client side, ms: per order, or per batch for batches. */
  p50Ms: number;
  p99Ms: number;
  cpuUsPerOrder: number;
  loopUsPerOrder: number;
  /** The server's CPU an order by thread (threadSplit). */
  threads: string;
}

/** Single REST orders on a server already warm (runPerpOrdersBench's steady window). */
export interface SteadyFigure extends WindowFigure {
  /** Orders the server had taken before the window. */
  warmOrders: number;
  /** Engine events published before the window (against the sequencer's event buffer, 100 000 by default). */
  eventsBefore: number;
  /** Each server process's CPU and loop busy time per order over the window (the engine's first). */
  perServerCpuUsPerOrder: number[];
  perServerLoopUsPerOrder: number[];
  /** PostgreSQL and Redis servers' CPU per order over the window. */
  servicesCpuUsPerOrder: number;
}

export interface EntryFigure extends WindowFigure {
  kind: EntryKind;
  /** Requests (batches) or frames sent. */
  requests: number;
  batchSize: number;
  connections: number;
  /** WebSocket frames in flight per connection. */
  window: number;
  seconds: number;
  /** perSec ÷ native recovery alone, filled in by runPerpOrdersBench. */
  ratio: number;
  /**
   * The same figure on the same server once warm: `steadyWarm` orders more, unmeasured, then
   * `orders` measured again (BENCH_PERP_ENTRY_STEADY; absent when 0), as the single REST figure's
   * steady window.
   */
  steady?: WindowFigure & { warmOrders: number };
}

export type PerpOrdersTopology = 'one-process' | 'two-apis';

/**
 * The API processes' Redis connections auto-pipeline, as the perp-api role's do;
 * BENCH_REDIS_PIPELINE=off sends each command on its own, for an A/B of that setting.
 */
const PIPELINE = process.env.BENCH_REDIS_PIPELINE !== 'off';

let clockTicksPerSec: number | undefined;
/**
 * CPU time (user + system, µs) of every PostgreSQL and Redis server process on this machine, from
 * /proc (0 where there is no /proc): what a topology costs in the services it shares.
 */
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
      continue; // gone meanwhile
    }
    // comm is in parentheses and may hold spaces: the fields after it are split from its end.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    if (comm !== 'postgres' && comm !== 'redis-server') continue;
    const rest = stat.slice(close + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after comm and state.
    ticks += Number(rest[11]) + Number(rest[12]);
  }
  return (ticks * 1e6) / clockTicksPerSec;
}

export interface ServerChild {
  child: ReturnType<typeof fork>;
  ready: Ready;
}

/** `masterHex` travels in the child's environment, never its argv (which `ps` shows to every user). */
/**
 * `cpus` (a `taskset -c` list): the child runs on those cores only, from its first instruction
 * (through taskset, which then runs node; bench/recovery-pool-bench.ts pins the server apart from the client).
 */
export function startChild(args: string[], masterHex: string, env: Record<string, string> = {}, cpus?: string): Promise<ServerChild> {
  // BENCH_NODE_ARGS: Node or V8 options for the server children (an A/B of a flag, or `--cpu-prof
  // --cpu-prof-dir=<dir>` for a profile of every thread, the worker threads' included).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = fork(new URL(import.meta.url).pathname, args, {
    env: { ...process.env, ...env, BENCH_MASTER_KEY: masterHex },
    // BENCH_PERP_PROF=<dir>: each measured run's window is profiled from inside (profileChild), not the start-up.
    ...(cpus === undefined ? { execArgv: [...nodeArgs, '--import', 'tsx'] } : { execPath: 'taskset', execArgv: ['-c', cpus, process.execPath, ...nodeArgs, '--import', 'tsx'] }),
    // BENCH_CHILD_STDOUT=inherit: the servers' stdout on the bench's (V8's --trace-gc writes there).
    stdio: ['ignore', process.env.BENCH_CHILD_STDOUT === 'inherit' ? 'inherit' : 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<ServerChild>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`perp bench server exited with ${code}`)));
    child.on('message', (m: any) => m?.ready && resolve({ child, ready: m }));
  });
}

export async function stopChild(child: ServerChild['child']): Promise<void> {
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
  opts: {
    orders?: number;
    wallets?: number;
    connections?: number;
    topology?: PerpOrdersTopology;
    nativeRecoverPerSec?: number;
    entry?: EntryKind[];
    /** `pg`: on PostgreSQL (DATABASE_URL) whatever the topology; by default only two-apis is. */
    database?: 'default' | 'pg';
    /**
     * Orders sent unmeasured before a steady window of twice `orders` (the result's `steady`).
     * Default: BENCH_PERP_STEADY (24 000) for the one-process figure itself, none for the scale-out
     * rounds unless they ask.
     */
    steadyWarm?: number;
  } = {},
): Promise<PerpOrdersBenchResult> {
  const orders = opts.orders ?? Number(process.env.BENCH_PERP_ORDERS ?? 4_000);
  const walletCount = opts.wallets ?? Number(process.env.BENCH_PERP_WALLETS ?? 16);
  const connections = opts.connections ?? Number(process.env.BENCH_PERP_CONNECTIONS ?? 32);
  const topology = opts.topology ?? 'one-process';
  // Issue 29's figures (one-process only): BENCH_PERP_ENTRY=batch,ws (empty: neither).
  const entryKinds = topology === 'one-process'
    ? (opts.entry ?? (process.env.BENCH_PERP_ENTRY ?? 'batch,ws').split(',').filter((k): k is EntryKind => k === 'batch' || k === 'ws'))
    : [];
  const entryOrders = Number(process.env.BENCH_PERP_ENTRY_ORDERS ?? 12_000);
  const entryWarm = 1_000;
  // The batch and WebSocket figures' warm window (one process only): this many orders more, then the same count again (0: none).
  const entrySteadyWarm = topology === 'one-process' ? Number(process.env.BENCH_PERP_ENTRY_STEADY ?? 24_000) : 0;
  const batchSize = Math.min(20, Math.max(1, Number(process.env.BENCH_PERP_BATCH ?? 20)));
  const batchConnections = Number(process.env.BENCH_PERP_BATCH_CONNECTIONS ?? 16);
  const wsConnections = Math.max(walletCount, Number(process.env.BENCH_PERP_WS_CONNECTIONS ?? 32));
  const wsWindow = Math.min(16, Math.max(1, Number(process.env.BENCH_PERP_WS_WINDOW ?? 8)));
  const wallets = makeWallets(walletCount);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-perp-bench-'));
  const dbPath = path.join(dir, 'bench.sqlite');
  const master = randomBytes(32).toString('hex');
  const prefix = topology === 'two-apis' ? `bench-perp-${process.pid}-${Date.now().toString(36)}` : '-';
  // Several processes share PostgreSQL when there is one (the deployed topology): on one SQLite file
  // the API processes' nonce claims would queue behind the engine's journal for the file's lock.
  const pgSchema = (topology === 'two-apis' || opts.database === 'pg') && process.env.DATABASE_URL ? `bench_perp_${process.pid}_${Date.now().toString(36)}` : undefined;
  const env: Record<string, string> = pgSchema ? { BENCH_PG_SCHEMA: pgSchema } : {};
  const servers: ServerChild[] = [await startChild(['server', dbPath, prefix, ...wallets.map((w) => w.address)], master, env)];
  if (topology === 'two-apis') servers.push(...(await Promise.all([0, 1].map(() => startChild(['api', dbPath, prefix], master, env)))));
  const ready: Ready = { url: servers[0].ready.url, keys: servers[0].ready.keys };
  const urls = topology === 'two-apis' ? servers.slice(1).map((s) => s.ready.url) : [ready.url];
  try {
    const domain = perpDomain(CHAIN_ID, VAULT);
    // Pre-signed: each order's signature is the wallet's work, done before the clock starts.
    // Warm-up (JIT, caches, connections): 1,000 orders, as for the batch and stream figures and the floor.
    const warm = Math.min(1_000, Math.floor(orders / 4));
    // One list for every figure: each server is fresh, so the same orders (nonces) are new to each.
    // Issue 40: the one-process single REST figure is measured again once the server is warm
    // (BENCH_PERP_STEADY orders more, unmeasured, after the first window; 0: not at all). V8 was
    // still optimising the order path through the first window (272 functions optimised by its
    // compiler threads during 12,000 orders after 1,000 of warm-up, 27 November), which a venue
    // running for days pays once: the steady window is what an order costs, the first one what
    // the bench has always printed, and both are printed.
    // 24,000 more: past the sequencer's event buffer too (100,000 events, about 28,000 of these
    // orders), whose trim was a step in the cost per order once it was full ("The event buffer's trim").
    // Only for the one-process figure itself: a caller that passes nativeRecoverPerSec (the scale-out
    // bench's rounds) reads the first window alone.
    const steadyWarm = opts.steadyWarm ?? (topology === 'one-process' && opts.nativeRecoverPerSec === undefined ? Number(process.env.BENCH_PERP_STEADY ?? 24_000) : 0);
    const steadyOrders = steadyWarm > 0 ? 2 * orders : 0;
    const signed = await signOrders(wallets, Math.max(orders + warm + (steadyWarm > 0 ? steadyWarm + steadyOrders : 0), entryKinds.length > 0 ? entryWarm + entryOrders + (entrySteadyWarm > 0 ? entrySteadyWarm + entryOrders : 0) : 0));
    let failures = 0;
    let latency = { p50: 0, p99: 0 };
    /**
     * Sends `list` through autocannon, `connections` spread over `targets`, each request HMAC-signed
     * as it leaves (the timestamp is checked against a window). autocannon writes raw HTTP on its
     * sockets: fetch cost this client about as much CPU per request as the bare server below it
     * (it held the floor near 900/s), so the client, not the venue, would have set the figure.
     */
    const run = async (list: typeof signed, targets: string[] = urls, keys: Ready['keys'] = ready.keys): Promise<number> => {
      let next = 0;
      let refused = 0;
      const span = requestSpan();
      const share = Math.ceil(list.length / targets.length);
      const results = await Promise.all(
        targets.map((url, t) =>
          autocannon({
            url,
            connections: Math.max(1, Math.floor(connections / targets.length)),
            amount: Math.min(share, list.length - t * share),
            requests: [
              signedOrderRequest(() => list[next++], keys, () => refused++, span),
            ],
          }),
        ),
      );
      const seconds = span.seconds();
      failures = refused + results.reduce((n, r) => n + r.errors, 0);
      // Each target's percentiles; with two, the worse of them.
      latency = { p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) };
      return seconds;
    };
    const cpuOf = (child: ServerChild['child']) =>
      new Promise<{ us: number; activeMs: number; threads?: Record<string, number>; events?: number }>((resolve) => {
        const on = (m: any) => {
          if (m?.cpu) {
            child.off('message', on);
            resolve({ us: m.cpu.user + m.cpu.system, activeMs: m.elu.active, threads: m.threads, events: m.events });
          }
        };
        child.on('message', on);
        child.send('cpu');
      });
    // Every server process's CPU and loop time, summed.
    const cpu = async (of: ServerChild[] = servers) => {
      const all = await Promise.all(of.map((s) => cpuOf(s.child)));
      return { ...all.reduce((a, b) => ({ us: a.us + b.us, activeMs: a.activeMs + b.activeMs }), { us: 0, activeMs: 0 }), each: all };
    };
    await run(signed.slice(0, warm));
    const services0 = serviceCpuUs();
    const cpu0 = await cpu();
    await profileChild(servers[0].child, 'start');
    if (topology === 'two-apis') await profileChild(servers[1].child, 'start');
    const seconds = await run(signed.slice(warm, warm + orders));
    // The machine's load when each figure was taken (others' tests and benches share these 2 cores).
    const load: string[] = [`single ${os.loadavg()[0].toFixed(1)}`];
    await profileChild(servers[0].child, 'stop', topology === 'two-apis' ? 'rest-order-engine' : 'rest-order', orders);
    // An API process of two takes half the orders.
    if (topology === 'two-apis') await profileChild(servers[1].child, 'stop', 'rest-order-api', orders / 2);
    const cpu1 = await cpu();
    const servicesCpuUsPerOrder = (serviceCpuUs() - services0) / orders;
    const perServerCpuUsPerOrder = cpu1.each.map((c, i) => (c.us - cpu0.each[i].us) / orders);
    const perServerLoopUsPerOrder = cpu1.each.map((c, i) => ((c.activeMs - cpu0.each[i].activeMs) * 1000) / orders);
    const serverCpuUsPerOrder = (cpu1.us - cpu0.us) / orders;
    const serverLoopUsPerOrder = ((cpu1.activeMs - cpu0.activeMs) * 1000) / orders;
    const perSec = orders / seconds;
    const { p50: p50Ms, p99: p99Ms } = latency;
    const refusedInRun = failures;
    // The steady window (see steadyWarm), on the same server after the first.
    let steady: SteadyFigure | undefined;
    if (steadyWarm > 0) {
      const from = warm + orders;
      await run(signed.slice(from, from + steadyWarm));
      const s0 = serviceCpuUs();
      const c0 = await cpu();
      await profileChild(servers[0].child, 'start');
      if (topology === 'two-apis') await profileChild(servers[1].child, 'start');
      const secs = await run(signed.slice(from + steadyWarm, from + steadyWarm + steadyOrders));
      await profileChild(servers[0].child, 'stop', topology === 'two-apis' ? 'rest-order-steady-engine' : 'rest-order-steady', steadyOrders);
      if (topology === 'two-apis') await profileChild(servers[1].child, 'stop', 'rest-order-steady-api', steadyOrders / 2);
      const c1 = await cpu();
      steady = {
        perServerCpuUsPerOrder: c1.each.map((c, i) => (c.us - c0.each[i].us) / steadyOrders),
        perServerLoopUsPerOrder: c1.each.map((c, i) => ((c.activeMs - c0.each[i].activeMs) * 1000) / steadyOrders),
        servicesCpuUsPerOrder: (serviceCpuUs() - s0) / steadyOrders,
        warmOrders: warm + orders + steadyWarm, eventsBefore: c0.each[0].events ?? 0, orders: steadyOrders, refused: failures, perSec: steadyOrders / secs, p50Ms: latency.p50, p99Ms: latency.p99,
        cpuUsPerOrder: (c1.us - c0.us) / steadyOrders, loopUsPerOrder: ((c1.activeMs - c0.activeMs) * 1000) / steadyOrders,
        threads: threadSplit(servers[0].child.pid, c0.each[0].threads, c1.each[0].threads, steadyOrders),
      };
      load[0] += `, single steady ${os.loadavg()[0].toFixed(1)}`;
    }

    if (opts.nativeRecoverPerSec !== undefined) {
      const ratio = perSec / opts.nativeRecoverPerSec;
      const table = [
        '| figure | value |',
        '| --- | ---: |',
        `| signed orders end to end over HTTP, ${topology === 'two-apis' ? `two perp API processes and one engine over Redis Streams, ${pgSchema ? 'PostgreSQL' : 'one SQLite file'}` : `one process${pgSchema ? ', PostgreSQL' : ''}`} (${walletCount} wallets, ${connections} connections, ${orders} orders, ${refusedInRun} refused) | ${perSec.toFixed(0)}/s |`,
        `| latency per order p50 / p99 | ${p50Ms.toFixed(1)} / ${p99Ms.toFixed(1)} ms |`,
        `| CPU per order, all ${servers.length} server processes (user + system) | ${serverCpuUsPerOrder.toFixed(0)} µs |`,
        `| end to end ÷ native recovery alone (target ≥ 0.25) | ${ratio.toFixed(3)} ${ratio >= 0.25 && refusedInRun === 0 ? 'met' : 'NOT met'} |`,
      ].join('\n');
      return {
        orders, failures: refusedInRun, seconds, perSec, p50Ms, p99Ms, serverCpuUsPerOrder, serverLoopUsPerOrder, perServerCpuUsPerOrder, perServerLoopUsPerOrder, servicesCpuUsPerOrder,
        nativeRecoverPerSec: opts.nativeRecoverPerSec, jsRecoverPerSec: 0, typedNativePerSec: 0, typedViemPerSec: 0, digestPerSec: 0,
        floorPerSec: 0, floorCpuUsPerRequest: 0, ratio, floorRatio: 0, recoverPerSec: 0, entry: [], overhead: [], table, steady,
      };
    }
    // The floor: bare Fastify, the same client and bodies (serveFloor), once the venue is idle.
    const floor = await startChild(['floor'], master);
    let floorPerSec: number;
    let floorCpuUsPerRequest: number;
    // The floor answers several times faster than the venue: more requests, so its run lasts about
    // as long (it checks no nonce, so the bodies may repeat).
    const floorRequests = Number(process.env.BENCH_PERP_FLOOR_REQUESTS ?? 3 * orders);
    const floorList = Array.from({ length: floorRequests }, (_, i) => signed[i % signed.length]);
    try {
      await run(floorList.slice(0, Number(process.env.BENCH_PERP_FLOOR_WARM ?? 5_000)), [floor.ready.url]);
      const f0 = await cpu([floor]);
      await profileChild(floor.child, 'start');
      floorPerSec = floorRequests / (await run(floorList, [floor.ready.url]));
      load.push(`floor ${os.loadavg()[0].toFixed(1)}`);
      await profileChild(floor.child, 'stop', 'floor', floorRequests);
      floorCpuUsPerRequest = ((await cpu([floor])).us - f0.us) / floorRequests;
    } finally {
      await stopChild(floor.child);
    }
    // Order entry for trading firms (issue 29): the same signed orders in batches over HTTP and as
    // place frames over the WebSocket, each on a fresh server of its own (the same code as above).
    const entry: EntryFigure[] = [];
    for (const kind of entryKinds) {
      const server = await startChild(['server', path.join(dir, `${kind}.sqlite`), '-', ...wallets.map((w) => w.address)], master, kind === 'ws' ? { BENCH_PERP_WS: 'on' } : {});
      try {
        entry.push(await measureEntry(kind, server, signed, walletCount, { warm: entryWarm, orders: entryOrders, batchSize, connections: kind === 'ws' ? wsConnections : batchConnections, window: wsWindow, steadyWarm: entrySteadyWarm }));
        load.push(`${kind} ${os.loadavg()[0].toFixed(1)}`);
      } finally {
        await stopChild(server.child);
      }
    }
    // Issue 40 item 3: the same single REST orders on a fresh server whose projection is written on
    // the order thread, as before the write gate (BENCH_PERP_PROJECTOR_AB=off skips it).
    let onThread: { perSec: number; cpuUsPerOrder: number; loopUsPerOrder: number; p99Ms: number; refused: number } | undefined;
    if (process.env.BENCH_PERP_PROJECTOR_AB !== 'off') {
      const server = await startChild(['server', path.join(dir, 'projector-thread.sqlite'), '-', ...wallets.map((w) => w.address)], master, { BENCH_PERP_PROJECTOR: 'thread' });
      try {
        const target = [server.ready.url];
        await run(signed.slice(0, warm), target, server.ready.keys);
        const c0 = await cpu([server]);
        const secs = await run(signed.slice(warm, warm + orders), target, server.ready.keys);
        const c1 = await cpu([server]);
        onThread = { perSec: orders / secs, cpuUsPerOrder: (c1.us - c0.us) / orders, loopUsPerOrder: ((c1.activeMs - c0.activeMs) * 1000) / orders, p99Ms: latency.p99, refused: failures };
        load.push(`projector-on-thread ${os.loadavg()[0].toFixed(1)}`);
      } finally {
        await stopChild(server.child);
      }
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
    const floorRatio = perSec / floorPerSec;
    const met = (v: number, target: number, refused: number) => `${v >= target && refused === 0 ? 'met' : 'NOT met'}${refused > 0 ? ` (${refused} refused)` : ''}`;
    const entryRows = entry.flatMap((e) => {
      const r = e.perSec / alone.nativePerSec;
      e.ratio = r;
      const what = e.kind === 'batch'
        ? `signed orders in batches of ${e.batchSize} over HTTP, \`POST orders/batch\` (${walletCount} wallets, ${e.connections} connections, ${e.orders} orders in ${e.requests} batches, ${e.refused} refused)`
        : `signed orders over the WebSocket, place frames pipelined ${e.window} deep on each of ${e.connections} authenticated connections (${walletCount} wallets, ${e.orders} orders, ${e.refused} refused)`;
      const unit = e.kind === 'batch' ? 'per batch' : 'per order';
      return [
        `| ${what} | ${e.perSec.toFixed(0)}/s |`,
        `| &nbsp;&nbsp;latency ${unit} p50 / p99; server CPU per order; loop busy per order | ${e.p50Ms.toFixed(1)} / ${e.p99Ms.toFixed(1)} ms; ${e.cpuUsPerOrder.toFixed(0)} µs; ${e.loopUsPerOrder.toFixed(0)} µs |`,
        `| &nbsp;&nbsp;server CPU an order by thread, µs | ${e.threads} |`,
        `| &nbsp;&nbsp;÷ native recovery alone (target ≥ 0.25) | **${r.toFixed(3)}** ${met(r, 0.25, e.refused)} |`,
        ...(e.steady
          ? [
              `| &nbsp;&nbsp;the same once warm, after ${e.steady.warmOrders} orders (${e.steady.orders} orders, ${e.steady.refused} refused): orders/s; latency ${unit} p50 / p99; server CPU per order; loop busy per order | ${e.steady.perSec.toFixed(0)}/s; ${e.steady.p50Ms.toFixed(1)} / ${e.steady.p99Ms.toFixed(1)} ms; ${e.steady.cpuUsPerOrder.toFixed(0)} µs; ${e.steady.loopUsPerOrder.toFixed(0)} µs |`,
              `| &nbsp;&nbsp;&nbsp;&nbsp;server CPU an order by thread, µs | ${e.steady.threads} |`,
            ]
          : []),
      ];
    });
    // Issue 40: server CPU per accepted order against recovery alone plus the bare route's CPU for
    // the order's share of its request, every input from this run.
    const slowestRecovery = Math.min(...alone.nativeRoundsPerSec);
    const overhead: OverheadRow[] = [
      { kind: 'single' as const, ordersPerRequest: 1, cpuUsPerOrder: serverCpuUsPerOrder, target: 2.5 },
      ...(steady ? [{ kind: 'single-steady' as const, ordersPerRequest: 1, cpuUsPerOrder: steady.cpuUsPerOrder, target: 2.5 }] : []),
      ...entry.flatMap((e) => [
        { kind: e.kind, ordersPerRequest: e.batchSize, cpuUsPerOrder: e.cpuUsPerOrder, target: 2.0 },
        ...(e.steady ? [{ kind: `${e.kind}-steady` as const, ordersPerRequest: e.batchSize, cpuUsPerOrder: e.steady.cpuUsPerOrder, target: 2.0 }] : []),
      ]),
    ].map((x) => {
      const f = overheadFactor({ cpuUsPerOrder: x.cpuUsPerOrder, nativeRecoverPerSec: alone.nativePerSec, floorCpuUsPerRequest, ordersPerRequest: x.ordersPerRequest });
      const slow = overheadFactor({ cpuUsPerOrder: x.cpuUsPerOrder, nativeRecoverPerSec: slowestRecovery, floorCpuUsPerRequest, ordersPerRequest: x.ordersPerRequest });
      return { ...x, recoveryUs: f.recoveryUs, floorUsPerOrder: f.floorUsPerOrder, factor: f.factor, factorSlowestRecovery: slow.factor };
    });
    const warmOf = (k: EntryKind) => entry.find((e) => e.kind === k)?.steady?.warmOrders ?? 0;
    const overheadName = {
      single: 'single REST orders', 'single-steady': `single REST orders, warm (after ${steady?.warmOrders ?? 0} orders)`,
      batch: `batches of ${batchSize}`, 'batch-steady': `batches of ${batchSize}, warm (after ${warmOf('batch')} orders)`,
      ws: 'WebSocket orders', 'ws-steady': `WebSocket orders, warm (after ${warmOf('ws')} orders)`,
    } as const;
    const refusedOf = (k: OverheadRow['kind']) => {
      if (k === 'single') return refusedInRun;
      if (k === 'single-steady') return steady?.refused ?? 0;
      const e = entry.find((x) => x.kind === k.replace('-steady', ''));
      return (k.endsWith('-steady') ? e?.steady?.refused : e?.refused) ?? 0;
    };
    const overheadRows = [
      `| overhead factor (issue 40): server CPU per accepted order ÷ (native recovery alone ${(1e6 / alone.nativePerSec).toFixed(1)} µs, rounds ${alone.nativeRoundsPerSec.map((r) => (1e6 / r).toFixed(1)).join(' / ')} µs, + bare Fastify CPU ${floorCpuUsPerRequest.toFixed(1)} µs a request ÷ orders a request) | |`,
      ...overhead.map(
        (o) =>
          `| &nbsp;&nbsp;${overheadName[o.kind]}: ${o.cpuUsPerOrder.toFixed(0)} µs ÷ (${o.recoveryUs.toFixed(1)} + ${o.floorUsPerOrder.toFixed(1)}) µs (target ≤ ${o.target.toFixed(1)}; with the slowest recovery round ${o.factorSlowestRecovery.toFixed(2)}) | **${o.factor.toFixed(2)}** ${o.factor <= o.target && refusedOf(o.kind) === 0 ? 'met' : 'NOT met'} |`,
      ),
    ];
    const lean = [...benchLean()];
    const table = [
      '| figure | value |',
      '| --- | ---: |',
      ...(lean.length > 0 ? [`| **BENCH_PERP_LEAN=${lean.join(',')}: a diagnosis, not the venue (left out: ${lean.map((p) => (p === 'journal' ? "the journal's command-id index and nonce claims" : 'the projection')).join(', ')})** | |`] : []),
      `| signed orders end to end over HTTP (${walletCount} wallets, ${connections} connections, ${orders} orders, ${refusedInRun} refused) | ${perSec.toFixed(0)}/s |`,
      `| latency per order p50 / p99 | ${p50Ms.toFixed(1)} / ${p99Ms.toFixed(1)} ms |`,
      `| server CPU per order (user + system, all threads) | ${serverCpuUsPerOrder.toFixed(0)} µs |`,
      `| server event loop busy per order (its CPU, synchronous waits such as SQLite's fsync, time descheduled) | ${serverLoopUsPerOrder.toFixed(0)} µs (${((100 * (cpu1.activeMs - cpu0.activeMs)) / (seconds * 1000)).toFixed(0)}% of the run) |`,
      `| server CPU an order by thread, µs | ${threadSplit(servers[0].child.pid, cpu0.each[0].threads, cpu1.each[0].threads, orders)} |`,
      ...(steady
        ? [
            `| the same single REST orders on the same server once warm, after ${steady.warmOrders} orders and ${steady.eventsBefore} events (${steady.orders} orders, ${steady.refused} refused): orders/s; p50 / p99; server CPU per order; loop busy per order | ${steady.perSec.toFixed(0)}/s; ${steady.p50Ms.toFixed(1)} / ${steady.p99Ms.toFixed(1)} ms; ${steady.cpuUsPerOrder.toFixed(0)} µs; ${steady.loopUsPerOrder.toFixed(0)} µs |`,
            `| &nbsp;&nbsp;server CPU an order by thread, µs | ${steady.threads} |`,
          ]
        : []),
      `| floor: bare Fastify answering the same bodies from the same client, no work behind it (${floorRequests} requests) | ${floorPerSec.toFixed(0)}/s (CPU ${floorCpuUsPerRequest.toFixed(0)} µs a request) |`,
      `| single signed order ÷ the floor, orders/s ÷ requests/s (issue 29's target ≥ 0.4) | **${floorRatio.toFixed(3)}** ${met(floorRatio, 0.4, refusedInRun)} (CPU a request ÷ CPU an order: ${(floorCpuUsPerRequest / serverCpuUsPerOrder).toFixed(3)}) |`,
      `| signer recovery alone, native libsecp256k1 (${alone.signatures} signatures, one core) | ${alone.nativePerSec.toFixed(0)}/s |`,
      `| signer recovery alone, viem JS (${alone.jsSignatures} signatures, one core) | ${alone.jsPerSec.toFixed(0)}/s |`,
      `| an order's two address checksums (its account, its signer) where the venue has more traders than viem's LRU of 8,192 (${alone.checksumUs.addresses} distinct addresses, one core): viem getAddress (before 28 November) / Keccak in wasm, µs an order | ${(2 * alone.checksumUs.viem).toFixed(1)} / ${(2 * alone.checksumUs.wasm).toFixed(1)} |`,
      `| EIP-712 digest alone of these orders, viem hashTypedData (one core) | ${digestPerSec.toFixed(0)}/s (${(1e6 / digestPerSec).toFixed(0)} µs) |`,
      `| EIP-712 recovery of these orders, digest + native (one core) | ${typedNativePerSec.toFixed(0)}/s |`,
      `| EIP-712 recovery of these orders, viem recoverTypedDataAddress (one core) | ${typedViemPerSec.toFixed(0)}/s |`,
      `| end to end ÷ native recovery alone (target ≥ 0.25) | **${ratio.toFixed(3)}** ${met(ratio, 0.25, refusedInRun)} |`,
      `| end to end ÷ viem EIP-712 recovery (the former yardstick) | ${(perSec / typedViemPerSec).toFixed(2)} |`,
      ...(onThread
        ? [
            `| the same single REST orders, projection written on the order thread (PERP_PROJECTOR=thread; ${onThread.refused} refused): orders/s; server CPU per order; loop busy per order; p99 | ${onThread.perSec.toFixed(0)}/s; ${onThread.cpuUsPerOrder.toFixed(0)} µs; ${onThread.loopUsPerOrder.toFixed(0)} µs; ${onThread.p99Ms.toFixed(1)} ms |`,
            `| &nbsp;&nbsp;on its worker thread (the default) ÷ on the order thread: orders/s; loop busy per order | **${(perSec / onThread.perSec).toFixed(2)}**; ${(serverLoopUsPerOrder / onThread.loopUsPerOrder).toFixed(2)} |`,
          ]
        : []),
      ...entryRows,
      ...overheadRows,
      `| load average (1 min) at the end of each figure's run, 2 cores | ${load.join(', ')} |`,
    ].join('\n');
    const profiles = process.env.BENCH_PERP_PROF;
    // BENCH_PERP_HEAP=1 leaves heap profiles, read by bench/heap-sampling-summary.ts.
    const breakdown = profiles && process.env.BENCH_PERP_HEAP !== '1'
      ? `\n\nwhere the time goes (profiled runs in ${profiles}; bench/perp-profile-summary.ts):\n\n` +
        breakdownTable(['rest-order', ...(steady ? ['rest-order-steady'] : []), 'floor', ...entry.flatMap((e) => { const n = e.kind === 'batch' ? 'batch-orders' : 'ws-orders'; return e.steady ? [n, `${n}-warm`] : [n]; })].map((n) => summariseProfile(profiles, n)))
      : '';
    return {
      orders, failures: refusedInRun, seconds, perSec, p50Ms, p99Ms, serverCpuUsPerOrder, serverLoopUsPerOrder,
      nativeRecoverPerSec: alone.nativePerSec, jsRecoverPerSec: alone.jsPerSec, typedNativePerSec, typedViemPerSec, digestPerSec,
      floorPerSec, floorCpuUsPerRequest, ratio, floorRatio, recoverPerSec: typedViemPerSec, entry, overhead, table: table + breakdown, onThread, steady,
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
    // The run's streams and keys in Redis (commands, replies, replay nonces): each run has a prefix
    // of its own, and left behind they filled a shared Redis with hundreds of megabytes.
    if (prefix !== '-' && process.env.REDIS_URL) {
      const { Redis } = await import('ioredis');
      const redis = new Redis(process.env.REDIS_URL);
      for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1_000 }) as AsyncIterable<string[]>) if (keys.length > 0) await redis.unlink(...keys);
      redis.disconnect();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** BENCH_PERP_PROF=<dir>: asks a server child to start or stop its profile of a measured run (<dir>/<name>.cpuprofile, the order count in <name>.orders). */
async function profileChild(child: ServerChild['child'], what: 'start' | 'stop', name = '', orders = 0): Promise<void> {
  const dir = process.env.BENCH_PERP_PROF;
  if (!dir) return;
  const file = path.resolve(dir, `${name}.cpuprofile`);
  await new Promise<void>((resolve) => {
    const on = (m: any) => {
      if (m?.profiled === what) {
        child.off('message', on);
        resolve();
      }
    };
    child.on('message', on);
    child.send({ profile: what, file });
  });
  if (what === 'stop') fs.writeFileSync(path.resolve(dir, `${name}.orders`), String(orders));
}

/**
 * Each thread's time on a CPU so far, ns, by thread id (/proc/self/task/<tid>/schedstat: Node names
 * every thread `node`, so the order thread is the one whose id is the process's, and the others are
 * told apart by their share). Empty where /proc is not Linux's. `field` 1: the time it was runnable
 * but waited for a core (ns); 2: how many times it was put on a core (each wake-up and each
 * preemption's return).
 */
export function threadTimes(field: 0 | 1 | 2 = 0): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      try {
        out[tid] = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[field]);
      } catch {
        // A thread that ended between the listing and the read.
      }
    }
  } catch {
    // No /proc.
  }
  return out;
}

/**
 * Where a run's CPU went by thread, µs an order: the order thread (id = the process's), then the
 * three busiest other threads (the journal's writer and the projection's worker when they run, V8's
 * helpers), the rest summed. "order thread 319 · 98 · 40 · 6 · rest 9".
 */
export function threadSplit(pid: number | undefined, t0: Record<string, number> | undefined, t1: Record<string, number> | undefined, orders: number): string {
  if (pid === undefined || t0 === undefined || t1 === undefined || Object.keys(t1).length === 0) return 'n/a';
  const us = (tid: string) => ((t1[tid] ?? 0) - (t0[tid] ?? 0)) / 1000 / orders;
  const others = Object.keys(t1).filter((t) => t !== String(pid)).map(us).sort((a, b) => b - a);
  const top = others.slice(0, 3).map((x) => x.toFixed(0));
  const rest = others.slice(3).reduce((a, b) => a + b, 0);
  const line = `order thread ${us(String(pid)).toFixed(0)} · ${top.join(' · ')} · rest ${rest.toFixed(0)}`;
  // BENCH_THREADS_ALL=1: every thread over 1 µs an order, by its id (ids grow in creation order).
  if (process.env.BENCH_THREADS_ALL === '1') return `${line} [${Object.keys(t1).sort((a, b) => Number(a) - Number(b)).filter((t) => us(t) >= 1).map((t) => `${Number(t) - pid}:${us(t).toFixed(0)}`).join(' ')}]`;
  return line;
}

/** A server child's CPU (user + system, µs) and event-loop busy time (ms) so far, with its threads' times (threadTimes: on a core, waiting for one, put on one) and how many GC pauses its main thread has had. */
export function childUsage(child: ServerChild['child']): Promise<{ us: number; activeMs: number; threads?: Record<string, number>; waits?: Record<string, number>; wakeups?: Record<string, number>; gcPauses?: number }> {
  return new Promise((resolve) => {
    const on = (m: any) => {
      if (m?.cpu) {
        child.off('message', on);
        resolve({ us: m.cpu.user + m.cpu.system, activeMs: m.elu.active, threads: m.threads, waits: m.waits, wakeups: m.wakeups, gcPauses: m.gcPauses });
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

const percentile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/**
 * `list` cut into batches: a batch is one wallet's (its API key's) orders, up to `size` of them in
 * the list's order; the wallets' batches are then sent in turn, so buyers and sellers alternate as
 * the single orders do.
 */
export function batchesOf(list: SignedOrder[], wallets: number, size: number): SignedOrder[][] {
  const per: SignedOrder[][] = Array.from({ length: wallets }, () => []);
  for (const o of list) per[o.wallet].push(o);
  const chunks = per.map((l) => Array.from({ length: Math.ceil(l.length / size) }, (_, i) => l.slice(i * size, (i + 1) * size)));
  const out: SignedOrder[][] = [];
  for (let i = 0; chunks.some((c) => i < c.length); i++) for (const c of chunks) if (i < c.length) out.push(c[i]);
  return out;
}

/** Sends batches through autocannon, each HMAC-signed as it leaves; counts the orders refused inside answered batches. */
export async function sendBatches(batches: SignedOrder[][], url: string, keys: Ready['keys'], connections: number): Promise<{ seconds: number; refused: number; p50: number; p99: number }> {
  const pathOf = '/v4/public/trader/orders/batch';
  let next = 0;
  let refused = 0;
  const span = requestSpan();
  const r = await autocannon({
    url,
    connections,
    amount: batches.length,
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          span.sent();
          const b = batches[next++];
          const key = keys[b[0].wallet];
          const body = `{"orders":[${b.map((o) => o.body).join(',')}]}`;
          const ts = String(Date.now());
          return {
            ...req, method: 'POST', path: pathOf, body,
            headers: {
              'content-type': 'application/json', 'X-Api-Key': key.apiKey, 'X-Api-Ts': ts, 'X-Chain-Id': String(CHAIN_ID),
              'X-Api-Sign': signPerp(key.apiSecret, { ts, method: 'POST', requestPath: pathOf, body }),
            },
          };
        },
        onResponse: (status: number, body: string) => {
          span.answered();
          // A batch refused whole (not 200) counts once: its answer does not say how many orders it held.
          if (status !== 200) return void refused++;
          const answer = JSON.parse(body) as { code: number; data?: { results?: Array<{ code: number }> } };
          const results = answer.data?.results ?? [];
          if (answer.code !== 0) refused += Math.max(1, results.length);
          for (const x of results) if (x.code !== 0) refused++;
        },
      },
    ],
  });
  return { seconds: span.seconds(), refused: refused + r.errors, p50: r.latency.p50, p99: r.latency.p99 };
}

/**
 * Sends `list` as place frames over `connections` WebSockets, each authenticated with one wallet's
 * key (a connection only sends its wallet's orders; the wallets' orders are dealt to their
 * connections in turn), each keeping `window` frames in flight (the endpoint queues up to 16 a
 * connection and handles them one after the other). Frames are built before the clock starts.
 */
export async function sendFrames(list: SignedOrder[], wsUrl: string, keys: Ready['keys'], wallets: number, connections: number, window: number): Promise<{ seconds: number; refused: number; p50: number; p99: number }> {
  const queues: string[][] = Array.from({ length: connections }, () => []);
  const dealt = Array.from({ length: wallets }, () => 0);
  const perWallet = (w: number) => Math.floor((connections - 1 - w) / wallets) + 1;
  for (const [i, o] of list.entries()) {
    const c = o.wallet + wallets * (dealt[o.wallet]++ % perWallet(o.wallet));
    queues[c].push(`{"op":"order","id":"${i}","action":"place","body":${o.body}}`);
  }
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
            // Results come back in the order sent (one lane a connection).
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

/** One issue-29 figure on a fresh server: `warm` orders, then `orders` measured, the server's CPU and loop time around them. */
async function measureEntry(
  kind: EntryKind,
  server: ServerChild,
  signed: SignedOrder[],
  wallets: number,
  o: { warm: number; orders: number; batchSize: number; connections: number; window: number; steadyWarm: number },
): Promise<EntryFigure> {
  const { keys } = server.ready;
  const warmList = signed.slice(0, o.warm);
  const list = signed.slice(o.warm, o.warm + o.orders);
  const send = (l: SignedOrder[]) =>
    kind === 'batch'
      ? sendBatches(batchesOf(l, wallets, o.batchSize), server.ready.url, keys, o.connections)
      : sendFrames(l, server.ready.wsUrl!, keys, wallets, o.connections, o.window);
  if (kind === 'ws' && !server.ready.wsUrl) throw new Error('perp bench: the server has no order-entry WebSocket');
  const w = await send(warmList);
  if (w.refused > 0) throw new Error(`perp bench: ${w.refused} of the ${kind} warm-up orders were refused`);
  const u0 = await childUsage(server.child);
  await profileChild(server.child, 'start');
  const r = await send(list);
  await profileChild(server.child, 'stop', kind === 'batch' ? 'batch-orders' : 'ws-orders', list.length);
  const u1 = await childUsage(server.child);
  let steady: EntryFigure['steady'];
  if (o.steadyWarm > 0) {
    // Issue 40: the warm window, as for single REST orders: V8 still optimises the order path
    // through the first window, and its compiler threads' CPU is counted in it.
    const from = o.warm + o.orders;
    const more = await send(signed.slice(from, from + o.steadyWarm));
    if (more.refused > 0) throw new Error(`perp bench: ${more.refused} of the ${kind} orders before the warm window were refused`);
    const again = signed.slice(from + o.steadyWarm, from + o.steadyWarm + o.orders);
    const v0 = await childUsage(server.child);
    await profileChild(server.child, 'start');
    const s1 = await send(again);
    await profileChild(server.child, 'stop', kind === 'batch' ? 'batch-orders-warm' : 'ws-orders-warm', again.length);
    const v1 = await childUsage(server.child);
    steady = {
      warmOrders: from + o.steadyWarm, orders: again.length, refused: s1.refused, perSec: again.length / s1.seconds, p50Ms: s1.p50, p99Ms: s1.p99,
      cpuUsPerOrder: (v1.us - v0.us) / again.length, loopUsPerOrder: ((v1.activeMs - v0.activeMs) * 1000) / again.length,
      threads: threadSplit(server.child.pid, v0.threads, v1.threads, again.length),
    };
  }
  return {
    kind, orders: list.length, requests: kind === 'batch' ? Math.ceil(list.length / o.batchSize) : list.length, batchSize: kind === 'batch' ? o.batchSize : 1,
    connections: o.connections, window: kind === 'ws' ? o.window : 1, refused: r.refused, seconds: r.seconds, perSec: list.length / r.seconds,
    p50Ms: r.p50, p99Ms: r.p99, cpuUsPerOrder: (u1.us - u0.us) / list.length, loopUsPerOrder: ((u1.activeMs - u0.activeMs) * 1000) / list.length,
    threads: threadSplit(server.child.pid, u0.threads, u1.threads, list.length), ratio: 0, steady,
  };
}

/**
 * The time from the first request sent to the last answer received. Not the time autocannon takes:
 * with `amount` it resolves at its next 1-second sample tick after the last answer, so a run's
 * length came out as whole seconds (4,000 orders took "3 s" or "4 s": 1,327/s or 995/s, and the
 * floor could not pass 4,000/s).
 */
interface RequestSpan {
  sent(): void;
  answered(): void;
  seconds(): number;
}
function requestSpan(): RequestSpan {
  let first = 0n;
  let last = 0n;
  return {
    sent() {
      if (first === 0n) first = process.hrtime.bigint();
    },
    answered() {
      last = process.hrtime.bigint();
    },
    seconds: () => Number(last - first) / 1e9,
  };
}

/**
 * One autocannon request that takes the next order from `take` and HMAC-signs it as it leaves (the
 * timestamp is checked against a window); `refused` hears every answer that is not code 0.
 */
function signedOrderRequest(take: () => SignedOrder, keys: Ready['keys'], refused: () => void, span?: RequestSpan) {
  const pathOf = '/v4/public/trader/orders';
  return {
    setupRequest: (req: Record<string, unknown>) => {
      span?.sent();
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
      span?.answered();
      if (status !== 200 || (JSON.parse(body) as { code: number }).code !== 0) refused();
    },
  };
}

/** Sends `list` to one server through autocannon, each request HMAC-signed as it leaves; answers the seconds and the refused. */
export async function sendOrders(list: SignedOrder[], url: string, keys: Ready['keys'], connections: number): Promise<{ seconds: number; refused: number }> {
  let next = 0;
  let refused = 0;
  const span = requestSpan();
  const r = await autocannon({
    url,
    connections,
    amount: list.length,
    requests: [
      signedOrderRequest(() => list[next++], keys, () => refused++, span),
    ],
  });
  return { seconds: span.seconds(), refused: refused + r.errors };
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
  const wallets = makeWallets(walletCount);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-metrics-bench-'));
  const master = randomBytes(32).toString('hex');
  const addresses = wallets.map((w) => w.address);
  // Interleaved (off, on, off, on, …): no kind is always started first.
  const kinds = Array.from({ length: 2 * perKind }, (_, i) => (i % 2 === 0 ? 'off' : 'on'));
  const servers: ServerChild[] = [];
  let scraper: NodeJS.Timeout | undefined;
  try {
    for (const [i, kind] of kinds.entries()) {
      // Never profiled or SQL-timed (BENCH_PERP_PROF is for runPerpOrdersBench): their CPU is the figure.
      servers.push(await startChild(['server', path.join(dir, `${i}-${kind}.sqlite`), '-', ...addresses], master, { BENCH_METRICS: kind, BENCH_PERP_PROF: '' }));
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
  if (process.env.BENCH_PERP_METRICS !== 'off') console.log((await runMetricsCostBench()).table);
  if (process.env.REDIS_URL) console.log((await runPerpOrdersBench({ topology: 'two-apis', nativeRecoverPerSec: r.nativeRecoverPerSec })).table);
}

/**
 * An order-entry WebSocket authenticated with `key`. Connections sharing a key authenticate within
 * one millisecond on a fast host: the SDK's per-key stamp keeps their signatures apart (an identical
 * one is a replay, 20007).
 */
export function openOrderStream(wsUrl: string, key: Ready['keys'][number]): Promise<WebSocket> {
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

/** A server child's main-thread GC pauses, [kind, ms], from the `from`-th on (childUsage's `gcPauses` counts them). */
export function childGcPauses(child: ServerChild['child'], from: number): Promise<Array<[number, number]>> {
  return new Promise((resolve) => {
    const on = (m: any) => {
      if (m?.gcPausesSince) {
        child.off('message', on);
        resolve(m.gcPausesSince as Array<[number, number]>);
      }
    };
    child.on('message', on);
    child.send({ gcPausesFrom: from });
  });
}
