/**
 * The stock API's request signature (contract.md §A Authentication), shared by the server's check
 * and the SDK's signer so that both build the five-line payload from one definition. A separate
 * test recomputes it by hand so the two cannot agree on a mistake unnoticed.
 */
import { createHmac, hash } from 'node:crypto';

/** Query parameters sorted by name (stable for repeated names), encoded as URLSearchParams encodes them. */
export function canonicalQuery(query: string | URLSearchParams | Record<string, string | number | undefined>): string {
  let params: URLSearchParams;
  if (query instanceof URLSearchParams) params = query;
  else if (typeof query === 'string') params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  else {
    params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, String(v));
  }
  const entries = [...params.entries()];
  // Array.prototype.sort is stable, so repeated names keep their order.
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return new URLSearchParams(entries).toString();
}

/** `/api/v1/...` plus `?sorted-query` when there is a query. */
export function signedUri(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}

export interface StockSignInput {
  method: string;
  /** Already canonical: path from /api/v1/ plus the sorted query. */
  uri: string;
  ts: string;
  nonce: string;
  body: string;
}

export function stockSignPayload(input: StockSignInput): string {
  return [input.method.toUpperCase(), input.uri, input.ts, input.nonce, input.body].join('\n');
}

/** Lower-case hex HMAC-SHA256 of the payload under the API secret. */
export function hmacHex(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

const BLOCK = 64;
/** Shared scratch for `pad || message`: the hash below is synchronous, so one buffer serves every call. */
let scratch = Buffer.alloc(BLOCK + 4096);

/**
 * HMAC-SHA256 under one secret (RFC 2104) with the key's padded blocks prepared once, computed as two
 * one-shot hashes. On the request path this costs a fraction of `createHmac`, which builds a native
 * Hmac object (and the garbage collector later finalises it) for every request.
 */
export class HmacSha256 {
  readonly #ipad: Buffer;
  readonly #opad: Buffer;

  constructor(secret: string) {
    let key = Buffer.from(secret, 'utf8');
    if (key.length > BLOCK) key = hash('sha256', key, 'buffer');
    this.#ipad = Buffer.alloc(BLOCK, 0x36);
    this.#opad = Buffer.alloc(BLOCK + 32, 0x5c);
    for (let i = 0; i < key.length; i++) {
      this.#ipad[i] ^= key[i];
      this.#opad[i] ^= key[i];
    }
  }

  /** Lower-case hex digest of `message` (UTF-8). */
  hex(message: string): string {
    const need = BLOCK + Buffer.byteLength(message, 'utf8');
    if (scratch.length < need) scratch = Buffer.alloc(Math.max(need, scratch.length * 2));
    this.#ipad.copy(scratch, 0);
    scratch.write(message, BLOCK, 'utf8');
    // The inner digest comes back as a 'binary' (latin1) string, one char per byte: a Buffer
    // result costs a new ArrayBuffer per call, which made it several times slower than the hash.
    const inner = hash('sha256', scratch.subarray(0, need), 'binary');
    // The outer block is per key and the call synchronous: its tail can hold the inner digest.
    this.#opad.write(inner, BLOCK, 'binary');
    return hash('sha256', this.#opad, 'hex');
  }
}

/**
 * Whether `given` is `expected` (a lower-case hex digest) written in hex of either case, in time
 * independent of where they differ. Anything but 0-9, a-f, A-F in `given` is a mismatch.
 */
export function hexSignatureEquals(expected: string, given: string): boolean {
  if (given.length !== expected.length) return false;
  let diff = 0;
  let invalid = 0;
  for (let i = 0; i < expected.length; i++) {
    const c = given.charCodeAt(i);
    // Digits already have the 0x20 bit set, so `lower` is the digit itself or the lower-case letter.
    const lower = c | 0x20;
    invalid |= (c >= 0x30 && c <= 0x39) || (lower >= 0x61 && lower <= 0x66) ? 0 : 1;
    diff |= expected.charCodeAt(i) ^ lower;
  }
  return (diff | invalid) === 0;
}
