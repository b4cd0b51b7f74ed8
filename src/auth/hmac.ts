/**
 * Request signatures of both APIs, on node:crypto's HMAC-SHA256, in one place:
 * - stock (contract.md §A): lower-case hex of HMAC over `METHOD\nURI\nTS\nNONCE\nBODY`;
 * - perp (contract.md §B): Base64 of HMAC over `TS + METHOD + REQUEST_PATH + BODY`.
 *
 * What is signed is the contract's (packages/contract, shared with every client), so a separate test
 * recomputes each signature by hand: the two sides must not agree on a mistake unnoticed. The body is
 * hashed as the bytes received (a Uint8Array) or, for a client that holds text, as its UTF-8 bytes.
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import { perpSignPrefix, stockSignPrefix, type PerpSignInput as ContractPerpSignInput, type StockSignInput as ContractStockSignInput } from '@tokex/contract';

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

// The canonical query and the signed messages are the contract's (packages/contract): the clients
// sign over the same functions.
export { canonicalQuery, signedUri } from '@tokex/contract';

// ------------------------------------------------------------------ stock scheme (§A)

export interface StockSignInput extends ContractStockSignInput {
  body: SignedBody;
}

/** The five-line payload as bytes: METHOD, URI, TS, NONCE and the body, joined by `\n`. */
export function stockSignPayload(input: StockSignInput): Buffer {
  return Buffer.concat([Buffer.from(stockSignPrefix(input), 'utf8'), bytesOf(input.body)]);
}

/** `x-api-sign`: lower-case hex HMAC-SHA256 of the payload under the API secret. */
export function signStock(key: HmacKey, input: StockSignInput): string {
  return hmacSha256(key, stockSignPrefix(input), input.body).toString('hex');
}

/** True when `given` is the request's signature in hex of either case; anything malformed is false. */
export function verifyStock(key: HmacKey, input: StockSignInput, given: string): boolean {
  return digestEquals(hmacSha256(key, stockSignPrefix(input), input.body), decodeHexDigest(given));
}

// ------------------------------------------------------------------ perp scheme (§B)

export interface PerpSignInput extends ContractPerpSignInput {
  body: SignedBody;
}

/** `ts + METHOD + request_path + body` as bytes. */
export function perpSignPayload(input: PerpSignInput): Buffer {
  return Buffer.concat([Buffer.from(perpSignPrefix(input), 'utf8'), bytesOf(input.body)]);
}

/** `X-Api-Sign`: Base64 of HMAC-SHA256 of the payload under the API secret. */
export function signPerp(key: HmacKey, input: PerpSignInput): string {
  return hmacSha256(key, perpSignPrefix(input), input.body).toString('base64');
}

/** True when `given` is the request's signature in canonical padded Base64; anything else is false. */
export function verifyPerp(key: HmacKey, input: PerpSignInput, given: string): boolean {
  return digestEquals(hmacSha256(key, perpSignPrefix(input), input.body), decodeBase64Digest(given));
}
