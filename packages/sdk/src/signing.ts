/**
 * Client-side request signatures of both REST APIs, exactly as contract.md says:
 * - stock (§A): `x-api-sign` = lower-case hex HMAC-SHA256(secret, `METHOD\nURI\nTS\nNONCE\nBODY`), the
 *   URI from `/api/v1/` with the query sorted by name;
 * - perp (§B): `X-Api-Sign` = padded Base64 HMAC-SHA256(secret, `TS + METHOD + REQUEST_PATH + BODY`),
 *   the request path from `/v4/` with the query sorted by name.
 *
 * Synchronous, so that `sign()` answers a ready request, and browser-safe: HMAC (RFC 2104) is built
 * here on viem's SHA-256 (no `node:` import, nothing beyond the package's declared dependencies).
 * The stream client signs its `auth` frame with WebCrypto instead (stream-sign.ts).
 */
import {
  perpSignMessage,
  stockSignMessage,
  type PerpSignInput as ContractPerpSignInput,
  type StockSignInput as ContractStockSignInput,
} from '@tokex/contract';
import { sha256 } from 'viem';

// What is signed (the canonical query, the stock five lines, the perp message) is the contract's,
// the same functions the servers verify with.
export { canonicalQuery, signedUri, type Query } from '@tokex/contract';

const encoder = new TextEncoder();
const BLOCK = 64;

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** HMAC-SHA256 (RFC 2104) of `message` under `key`, text taken as UTF-8. */
export function hmacSha256(key: string | Uint8Array, message: string | Uint8Array): Uint8Array {
  let k = typeof key === 'string' ? encoder.encode(key) : key;
  if (k.length > BLOCK) k = sha256(k, 'bytes');
  const inner = new Uint8Array(BLOCK);
  const outer = new Uint8Array(BLOCK);
  for (let i = 0; i < BLOCK; i++) {
    const b = i < k.length ? k[i] : 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  const m = typeof message === 'string' ? encoder.encode(message) : message;
  return sha256(concat(outer, sha256(concat(inner, m), 'bytes')), 'bytes');
}

const HEX = '0123456789abcdef';
export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b >> 4] + HEX[b & 15];
  return out;
}

/** Standard padded Base64 (btoa is Latin-1 only and not everywhere typed the same). */
export function bytesToBase64(bytes: Uint8Array): string {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += A[n >> 18] + A[(n >> 12) & 63] + (i + 1 < bytes.length ? A[(n >> 6) & 63] : '=') + (i + 2 < bytes.length ? A[n & 63] : '=');
  }
  return out;
}

export interface StockSignInput extends ContractStockSignInput {
  /** The body exactly as sent, '' when there is none. */
  body: string;
}

/** The five-line stock payload (§A): METHOD, URI, TS, NONCE and BODY joined by "\n", no trailing newline. */
export const stockPayload = (input: StockSignInput): string => stockSignMessage(input);

/** `x-api-sign` of a stock request: lower-case hex. */
export function signStockRequest(secret: string, input: StockSignInput): string {
  return bytesToHex(hmacSha256(secret, stockSignMessage(input)));
}

export interface PerpSignInput extends ContractPerpSignInput {
  /** The body exactly as sent, '' when there is none. */
  body: string;
}

/** The perp payload (§B): `ts + METHOD + request_path + body`. */
export const perpPayload = (input: PerpSignInput): string => perpSignMessage(input);

/** `X-Api-Sign` of a perp request: padded standard Base64. */
export function signPerpRequest(secret: string, input: PerpSignInput): string {
  return bytesToBase64(hmacSha256(secret, perpSignMessage(input)));
}

/** A random v4 UUID (nonces, idempotency keys) from WebCrypto, present in Node 20 and browsers. */
export function randomId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof c?.randomUUID !== 'function') throw new Error('crypto.randomUUID is not available: Node 20+ or a browser in a secure context is required');
  return c.randomUUID();
}
