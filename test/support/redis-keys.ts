/**
 * Test hygiene for the machine's shared Redis: a stack or harness that made up its own key prefix
 * removes its keys when it stops. Stream logs expire after a week, but a nonce store's fence never
 * does (src/auth/nonce-store.ts), and each CI run left hundreds of keys behind.
 */
import { Redis } from 'ioredis';

/** Removes every key that starts with `prefix` (SCAN, then UNLINK in batches). */
export async function dropRedisKeys(redisUrl: string, prefix: string): Promise<number> {
  if (prefix.length === 0 || /[*?[\]]/.test(prefix)) throw new Error(`dropRedisKeys: refusing the prefix "${prefix}"`);
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  // The failure is the call's rejection; without a listener ioredis would also print it.
  redis.on('error', () => undefined);
  let dropped = 0;
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) dropped += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return dropped;
}
