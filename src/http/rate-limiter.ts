/**
 * Request rate limits: a fixed window per bucket (an API key, or a client address for public
 * routes) that opens with the bucket's first request and lasts `windowMs`. In memory for one
 * instance; in Redis (one INCR + PEXPIRE script per request) when instances share the load, so the
 * limit holds for the bucket whichever instance answers.
 *
 * A fixed window rather than a sliding one: one counter per bucket, one round trip to Redis, and
 * the worst case (a burst at the end of one window and another at the start of the next) stays
 * within twice the limit, which the documentation says.
 *
 * Written here rather than taken from @fastify/rate-limit: the perp API counts a request only once
 * its key is authenticated (so nobody can spend another key's budget with bad signatures), which
 * means running inside the API's own auth hook, not as a separate onRequest plugin.
 */
import type { Redis } from 'ioredis';
import { StorageUnavailableError } from '../errors/app-error.ts';

export interface RateLimitState {
  /** The window's limit. */
  limit: number;
  /** Requests left in the current window after this one (0 when this one was refused too). */
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
  /** Whether this request is over the limit. */
  limited: boolean;
}

export interface RateLimiter {
  readonly limit: number;
  readonly windowMs: number;
  /** Counts one request of `bucket`. The memory store answers synchronously, Redis asynchronously. */
  hit(bucket: string): RateLimitState | Promise<RateLimitState>;
  close(): Promise<void>;
}

function stateOf(limit: number, count: number, resetMs: number): RateLimitState {
  return { limit, remaining: Math.max(0, limit - count), resetMs: Math.max(0, resetMs), limited: count > limit };
}

function checkSettings(limit: number, windowMs: number): void {
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new Error('rate limit: limit must be a positive integer');
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) throw new Error('rate limit: windowMs must be a positive integer');
}

/**
 * One instance's counters. Windows open in time order and all last `windowMs`, so a Map in
 * insertion order holds them oldest first and the sweep stops at the first live one.
 */
export function createMemoryRateLimiter(opts: { limit: number; windowMs?: number; now?: () => number; maxBuckets?: number }): RateLimiter {
  const windowMs = opts.windowMs ?? 60_000;
  checkSettings(opts.limit, windowMs);
  const now = opts.now ?? Date.now;
  const maxBuckets = opts.maxBuckets ?? 1_000_000;
  const windows = new Map<string, { count: number; resetAt: number }>();

  function sweep(t: number): void {
    for (const [k, w] of windows) {
      if (w.resetAt > t) break;
      windows.delete(k);
    }
  }
  const timer = setInterval(() => sweep(now()), Math.min(windowMs, 10_000));
  timer.unref();

  return {
    limit: opts.limit,
    windowMs,
    hit(bucket) {
      const t = now();
      let w = windows.get(bucket);
      if (w !== undefined && w.resetAt <= t) {
        windows.delete(bucket);
        w = undefined;
      }
      if (w === undefined) {
        // A flood of distinct buckets: forget the oldest windows rather than grow without bound.
        if (windows.size >= maxBuckets) sweep(t);
        if (windows.size >= maxBuckets) windows.delete(windows.keys().next().value as string);
        w = { count: 0, resetAt: t + windowMs };
        windows.set(bucket, w);
      }
      w.count++;
      return stateOf(opts.limit, w.count, w.resetAt - t);
    },
    async close() {
      clearInterval(timer);
      windows.clear();
    },
  };
}

/** INCR, and on the window's first request PEXPIRE; answers the count and the time left. */
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

export function createRedisRateLimiter(redis: Redis, opts: { limit: number; windowMs?: number; prefix?: string }): RateLimiter {
  const windowMs = opts.windowMs ?? 60_000;
  checkSettings(opts.limit, windowMs);
  const prefix = opts.prefix ?? 'ratelimit:';
  return {
    limit: opts.limit,
    windowMs,
    async hit(bucket) {
      let res: [number, number];
      try {
        res = (await redis.eval(HIT_SCRIPT, 1, prefix + bucket, String(windowMs))) as [number, number];
      } catch (cause) {
        throw new StorageUnavailableError({ cause });
      }
      return stateOf(opts.limit, Number(res[0]), Number(res[1]));
    },
    async close() {},
  };
}

/** The answer headers of a state: limit, requests left, and seconds until the window resets. */
export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': String(Math.ceil(s.resetMs / 1000)),
  };
}
