/**
 * Which broker carries a venue's streams (docs/streams.md): Redis Streams under
 * `STREAM_PREFIX:<venue>` when REDIS_URL is set, so that API instances in other processes serve the
 * same streams with the same seqs; otherwise the process's own, in memory.
 */
import { openRedis } from '../storage/redis-client.ts';
import type { Logger } from '../lib/logger.ts';
import { createMemoryStreamBroker, type StreamBroker } from '../streams/stream-broker.ts';
import { createRedisStreamBroker } from '../streams/redis-stream-broker.ts';
import type { StackContext } from './stack-context.ts';
import type { StopList } from './stop-list.ts';

export async function streamBrokerFor(
  ctx: StackContext,
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
    prefix: `${config.streamPrefix}:${venue}`,
    retained: config.streamRetained,
    onLost,
    onError: (err) => (logger as Pick<Logger, 'warn'>).warn({ err: (err as Error).message, venue }, 'streams: Redis read failed; retrying'),
  });
  stops.add(() => broker.close());
  return broker;
}
