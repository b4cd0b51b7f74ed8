/**
 * Role `perp-api`: the signed perpetual HTTP API on HOST:PERP_API_PORT; stateless, so many may run
 * at once. With REDIS_URL the replay store and the rate-limit counters are shared by every instance
 * (one connection for both); otherwise they live in this process. The engine is the perp-engine
 * role's in this process, or another process's over Redis Streams (PERP_ENGINE_STREAM) with a
 * journal replica for reads; the approve/deposit relay uses the chain's batched read client.
 */
import { openRedis } from '../../storage/redis-client.ts';
import { perpDeploymentOf } from '../../chain/deploy-perp-venue.ts';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../../auth/nonce-store.ts';
import { rateLimitOf, type RateLimitSettings } from '../../http/rate-limiter.ts';
import { buildPerpApi, perpOrderServiceOf } from '../../perp/perp-api.ts';
import { DEFAULT_INSTRUMENTS, withFundingInterval } from '../../perp/engine/instruments.ts';
import type { StackContext } from '../stack-context.ts';
import { createStreamHub } from '../../streams/stream-hub.ts';
import { perpChannels } from '../../perp/streams/perp-stream-channels.ts';
import { attachPerpStreams } from '../../perp/streams/perp-stream-endpoint.ts';
import { PERP_ERROR_CODES } from '../../perp/perp-error-codes.ts';
import { apiTransportFor } from '../../http/tls-options.ts';
import { startGuarded, type StopList } from '../stop-list.ts';
import { followingPerpVenue, replicaVenue, type PerpVenue } from '../../perp/perp-venue.ts';
import { engineUnavailable } from '../../perp/routes/trading-routes.ts';
import { createJournalReplica } from '../../perp/sequencer/journal-replica.ts';
import { createVaultTransactionService } from '../../perp/vault-transaction-service.ts';
import { createRedisGateway, perpStreams } from '../../perp/sequencer/redis-stream-transport.ts';
import { registerLoopbackCors } from '../../http/cors-plugin.ts';
import { API_DEPENDENCIES, createReadinessProbe } from '../../observability/readiness.ts';
import type { Db } from '../../storage/database.ts';

/**
 * The engine of another process: commands over Redis Streams (REDIS_URL, PERP_ENGINE_STREAM), and
 * reads from a replica following the journal in the shared database.
 */
async function remoteVenue(ctx: StackContext, stops: StopList, historyDb: Db): Promise<PerpVenue | undefined> {
  const { config, db, logger } = ctx;
  if (!config.redisUrl || !config.perp.engineStream) return undefined;
  const redis = openRedis(config.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true, enableAutoPipelining: true }, logger, 'perp engine commands');
  await redis.connect();
  stops.add(async () => void redis.disconnect());
  const gateway = createRedisGateway(redis, perpStreams(config.perp.engineStream));
  stops.add(() => gateway.close());
  const replica = createJournalReplica({ db, engineOptions: { instruments: withFundingInterval(DEFAULT_INSTRUMENTS, config.perp.fundingIntervalMs) }, logger });
  await replica.start();
  stops.add(() => replica.stop());
  return replicaVenue({ gateway, replica, db, historyDb });
}

export async function startPerpApiRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, logger, db } = ctx;
  const perp = perpDeploymentOf(ctx.chain.record);
  const marginVault = perp?.contracts.marginVault;
  if (!marginVault) logger.warn('no margin vault in the deployment: API-key typed data use the zero address as verifying contract');
  // HTTPS or plain HTTP, decided (and the certificate files checked) before anything starts.
  const transport = apiTransportFor(config, 'perp API');
  const { stop } = await startGuarded(logger, async (stops) => {
    let nonces: NonceStore;
    let rateLimit: RateLimitSettings = { limit: config.perpRateLimitPerMin };
    if (config.redisUrl) {
      const redis = openRedis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, enableAutoPipelining: true }, logger, 'perp API nonces and rate limits');
      await redis.connect();
      stops.add(async () => void redis.disconnect());
      nonces = createRedisNonceStore(redis, { prefix: 'perp:nonce:' });
      rateLimit = { ...rateLimit, redis, prefix: 'perp:ratelimit:' };
    } else {
      const memoryNonces = createMemoryNonceStore();
      stops.add(() => memoryNonces.close());
      nonces = memoryNonces;
    }
    // Beside the engine: the engine role's venue as it is at each call (its lease lost and taken
    // back starts a new sequencer); otherwise the engine over Redis Streams, if configured.
    // The history's own file on SQLite (the projector of the engine role writes it), `db` on PostgreSQL.
    const historyDb = await ctx.perpHistoryDb();
    const venue = ctx.perpVenue ? followingPerpVenue(() => ctx.perpVenue, engineUnavailable) : await remoteVenue(ctx, stops, historyDb);
    if (!venue) logger.warn('perp-api: no perp engine in this process and no PERP_ENGINE_STREAM with REDIS_URL; trading, account and book endpoints answer 50002');
    const app = await buildPerpApi({
      transport,
      chainId: config.chainId,
      db,
      historyDb,
      keys: ctx.keys,
      nonces,
      rateLimit,
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      trustedProxies: config.trustedProxies,
      marginVault,
      venue,
      vaultTransactions: perp
        ? createVaultTransactionService({ db, publicClient: ctx.chain.readClient, chainId: config.chainId, contracts: perp.contracts })
        : undefined,
      instruments: withFundingInterval(DEFAULT_INSTRUMENTS, config.perp.fundingIntervalMs),
      fundingIntervalMs: config.perp.fundingIntervalMs,
      lpLockupMs: config.perp.lpLockupMs,
      readiness: createReadinessProbe({ db, roles: API_DEPENDENCIES.perp, staleMs: config.readinessStaleMs }),
      // The sandbox's injected faults (docs/sandbox.md), when it is on.
      ...(ctx.sandbox ? { faults: ctx.sandbox.faults } : {}),
    });
    // The WebSocket streams (docs/streams.md): this process's publisher, or the shared one over Redis.
    const broker = ctx.perpStreams ?? (config.redisUrl ? (await ctx.streamBroker('perp')).broker : undefined);
    if (broker && venue) {
      const hub = createStreamHub({ broker, catalog: perpChannels(), goneCode: PERP_ERROR_CODES.SNAPSHOT_REQUIRED.code, logger });
      await hub.start();
      stops.add(() => hub.stop());
      const endpoint = attachPerpStreams(app, {
        hub,
        keys: ctx.keys,
        nonces,
        chainId: config.chainId,
        isSymbol: (s) => venue.engine().instrument(s) !== undefined,
        logger,
        limits: { pingMs: config.streamPingMs, idleMs: config.streamIdleMs },
        // Order entry over the stream: REST's order service and rate-limit counters (one budget per key).
        orders: perpOrderServiceOf(app),
        rateLimit: rateLimitOf(app),
        settled: venue.settled,
      });
      stops.add(() => endpoint.close());
    } else {
      logger.warn('perp-api: no stream publisher in this process and no REDIS_URL; /v4/public/ws is not served');
    }
    registerLoopbackCors(app); // the web console (docs/console.md) calls this API from the stock API's port
    const address = await app.listen({ host: config.host, port: config.perpApiPort });
    stops.add(() => app.close());
    ctx.endpoints.perp = { app, baseUrl: address };
  });
  return stop;
}
