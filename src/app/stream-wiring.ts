/**
 * Which broker carries a venue's streams (docs/streams.md): Redis Streams under
 * `STREAM_PREFIX:<venue>` when REDIS_URL is set, so that API instances in other processes serve the
 * same streams with the same seqs; otherwise the process's own, in memory. The stock venue of a chain
 * after the first has its own publisher, hence its own broker: `STREAM_PREFIX:stock:<chainId>`
 * (docs/streams.md "Several chains"); the first chain's stays where a single-chain deployment's is.
 */
import { openRedis } from '../storage/redis-client.ts';
import type { Logger } from '../lib/logger.ts';
import { createMemoryStreamBroker, type StreamBroker } from '../streams/stream-broker.ts';
import { createRedisStreamBroker } from '../streams/redis-stream-broker.ts';
import type { AppConfig } from '../config/app-config.ts';
import type { StopList } from './stop-list.ts';

/**
 * What the brokers need of the stack, a structural part of StackContext: named here so that
 * stack-context.ts, which makes the shared brokers, is not imported back.
 */
export interface StreamWiringContext {
  config: AppConfig;
  logger: Logger;
  /** Whether this context's chain is the first (its streams keep the single-chain prefix). */
  firstChain: boolean;
}

/** A venue's broker shared by the roles of a process, with who hears it lose a batch. */
export interface SharedStreamBroker {
  broker: StreamBroker;
  /** `listener` hears the broker losing a batch (the Redis broker's `onLost`) until the call it answers. */
  onLost(listener: (err: unknown) => void): () => void;
}

/**
 * The process's broker of `venue`, for the stack's life (StackContext.streamBroker): stopped with
 * `stops`, the stack's, not a role's.
 */
export async function createSharedStreamBroker(ctx: StreamWiringContext, venue: 'perp' | 'stock', stops: StopList): Promise<SharedStreamBroker> {
  const listeners = new Set<(err: unknown) => void>();
  const broker = await streamBrokerFor(ctx, venue, stops, (err) => {
    for (const l of listeners) l(err);
  });
  return {
    broker,
    onLost(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

export async function streamBrokerFor(
  ctx: StreamWiringContext,
  venue: 'perp' | 'stock',
  stops: StopList,
  onLost?: (err: unknown) => void,
): Promise<StreamBroker> {
  const { config, logger } = ctx;
  if (!config.redisUrl) return createMemoryStreamBroker({ retained: config.streamRetained });
  const redis = openRedis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true }, logger, `${venue} streams`);
  await redis.connect();
  stops.add(async () => void redis.disconnect());
  const broker = createRedisStreamBroker({
    redis,
    prefix: streamPrefixOf(ctx, venue),
    retained: config.streamRetained,
    onLost,
    onError: (err) => (logger as Pick<Logger, 'warn'>).warn({ err: (err as Error).message, venue }, 'streams: Redis read failed; retrying'),
  });
  stops.add(() => broker.close());
  return broker;
}

/** The Redis prefix of a venue's streams on this context's chain. */
export function streamPrefixOf(ctx: Pick<StreamWiringContext, 'config' | 'firstChain'>, venue: 'perp' | 'stock'): string {
  const base = `${ctx.config.streamPrefix}:${venue}`;
  return ctx.firstChain ? base : `${base}:${ctx.config.chainId}`;
}
