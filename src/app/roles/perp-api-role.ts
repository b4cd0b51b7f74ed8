/**
 * Role `perp-api`: the signed perpetual HTTP API on HOST:PERP_API_PORT; stateless, so many may run
 * at once. With REDIS_URL the replay store and the rate-limit counters are shared by every instance
 * (one connection for both); otherwise they live in this process.
 */
import { Redis } from 'ioredis';
import type { Address } from 'viem';
import { perpDeploymentOf } from '../../chain/deploy-perp-venue.ts';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../../auth/nonce-store.ts';
import type { RateLimitSettings } from '../../http/rate-limiter.ts';
import { buildPerpApi } from '../../perp/perp-api.ts';
import { DEFAULT_INSTRUMENTS, withFundingInterval } from '../../perp/engine/instruments.ts';
import type { StackContext } from '../stack-context.ts';
import { startGuarded } from '../stop-list.ts';

/** The margin vault of the deployment, once the perp venue is deployed with the stack. */
export function marginVaultOf(ctx: StackContext): Address | undefined {
  return perpDeploymentOf(ctx.chain.record)?.contracts.marginVault;
}

export async function startPerpApiRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, logger, db } = ctx;
  const marginVault = marginVaultOf(ctx);
  if (!ctx.perpVenue) logger.warn('perp-api: no perp engine in this process; trading, account and book endpoints answer 50002');
  if (!marginVault) logger.warn('no margin vault in the deployment: API-key typed data use the zero address as verifying contract');
  const { stop } = await startGuarded(logger, async (stops) => {
    let nonces: NonceStore;
    let rateLimit: RateLimitSettings = { limit: config.perpRateLimitPerMin };
    if (config.redisUrl) {
      const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
      await redis.connect();
      stops.add(async () => void redis.disconnect());
      nonces = createRedisNonceStore(redis, { prefix: 'perp:nonce:' });
      rateLimit = { ...rateLimit, redis, prefix: 'perp:ratelimit:' };
    } else {
      const memoryNonces = createMemoryNonceStore();
      stops.add(() => memoryNonces.close());
      nonces = memoryNonces;
    }
    const app = await buildPerpApi({
      chainId: config.chainId,
      db,
      keys: ctx.keys,
      nonces,
      rateLimit,
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      trustedProxies: config.trustedProxies,
      marginVault,
      venue: ctx.perpVenue,
      instruments: withFundingInterval(DEFAULT_INSTRUMENTS, config.perp.fundingIntervalMs),
      fundingIntervalMs: config.perp.fundingIntervalMs,
    });
    const address = await app.listen({ host: config.host, port: config.perpApiPort });
    stops.add(() => app.close());
    ctx.endpoints.perp = { app, baseUrl: address };
  });
  return stop;
}
