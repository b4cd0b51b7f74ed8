/**
 * Replay protection: a nonce (or a perp signature) may be claimed once per key while its
 * timestamp is inside the window. In memory for one instance; in Redis when instances share load.
 */
import type { Redis } from 'ioredis';
import { StorageUnavailableError } from '../errors/app-error.ts';

export interface NonceStore {
  /**
   * True when the nonce was unused and is now taken for `ttlMs`; false on a replay. The in-memory
   * store answers synchronously (no promise on the hot path), Redis asynchronously.
   */
  claim(scope: string, nonce: string, ttlMs: number): boolean | Promise<boolean>;
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

export function createRedisNonceStore(redis: Redis, opts: { prefix?: string } = {}): NonceStore {
  const prefix = opts.prefix ?? 'nonce:';
  return {
    async claim(scope, nonce, ttlMs) {
      try {
        const res = await redis.set(prefix + scope + ':' + nonce, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
        return res === 'OK';
      } catch (cause) {
        throw new StorageUnavailableError({ cause });
      }
    },
    async close() {},
  };
}
