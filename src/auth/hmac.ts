/**
 * Request signatures of both APIs, on node:crypto's HMAC-SHA256, in one place:
 * - stock (contract.md §A): lower-case hex of HMAC over `METHOD\nURI\nTS\nNONCE\nBODY`;
 * - perp (contract.md §B): Base64 of HMAC over `TS + METHOD + REQUEST_PATH + BODY`.
 *
 * The payload builders are shared by the servers' checks and the SDK signers, so a separate test
 * recomputes each signature by hand: the two sides must not agree on a mistake unnoticed. The body is
 * hashed as the bytes received (a Uint8Array) or, for a client that holds text, as its UTF-8 bytes.
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** The raw request body: the bytes as received, or text that will be sent as UTF-8. */
export type SignedBody = string | Uint8Array;

/** An API secret as text (hashed as UTF-8) or as a prepared key object. */
export type HmacKey = string | KeyObject;

const SHA256_BYTES = 32;

function bytesOf(body: SignedBody): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/** HMAC-SHA256 over the concatenation of `parts` (text as UTF-8), without joining them first. */
export function hmacSha256(key: HmacKey, ...parts: SignedBody[]): Buffer {
  const mac = createHmac('sha256', key);
  for (const p of parts) mac.update(p);
  return mac.digest();
}

/**
 * Whether `given` (decoded by the caller; undefined when malformed) equals `expected`, in time that
 * does not depend on where they differ. A wrong length is a mismatch, never an exception.
 */
export function digestEquals(expected: Buffer, given: Buffer | undefined): boolean {
  return given !== undefined && given.length === expected.length && timingSafeEqual(expected, given);
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;
const BASE64_DIGEST = /^[A-Za-z0-9+/]{43}=$/;

/** The 32 bytes of a SHA-256 digest written in hex of either case; undefined for anything else. */
export function decodeHexDigest(text: string): Buffer | undefined {
  return HEX_DIGEST.test(text) ? Buffer.from(text, 'hex') : undefined;
}

/**
 * The 32 bytes of a SHA-256 digest in standard padded Base64; undefined for anything else (Node's
 * decoder would silently skip stray characters, so the text is checked first).
 */
export function decodeBase64Digest(text: string): Buffer | undefined {
  if (!BASE64_DIGEST.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // The last character carries 2 unused bits: only the canonical spelling is accepted.
  return bytes.length === SHA256_BYTES && bytes.toString('base64') === text ? bytes : undefined;
}

// ------------------------------------------------------------------ queries

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

/** `path` plus `?query` when there is a query. */
export function signedUri(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}

// ------------------------------------------------------------------ stock scheme (§A)

export interface StockSignInput {
  method: string;
  /** Already canonical: path from /api/v1/ plus the sorted query. */
  uri: string;
  ts: string;
  nonce: string;
  body: SignedBody;
}

/** The four header lines, each ended by `\n`; the body follows them as the fifth line. */
function stockHead(input: StockSignInput): string {
  return `${input.method.toUpperCase()}\n${input.uri}\n${input.ts}\n${input.nonce}\n`;
}

/** The five-line payload as bytes: METHOD, URI, TS, NONCE and the body, joined by `\n`. */
export function stockSignPayload(input: StockSignInput): Buffer {
  return Buffer.concat([Buffer.from(stockHead(input), 'utf8'), bytesOf(input.body)]);
}

/** `x-api-sign`: lower-case hex HMAC-SHA256 of the payload under the API secret. */
export function signStock(key: HmacKey, input: StockSignInput): string {
  return hmacSha256(key, stockHead(input), input.body).toString('hex');
}

/** True when `given` is the request's signature in hex of either case; anything malformed is false. */
export function verifyStock(key: HmacKey, input: StockSignInput, given: string): boolean {
  return digestEquals(hmacSha256(key, stockHead(input), input.body), decodeHexDigest(given));
}

// ------------------------------------------------------------------ perp scheme (§B)

export interface PerpSignInput {
  /** `X-Api-Ts` as sent (milliseconds). */
  ts: string;
  method: string;
  /** The path from `/v4/` plus `?` and the query sorted by name when there is one. */
  requestPath: string;
  body: SignedBody;
}

function perpHead(input: PerpSignInput): string {
  return input.ts + input.method.toUpperCase() + input.requestPath;
}

/** `ts + METHOD + request_path + body` as bytes. */
export function perpSignPayload(input: PerpSignInput): Buffer {
  return Buffer.concat([Buffer.from(perpHead(input), 'utf8'), bytesOf(input.body)]);
}

/** `X-Api-Sign`: Base64 of HMAC-SHA256 of the payload under the API secret. */
export function signPerp(key: HmacKey, input: PerpSignInput): string {
  return hmacSha256(key, perpHead(input), input.body).toString('base64');
}

/** True when `given` is the request's signature in canonical padded Base64; anything else is false. */
export function verifyPerp(key: HmacKey, input: PerpSignInput, given: string): boolean {
  return digestEquals(hmacSha256(key, perpHead(input), input.body), decodeBase64Digest(given));
}
