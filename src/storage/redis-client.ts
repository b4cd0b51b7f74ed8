/**
 * The one way the stack opens a Redis connection. ioredis reconnects by itself, but a client without
 * an `error` listener prints every failed attempt to stderr as "Unhandled error event", bypassing
 * the logger, several times a second while Redis is away. Here each client reports an outage once
 * (a warn when it starts, an info when the connection is back), through the process's logger.
 */
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from '../lib/logger.ts';

/** ioredis, loaded at the first connection: a stack without REDIS_URL does not load it. */
const requireIoredis = (): typeof import('ioredis') => createRequire(import.meta.url)('ioredis') as typeof import('ioredis');

export function openRedis(url: string, options: RedisOptions, logger: Logger, purpose: string): Redis {
  const redis = new (requireIoredis().Redis)(url, options);
  let down = false;
  redis.on('error', (err: Error & { code?: string }) => {
    if (down) return;
    down = true;
    // The code and message of a connection error name the address, never a password (ioredis
    // keeps the URL's credentials out of its errors).
    logger.warn({ purpose, code: err.code, err: err.message }, 'redis: unavailable; requests that need it are refused until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ purpose }, 'redis: connection back');
  });
  return redis;
}

/**
 * A second connection with `redis`'s options (a blocking reader, a writer of its own). Its errors
 * go to `redis`'s listeners, so the outage is reported once, by the client that owns it, instead of
 * ioredis printing each failed attempt of the copy, which has no listener of its own.
 */
export function duplicateRedis(redis: Redis): Redis {
  const copy = redis.duplicate();
  copy.on('error', (err: Error) => {
    if (redis.listenerCount('error') > 0) redis.emit('error', err);
  });
  return copy;
}
