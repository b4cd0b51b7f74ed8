/**
 * Request rate limits over @fastify/rate-limit: a fixed window per bucket (an API key, or a client
 * address for public routes and failed authentication) that opens with the bucket's first request.
 * The plugin's local store serves one instance; its Redis store makes the limit hold for the bucket
 * whichever instance answers.
 *
 * The plugin is registered with `global: false` and used through its `createRateLimit()` checker,
 * called by an API's own auth hook: a request counts against its key only once the key is
 * authenticated, so nobody can spend another key's budget with bad signatures. A request the HTTP
 * layer refuses before that hook runs (a body over the limit, a URL that does not decode, malformed
 * HTTP, ...) is counted by createHttpServer against its client's address, through the checker an app
 * registered here ({@link rateLimitOf}): it names no key that anything has vouched for.
 *
 * A request may weigh more than one unit (the perp API's batches, docs/perp-api.md "Rate limits"):
 * the checker then takes `weight` units from the bucket, one store increment each, all sent at once
 * (with Redis, pipelined on the one connection: one round trip). The request passes when the last of
 * its units still fits, so a request of weight w passes exactly when w units were left. The stores
 * count only by one, and a weight is small (at most 11), so this keeps both stores as the plugin
 * writes them rather than a counter of our own beside them.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimitedError, StorageUnavailableError } from '../errors/app-error.ts';
import { recordRateLimited } from '../observability/metrics-registry.ts';

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

/**
 * Counts one request of `bucket`, `weight` units (default 1, a positive integer). `request` is the
 * request counted, when there is one (a connection Node refuses before any request exists, or a
 * WebSocket message, has none): the HTTP layer then knows it was counted.
 */
export type RateLimitCheck = (request: FastifyRequest | undefined, bucket: string, weight?: number) => Promise<RateLimitState>;

/** Units one request may take: a bound on the store calls a request makes, far above any documented weight. */
export const MAX_REQUEST_WEIGHT = 100;

/**
 * What the plugin's checker is given instead of the request: it reads only the bucket (through the
 * key generator) and the route's options, which a request refused before routing does not have.
 */
interface Counted {
  bucket: string;
  routeOptions: { config: Record<string, never> };
}

const NO_ROUTE = Object.freeze({ config: Object.freeze({}) as Record<string, never> });
const counted = new WeakSet<FastifyRequest>();
const checks = new WeakMap<FastifyInstance, RateLimitCheck>();

/** The bucket of a request that no key vouches for: its client's address. */
export function addressBucket(ip: string | undefined): string {
  return `ip:${ip ?? 'unknown'}`;
}

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
    keyGenerator: (carrier) => (carrier as unknown as Counted).bucket,
  });
  const check = app.createRateLimit();
  const counter: RateLimitCheck = async (request, bucket, weight = 1) => {
    if (!Number.isSafeInteger(weight) || weight < 1 || weight > MAX_REQUEST_WEIGHT) throw new Error(`rate limit: weight must be an integer from 1 to ${MAX_REQUEST_WEIGHT}`);
    // Marked before the store answers: a request whose count failed is not counted a second time.
    if (request) counted.add(request);
    const carrier: Counted = { bucket, routeOptions: NO_ROUTE };
    let units: Array<Awaited<ReturnType<typeof check>>>;
    try {
      units = await Promise.all(Array.from({ length: weight }, () => check(carrier as unknown as FastifyRequest)));
    } catch (cause) {
      throw new StorageUnavailableError({ cause });
    }
    // The unit counted last (the fewest remaining): other requests' units may have come between ours.
    let r = units[0];
    for (const u of units) if (!u.isAllowed && !r.isAllowed && u.remaining <= r.remaining) r = u;
    if (r.isAllowed) return { limit: settings.limit, remaining: settings.limit, resetMs: 0, limited: false };
    // Past the limit when the last unit did not fit (the store's count passed the limit).
    const limited = units.some((u) => !u.isAllowed && u.isExceeded);
    if (limited) recordRateLimited(app, bucket);
    return { limit: r.max, remaining: r.remaining, resetMs: r.ttl, limited };
  };
  checks.set(app, counter);
  return counter;
}

/** The checker registered on `app`, if the API has a rate limit. */
export function rateLimitOf(app: FastifyInstance): RateLimitCheck | undefined {
  return checks.get(app);
}

/** Whether `request` has been counted (or its count attempted) already. */
export function rateLimitCounted(request: FastifyRequest): boolean {
  return counted.has(request);
}

/** The refusal of a request over the limit: 429 with Retry-After (at least 1 s). */
export function rateLimitedError(state: RateLimitState): RateLimitedError {
  return new RateLimitedError(Math.max(1, Math.ceil(state.resetMs / 1000)));
}

/** The answer headers of a state: limit, requests left, and seconds until the window resets. */
export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': String(Math.ceil(s.resetMs / 1000)),
  };
}
