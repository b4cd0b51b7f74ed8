/**
 * Request rate limits over @fastify/rate-limit: a fixed window per bucket (an API key, or a client
 * address for public routes and failed authentication) that opens with the bucket's first request.
 * The plugin's local store serves one instance; its Redis store makes the limit hold for the bucket
 * whichever instance answers.
 *
 * The plugin is registered with `global: false` and used through its `createRateLimit()` checker,
 * called by an API's own auth hook: a request counts against its key only once the key is
 * authenticated, so nobody can spend another key's budget with bad signatures.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

export interface RateLimitSettings {
  /** Requests per window and bucket. */
  limit: number;
  /** Default 60 s. */
  windowMs?: number;
  /** Shared counters for every instance; the plugin's local store otherwise. */
  redis?: Redis;
  /** Key prefix in Redis (the plugin's `nameSpace`). */
  prefix?: string;
}

/** Counts one request of `bucket`. */
export type RateLimitCheck = (request: FastifyRequest, bucket: string) => Promise<RateLimitState>;

const buckets = new WeakMap<FastifyRequest, string>();

/** Registers the plugin on `app` (no route limited by itself) and answers the checker. */
export async function registerRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<RateLimitCheck> {
  if (!Number.isSafeInteger(settings.limit) || settings.limit <= 0) throw new Error('rate limit: limit must be a positive integer');
  await app.register(rateLimit, {
    global: false,
    max: settings.limit,
    timeWindow: settings.windowMs ?? 60_000,
    ...(settings.redis ? { redis: settings.redis, nameSpace: settings.prefix ?? 'ratelimit:' } : {}),
    // Refused rather than waved through when Redis is away: the answer is a 503 the client retries.
    skipOnError: false,
    keyGenerator: (request) => buckets.get(request) ?? `ip:${request.ip}`,
  });
  const check = app.createRateLimit();
  return async (request, bucket) => {
    buckets.set(request, bucket);
    let r: Awaited<ReturnType<typeof check>>;
    try {
      r = await check(request);
    } catch (cause) {
      throw new StorageUnavailableError({ cause });
    }
    if (r.isAllowed) return { limit: settings.limit, remaining: settings.limit, resetMs: 0, limited: false };
    return { limit: r.max, remaining: r.remaining, resetMs: r.ttl, limited: r.isExceeded };
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
