/**
 * The perpetual API alone, served over a real socket on 127.0.0.1: a real database (SQLite, or a
 * PostgreSQL schema of its own), the real key service, and the replay and rate-limit stores in
 * memory or in Redis. Faster than the whole stack, and the limit and clock can be set per test.
 * Use with `describe.each(perpHarnessVariants())`.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { dropRedisKeys } from './redis-keys.ts';
import type { FastifyInstance } from 'fastify';
import { createApiKeyService, type ApiKeyService } from '../../src/auth/api-key-service.ts';
import type { PerpPermission } from '../../src/auth/api-key-model.ts';
import { createMemoryNonceStore, createRedisNonceStore, nonceFenceKey, type NonceStore } from '../../src/auth/nonce-store.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import type { RateLimitSettings } from '../../src/http/rate-limiter.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { buildPerpApi, type PerpApiOptions } from '../../src/perp/perp-api.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { indexedBlockInfo, projectorCaughtUp, replicaVenue, type PerpVenue } from '../../src/perp/perp-venue.ts';
import { createJournalReplica, type JournalReplica } from '../../src/perp/sequencer/journal-replica.ts';
import { createPerpProjector, type PerpProjector } from '../../src/perp/projection/perp-projector.ts';
import { createInProcessGateway, type EngineGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { PerpClient } from '@tokex/sdk';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases } from './test-databases.ts';

/** One dollar in the venue's collateral units (micro-USD). */
export const USD = 1_000_000n;
export const HARNESS_CHAIN_ID = 31337;
export const HARNESS_VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

/** The engine behind a harness started with `engine: true`: a real sequencer journalling to the harness's database. */
export interface HarnessVenue {
  sequencer: EngineSequencer;
  gateway: EngineGateway;
  projector: PerpProjector;
  /**
   * Credits `amount` micro-USD to `account` with the engine's `deposit` command, the command the
   * collateral task submits for an indexed vault deposit (the chain path is the stack tests').
   */
  deposit(account: string, amount: bigint): Promise<void>;
  /** Sets mark and index (ticks) of `symbol`, as the mark-price task does. */
  mark(symbol: string, markTicks: number, indexTicks?: number): Promise<void>;
  /** Waits until the history tables hold every event the engine has made durable. */
  settled(): Promise<void>;
}

export interface PerpHarness {
  app: FastifyInstance;
  baseUrl: string;
  db: Db;
  keys: ApiKeyService;
  /** Creates a perp key directly in the store (as an operator would) and a client for it. */
  key(opts?: { permissions?: PerpPermission[]; userAddress?: string | null; ipWhitelist?: string[]; expiresAt?: number | null; chainId?: number }): Promise<{ apiKey: string; apiSecret: string; client: PerpClient }>;
  client(apiKey: string, apiSecret: string, opts?: { now?: () => number; chainId?: number | string }): PerpClient;
  /** Present when started with `engine: true`. */
  venue?: HarnessVenue;
  /** The venue the API was given (a replica's with `replicaPollMs`). */
  apiVenue?: PerpVenue;
  /** The API's journal replica, with `replicaPollMs`. */
  replica?: JournalReplica;
  stop(): Promise<void>;
}

/** A trader of the harness's venue: a wallet of its own, its engine account id and a client on a key bound to it. */
export interface PerpTrader {
  wallet: PrivateKeyAccount;
  /** The wallet's address in lower case, as the engine names accounts. */
  account: string;
  api: PerpClient;
}

/** A new trader with `permissions` (READ and TRADE unless said) and `deposit` micro-USD of collateral on the venue. */
export async function newTrader(h: PerpHarness, deposit: bigint, permissions: PerpPermission[] = ['READ', 'TRADE']): Promise<PerpTrader> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const { client } = await h.key({ userAddress: wallet.address, permissions });
  if (deposit > 0n) await h.venue!.deposit(wallet.address, deposit);
  return { wallet, account: wallet.address.toLowerCase(), api: client };
}

/** The book the market-data suites trade against on AAPL-USD: asks of 5 and 3 at 200.5 and 4 at 201, a bid of 2 at 199. */
export async function placeMakerBook(maker: PerpTrader): Promise<void> {
  const limit = (side: 'BUY' | 'SELL', size: string, price: string) => maker.api.placeOrder(maker.wallet, { symbol: 'AAPL-USD', side, type: 'LIMIT', size, price });
  await limit('SELL', '5', '200.5');
  await limit('SELL', '3', '200.5');
  await limit('SELL', '4', '201');
  await limit('BUY', '2', '199');
}

export interface HarnessOptions {
  limit?: number;
  now?: () => number;
  /** Run a real engine (sequencer, projector) behind the trading and account endpoints. */
  engine?: boolean;
  /** The projector's least time between writes (default its own, 25 ms). */
  projectorWriteIntervalMs?: number;
  /**
   * With `engine: true`: the API reads a journal replica that polls every `replicaPollMs`, as a perp
   * API in a process apart from the engine does (perp-venue.ts `replicaVenue`).
   */
  replicaPollMs?: number;
  /** More of the API's options (the approve flow's relay, …), given the harness's database. */
  api?: (db: Db) => Partial<PerpApiOptions>;
}

export interface PerpHarnessVariant {
  name: string;
  start(opts?: HarnessOptions): Promise<PerpHarness>;
}

