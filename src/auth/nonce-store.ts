/**
 * Replay protection: a nonce (or a perp signature) may be claimed once per key while its
 * timestamp is inside the window. In memory for one instance; in Redis when instances share load.
 *
 * Redis away: a claim that cannot reach Redis throws StorageUnavailableError (the APIs answer their
 * retryable 503), never "unused": a request is never let through unchecked. Redis back without its
 * data (a restart without persistence, a failover to an empty replica, a flush): the nonces claimed
 * before are gone, so a request captured then could be replayed while its timestamp is still inside
 * the window. The Redis store keeps a fence for that: the time (by the server's clock) its marker key
 * was (re)created, which only happens on first use or after such a loss, and it refuses, as a
 * possible replay, a claim whose request was signed before the fence. Requests signed after it are unaffected; a client
 * caught by it signs again. docs/reliability.md.
 */
import type { Redis } from 'ioredis';
import { StorageUnavailableError } from '../errors/app-error.ts';

export interface NonceStore {
  /**
   * True when the nonce was unused and is now taken for `ttlMs`; false on a replay. The in-memory
   * store answers synchronously (no promise on the hot path), Redis asynchronously.
   */
  claim(scope: string, nonce: string, ttlMs: number, issuedAtMs?: number): boolean | Promise<boolean>;
  close(): Promise<void>;
}

/**
 * In-memory store for a single instance: `${scope}:${nonce}` to its expiry in a Map. A Map iterates
 * in insertion order and nonces are claimed in time order with nearly equal lifetimes, so the sweep
 * (every `sweepMs`) removes expired entries from the front and stops at the first live one: its cost
 * is the entries it removes, not the whole table (a full scan of a million entries every few seconds
 * cost about a microsecond a claim and stalled requests). An entry living longer than those behind
 * it (a timestamp from the future) holds them until it expires; they are still refused as expired
 * by a claim, which takes them again at the back. Past `maxEntries` live nonces a claim is refused,
 * as a replay would be: the client retries with a fresh nonce, and memory stays bounded whatever a
 * flood of distinct nonces does.
 */
export function createMemoryNonceStore(opts: { now?: () => number; sweepMs?: number; maxEntries?: number } = {}): NonceStore {
  const now = opts.now ?? Date.now;
  const sweepMs = opts.sweepMs ?? 5_000;
  const maxEntries = opts.maxEntries ?? 2_000_000;
  const expiries = new Map<string, number>();
  let nextSweep = now() + sweepMs;

  function sweep(t: number): void {
    for (const [k, expiresAt] of expiries) {
      if (expiresAt > t) break;
      expiries.delete(k);
    }
    nextSweep = t + sweepMs;
  }

  // A timer sweeps an idle instance too; unref'd so it never keeps the process alive.
  const timer = setInterval(() => sweep(now()), sweepMs);
  timer.unref();

  return {
    claim(scope, nonce, ttlMs) {
      const t = now();
      // Also swept from here: tests (and a stalled timer) drive time through `now`.
      if (t >= nextSweep) sweep(t);
      const k = `${scope}:${nonce}`;
      const expiresAt = expiries.get(k);
      if (expiresAt !== undefined) {
        if (expiresAt > t) return false;
        // Expired but not yet swept: taken again, at the back of the order.
        expiries.delete(k);
      } else if (expiries.size >= maxEntries) {
        sweep(t);
        if (expiries.size >= maxEntries) return false;
      }
      expiries.set(k, t + Math.max(1, ttlMs));
      return true;
    },
    async close() {
      clearInterval(timer);
      expiries.clear();
    },
  };
}

/**
 * One round trip: read the fence (creating it at ARGV[1], the server's clock, when missing: first
 * use or lost data), refuse a request signed before it, else claim the nonce. Returns 1 claimed,
 * 0 replay, -1 signed before the fence. The server's clock, not Redis's: it is the clock the
 * request timestamps are checked against.
 */
const FENCE_LUA = `
local fence = redis.call('GET', KEYS[1])
if not fence then
  fence = ARGV[1]
  redis.call('SET', KEYS[1], fence)
end
`;
const CLAIM_SCRIPT = FENCE_LUA + `
local issued = tonumber(ARGV[3])
if issued >= 0 and issued < tonumber(fence) then return -1 end
if redis.call('SET', KEYS[2], '1', 'PX', ARGV[2], 'NX') then return 1 end
return 0
`;

/** The Redis key of a nonce store's fence (the time its data starts). */
export function nonceFenceKey(prefix = 'nonce:'): string {
  return `${prefix}__fence__`;
}

/** The scripts as commands of a connection (`defineCommand`): sent by their SHA1 (EVALSHA), the source only when Redis lacks it. */
interface NonceCommands {
  tokexNonceFence(fenceKey: string, now: number): Promise<unknown>;
  tokexNonceClaim(fenceKey: string, nonceKey: string, now: number, ttlMs: number, issuedAtMs: number): Promise<unknown>;
}

export function createRedisNonceStore(redis: Redis, opts: { prefix?: string; now?: () => number } = {}): NonceStore {
  const prefix = opts.prefix ?? 'nonce:';
  const now = opts.now ?? Date.now;
  const fenceKey = nonceFenceKey(prefix);
  // EVAL sent the script's source (about 300 bytes) with every signed request, and Redis hashed it
  // each time to find its compiled copy; EVALSHA sends 40 (ioredis falls back to EVAL on NOSCRIPT,
  // e.g. after a Redis restart). Defining the same command again on a shared connection is harmless.
  redis.defineCommand('tokexNonceFence', { numberOfKeys: 1, lua: FENCE_LUA });
  redis.defineCommand('tokexNonceClaim', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
  const commands = redis as unknown as NonceCommands;
  // The fence of a Redis seen for the first time is set as the store starts, not at its first
  // claim: otherwise the first request of a new deployment, signed a moment before, would be
  // refused. A failure here is harmless: the claim script sets a missing fence itself.
  const ready = commands.tokexNonceFence(fenceKey, Math.floor(now())).then(
    () => undefined,
    () => undefined,
  );
  return {
    async claim(scope, nonce, ttlMs, issuedAtMs) {
      await ready;
      let res: unknown;
      try {
        res = await commands.tokexNonceClaim(fenceKey, prefix + scope + ':' + nonce, Math.floor(now()), Math.max(1, Math.ceil(ttlMs)), issuedAtMs === undefined ? -1 : Math.floor(issuedAtMs));
      } catch (cause) {
        throw new StorageUnavailableError({ cause });
      }
      return res === 1;
    },
    async close() {},
  };
}
