/**
 * The `auth` frame signatures of the streams (contract.md §C), on WebCrypto so that the SDK loads in a
 * browser as well as in Node 20 (no `node:` import). The secret is imported once into a
 * non-extractable CryptoKey; callers keep the signer, not the secret.
 */

/** The WebCrypto surface used here, declared locally so the SDK needs no DOM or Node typings. */
interface SubtleLike {
  importKey(format: 'raw', keyData: Uint8Array, algorithm: { name: 'HMAC'; hash: 'SHA-256' }, extractable: boolean, usages: string[]): Promise<unknown>;
  sign(algorithm: 'HMAC', key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
}
interface CryptoLike {
  subtle?: SubtleLike;
  getRandomValues<T extends Uint8Array>(array: T): T;
}

export const PERP_STREAM_PATH = '/v4/public/ws';
export const STOCK_STREAM_PATH = '/api/v1/ws';

function webCrypto(): CryptoLike & { subtle: SubtleLike } {
  const c = (globalThis as unknown as { crypto?: CryptoLike }).crypto;
  if (c?.subtle === undefined) throw new Error('WebCrypto (globalThis.crypto.subtle) is not available: Node 20+ or a browser in a secure context is required');
  return c as CryptoLike & { subtle: SubtleLike };
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

const HEX = '0123456789abcdef';
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b >> 4] + HEX[b & 15];
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Standard padded Base64 (btoa is not typed everywhere the SDK compiles). */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += B64[n >> 18] + B64[(n >> 12) & 63] + '==';
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + '=';
  }
  return out;
}

/** HMAC-SHA256 under one secret; the secret is not kept once its key is imported. */
export type HmacSigner = (message: string) => Promise<Uint8Array>;

export function createHmacSigner(secret: string): HmacSigner {
  let pending: string | undefined = secret;
  let key: Promise<unknown> | undefined;
  return async (message) => {
    const subtle = webCrypto().subtle;
    if (key === undefined) {
      key = subtle.importKey('raw', utf8(pending as string), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      pending = undefined;
    }
    return new Uint8Array(await subtle.sign('HMAC', await key, utf8(message)));
  };
}

/**
 * The last `auth` timestamp used for each API key in this process, shared by every copy of the SDK
 * loaded in it (a bundle and the package, ESM twice): the server refuses a signature it has already
 * seen inside its window (perp 20007), and two streams authenticating with one key in the same
 * millisecond would otherwise sign the same bytes.
 */
const LAST_AUTH_TS = Symbol.for('@tokex/sdk.streamAuthTs');
function lastAuthTs(): Map<string, number> {
  const g = globalThis as unknown as Record<symbol, Map<string, number> | undefined>;
  return (g[LAST_AUTH_TS] ??= new Map());
}

/**
 * The `ts` of the next `auth` frame for `apiKey`: `now` (ms, rounded) unless the clock has not
 * advanced past the last one used for that key in this process, then that one plus 1. So no two
 * auths for a key ever carry one timestamp, and therefore never one signature; under a burst of
 * n connections the stamps run at most n ms ahead of the clock, well inside the server's window.
 */
export function nextStreamAuthTs(apiKey: string, now: number): number {
  const seen = lastAuthTs();
  const last = seen.get(apiKey);
  const rounded = Math.round(now);
  const ts = last !== undefined && rounded <= last ? last + 1 : rounded;
  seen.set(apiKey, ts);
  return ts;
}

/** A fresh random nonce for the stock `auth` frame: 32 hex characters (the API takes 8 to 64 of [A-Za-z0-9_-]). */
export function randomNonce(): string {
  return toHex(webCrypto().getRandomValues(new Uint8Array(16)));
}

/** Perp: Base64 HMAC-SHA256(secret, ts + "GET" + "/v4/public/ws"), the REST signature of a GET of the endpoint. */
export async function signPerpStreamAuth(signer: HmacSigner, ts: number | string): Promise<string> {
  return toBase64(await signer(`${ts}GET${PERP_STREAM_PATH}`));
}

/**
 * The stock §A five-line payload for GET /api/v1/ws: method, URI, ts, nonce and the empty body, joined
 * by "\n" (so it ends with the "\n" before the empty fifth line).
 */
export function stockStreamPayload(ts: number | string, nonce: string): string {
  return ['GET', STOCK_STREAM_PATH, String(ts), nonce, ''].join('\n');
}

/** Stock: lower-case hex HMAC-SHA256(secret, the five-line payload). */
export async function signStockStreamAuth(signer: HmacSigner, ts: number | string, nonce: string): Promise<string> {
  return toHex(await signer(stockStreamPayload(ts, nonce)));
}
