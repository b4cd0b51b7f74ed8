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
 * A set of 64-bit fingerprints in one Uint32Array (open addressing, linear probing). At 10k
 * requests/s a 45 s window holds ~450k nonces; as JS strings in a Set they cost ~3 µs a claim in
 * rehashing and garbage collection, as fingerprints ~0.3 µs and no per-entry objects. Two different
 * nonces share a fingerprint with probability ~N/2^64 (5e-14 at a million entries): the cost of a
 * collision is one spurious "replay" answer, which the client retries with a fresh nonce.
 */
class FingerprintSet {
  private table = new Uint32Array(2 * 1024);
  private mask = 1023;
  private size = 0;

  has(h1: number, h2: number): boolean {
    const t = this.table;
    for (let i = h1 & this.mask; ; i = (i + 1) & this.mask) {
      const a = t[2 * i];
      const b = t[2 * i + 1];
      if (a === 0 && b === 0) return false;
      if (a === h1 && b === h2) return true;
    }
  }

  add(h1: number, h2: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    this.insert(this.table, this.mask, h1, h2);
    this.size++;
  }

  private insert(t: Uint32Array, mask: number, h1: number, h2: number): void {
    let i = h1 & mask;
    while (t[2 * i] !== 0 || t[2 * i + 1] !== 0) i = (i + 1) & mask;
    t[2 * i] = h1;
    t[2 * i + 1] = h2;
  }

  private grow(): void {
    const old = this.table;
    const mask = this.mask * 2 + 1;
    const t = new Uint32Array(2 * (mask + 1));
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0 || old[i + 1] !== 0) this.insert(t, mask, old[i], old[i + 1]);
    this.table = t;
    this.mask = mask;
  }
}

/** Two independent 32-bit hashes (FNV-1a and a murmur-style mix) of scope and nonce; never both 0. */
function fingerprint(scope: string, nonce: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  const mix = (c: number) => {
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  };
  for (let i = 0; i < scope.length; i++) mix(scope.charCodeAt(i));
  mix(0);
  for (let i = 0; i < nonce.length; i++) mix(nonce.charCodeAt(i));
  h1 >>>= 0;
  h2 = (Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35) ^ h1) >>> 0;
  return h1 === 0 && h2 === 0 ? [0, 1] : [h1, h2];
}

/**
 * In-memory store with time buckets: a nonce goes into the bucket of its expiry and whole buckets
 * are dropped once expired, so expiry costs nothing per entry. An entry may be kept up to one
 * bucket longer than asked, never shorter.
 */
export function createMemoryNonceStore(opts: { now?: () => number; bucketMs?: number } = {}): NonceStore {
  const now = opts.now ?? Date.now;
  const bucketMs = opts.bucketMs ?? 5_000;
  const buckets = new Map<number, FingerprintSet>();
  return {
    claim(scope, nonce, ttlMs) {
      const t = now();
      const [h1, h2] = fingerprint(scope, nonce);
      for (const [idx, set] of buckets) {
        if ((idx + 1) * bucketMs <= t) {
          buckets.delete(idx);
          continue;
        }
        if (set.has(h1, h2)) return false;
      }
      const idx = Math.floor((t + ttlMs) / bucketMs);
      let set = buckets.get(idx);
      if (!set) buckets.set(idx, (set = new FingerprintSet()));
      set.add(h1, h2);
      return true;
    },
    async close() {
      buckets.clear();
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