async function startVenue(db: Db, minWriteIntervalMs?: number): Promise<HarnessVenue> {
  const sequencer = new EngineSequencer({ db, snapshotEvery: 50 });
  await sequencer.start();
  // Every command, reply and event through its broker form, as a separate engine process would get them.
  const gateway = createInProcessGateway(sequencer, { serialize: true });
  const projector = createPerpProjector({ db, gateway, feeAccount: sequencer.engine.feeAccountAddress, retryMs: 50, ...(minWriteIntervalMs === undefined ? {} : { minWriteIntervalMs }) });
  await projector.start();
  let n = 0;
  const ok = async (cmd: EngineCommand) => {
    const r = await gateway.submit(cmd);
    if (!r.ok) throw new Error(`harness ${cmd.kind}: ${r.code} ${r.message}`);
  };
  return {
    sequencer,
    gateway,
    projector,
    deposit: (account, amount) => ok({ kind: 'deposit', id: `dep:harness-${randomBytes(8).toString('hex')}`, ts: Date.now(), account: account.toLowerCase(), amount }),
    mark: (symbol, markTicks, indexTicks = markTicks) => ok({ kind: 'setMarkPrice', id: `mark:harness-${++n}-${randomBytes(4).toString('hex')}`, ts: Date.now(), symbol, markPriceTicks: markTicks, indexPriceTicks: indexTicks }),
    settled: () => projector.caughtUp(sequencer.lastDurableEventSeq),
  };
}

async function startHarness(openDb: () => Promise<Db>, redisUrl: string | undefined, opts: HarnessOptions): Promise<PerpHarness> {
  const db = await openDb();
  const venue = opts.engine ? await startVenue(db, opts.projectorWriteIntervalMs) : undefined;
  const keys = createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 0 });
  let redis: Redis | undefined;
  let space: string | undefined;
  let nonces: NonceStore;
  let rateLimit: RateLimitSettings = { limit: opts.limit ?? 120 };
  if (redisUrl) {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
    await redis.connect();
    // Each harness its own key space, so parallel files and earlier runs never share a window.
    space = randomBytes(6).toString('hex');
    // A key space in use for a while, as a deployment's is: its fence (src/auth/nonce-store.ts) a
    // minute back, so a client clock up to the window behind is accepted as it would be there.
    await redis.set(nonceFenceKey(`test:${space}:nonce:`), String((opts.now ?? Date.now)() - 60_000));
    nonces = createRedisNonceStore(redis, { prefix: `test:${space}:nonce:`, now: opts.now });
    rateLimit = { ...rateLimit, redis, prefix: `test:${space}:ratelimit:` };
  } else {
    nonces = createMemoryNonceStore();
  }
  let replica: JournalReplica | undefined;
  let apiVenue: PerpVenue | undefined = venue && {
    gateway: venue.gateway, engine: () => venue.sequencer.engine, blockInfo: () => indexedBlockInfo(db),
    historyCaughtUp: () => projectorCaughtUp((seq) => venue.projector.caughtUp(seq), venue.sequencer.lastDurableEventSeq),
  };
  if (venue && opts.replicaPollMs !== undefined) {
    replica = createJournalReplica({ db, pollMs: opts.replicaPollMs });
    await replica.start();
    apiVenue = replicaVenue({ gateway: venue.gateway, replica, db });
  }
  const app = await buildPerpApi({
    chainId: HARNESS_CHAIN_ID,
    db,
    keys,
    nonces,
    rateLimit,
    logger: createLogger({ level: 'silent' }),
    bodyLimitBytes: 65_536,
    marginVault: HARNESS_VAULT,
    now: opts.now,
    venue: apiVenue,
    ...opts.api?.(db),
  });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const client: PerpHarness['client'] = (apiKey, apiSecret, o = {}) =>
    new PerpClient({ baseUrl, apiKey, apiSecret, chainId: o.chainId ?? HARNESS_CHAIN_ID, now: o.now ?? opts.now });
  return {
    app,
    baseUrl,
    db,
    keys,
    client,
    venue,
    apiVenue,
    replica,
    async key(o = {}) {
      const { key, apiSecret } = await keys.create({
        api: 'perp',
        permissions: o.permissions ?? ['READ', 'TRADE', 'TRANSFER'],
        ipWhitelist: o.ipWhitelist ?? [],
        chainId: o.chainId ?? HARNESS_CHAIN_ID,
        userAddress: o.userAddress === undefined ? `0x${randomBytes(20).toString('hex')}` : o.userAddress,
        expiresAt: o.expiresAt ?? null,
        label: 'test',
      });
      return { apiKey: key.apiKey, apiSecret, client: client(key.apiKey, apiSecret) };
    },
    async stop() {
      await app.close();
      await replica?.stop();
      await venue?.projector.stop();
      await venue?.sequencer.stop();
      await nonces.close();
      redis?.disconnect();
      if (redisUrl && space !== undefined) await dropRedisKeys(redisUrl, `test:${space}:`).catch(() => undefined);
      await db.close();
    },
  };
}

/** SQLite with memory stores always; PostgreSQL with Redis stores when DATABASE_URL / REDIS_URL are set. */
export function perpHarnessVariants(): PerpHarnessVariant[] {
  const out: PerpHarnessVariant[] = [];
  for (const d of testDatabases) {
    const redisUrl = d.name === 'postgres' ? process.env.REDIS_URL : undefined;
    out.push({ name: redisUrl ? `${d.name}+redis` : d.name, start: (opts = {}) => startHarness(d.open, redisUrl, opts) });
  }
  if (!process.env.DATABASE_URL && process.env.REDIS_URL) {
    const sqlite = testDatabases[0];
    out.push({ name: 'sqlite+redis', start: (opts = {}) => startHarness(sqlite.open, process.env.REDIS_URL, opts) });
  }
  return out;
}
