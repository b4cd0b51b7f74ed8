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
 * Fingerprints with their expiry in one open-addressing table (linear probing): a claim is one probe
 * sequence, whatever the window. At 10k requests/s a 45 s window holds ~450k nonces; as JS strings
 * in a Set they cost several µs a claim in rehashing and garbage collection, here well under one,
 * with no per-entry objects. Expired entries are reused in place and dropped when the table is
 * rebuilt. Two different nonces share a 64-bit fingerprint with probability ~N/2^64 (5e-14 at a
 * million entries): the cost of a collision is one spurious "replay" answer, which the client
 * retries with a fresh nonce.
 *
 * A slot is 16 bytes, two 32-bit fingerprint words and a 64-bit expiry in ms (one buffer seen as a
 * Uint32Array and a Float64Array), so that a probe reads one cache line: at a million live nonces
 * the table is tens of megabytes and every claim misses the cache, and with fingerprints and
 * expiries in separate arrays it missed twice. Expiry 0 marks a slot never used.
 */
class ExpiringFingerprints {
  /** Slot i: words[4i], words[4i + 1] the fingerprint; expiry[2i + 1] its expiry. */
  private words = new Uint32Array(4 * 1024);
  private expiry = new Float64Array(this.words.buffer);
  private mask = 1023;
  /** Slots in use, live or expired. */
  private used = 0;

  /** True and remembered until `expiresAt` unless a live entry has the same fingerprint. */
  claim(h1: number, h2: number, now: number, expiresAt: number): boolean {
    const words = this.words;
    const expiry = this.expiry;
    let reuse = -1;
    let i = h1 & this.mask;
    for (; ; i = (i + 1) & this.mask) {
      const e = expiry[2 * i + 1];
      if (e === 0) break;
      if (words[4 * i] === h1 && words[4 * i + 1] === h2) {
        if (e > now) return false;
        reuse = i;
        break;
      }
      if (reuse === -1 && e <= now) reuse = i;
    }
    if (reuse !== -1) {
      // The probe ended on an empty slot or an expired match, so no live twin exists: an expired
      // slot on the way (or the match itself) takes the entry without growing the table.
      words[4 * reuse] = h1;
      words[4 * reuse + 1] = h2;
      expiry[2 * reuse + 1] = expiresAt;
      return true;
    }
    words[4 * i] = h1;
    words[4 * i + 1] = h2;
    expiry[2 * i + 1] = expiresAt;
    if (++this.used * 2 > this.mask + 1) this.rebuild(now);
    return true;
  }

  /** Drops expired entries and resizes so that live entries fill at most a quarter of the table. */
  private rebuild(now: number): void {
    const oldWords = this.words;
    const oldExpiry = this.expiry;
    const oldSize = this.mask + 1;
    let live = 0;
    for (let j = 0; j < oldSize; j++) if (oldExpiry[2 * j + 1] > now) live++;
    let size = 1024;
    while (size < live * 4) size *= 2;
    const words = new Uint32Array(4 * size);
    const expiry = new Float64Array(words.buffer);
    const mask = size - 1;
    for (let j = 0; j < oldSize; j++) {
      const e = oldExpiry[2 * j + 1];
      if (e <= now) continue;
      let i = oldWords[4 * j] & mask;
      while (expiry[2 * i + 1] !== 0) i = (i + 1) & mask;
      words[4 * i] = oldWords[4 * j];
      words[4 * i + 1] = oldWords[4 * j + 1];
      expiry[2 * i + 1] = e;
    }
    this.words = words;
    this.expiry = expiry;
    this.mask = mask;
    this.used = live;
  }
}

let fp1 = 0;
let fp2 = 0;

/**
 * Two independent 32-bit hashes (FNV-1a and a murmur-style mix) of scope, a 0 separator and nonce,
 * left in fp1/fp2 (no array per call on the request path).
 */
function fingerprint(scope: string, nonce: string): void {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i <= scope.length + nonce.length; i++) {
    const c = i < scope.length ? scope.charCodeAt(i) : i === scope.length ? 0 : nonce.charCodeAt(i - scope.length - 1);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  fp1 = h1 >>> 0;
  fp2 = (Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35) ^ fp1) >>> 0;
}

/** In-memory store for a single instance. */
export function createMemoryNonceStore(opts: { now?: () => number } = {}): NonceStore {
  const now = opts.now ?? Date.now;
  let table = new ExpiringFingerprints();
  return {
    claim(scope, nonce, ttlMs) {
      const t = now();
      fingerprint(scope, nonce);
      return table.claim(fp1, fp2, t, t + Math.max(1, ttlMs));
    },
    async close() {
      table = new ExpiringFingerprints();
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
