/// <reference lib="dom" />
/**
 * Signed REST calls from the browser, with WebCrypto's HMAC-SHA256: the stock API's five-line
 * payload (hex) and the perpetual API's `ts + METHOD + path + body` (Base64), as docs/stock-api.md
 * and docs/perp-api.md define them, the messages built by the contract's recipes. The secrets stay in
 * this module's closures; nothing is logged.
 */
import { PERP_HEADERS, PERP_OK_CODE, perpRequestPath, perpSignMessage, STOCK_HEADERS, STOCK_OK_CODE, stockSignedUri, stockSignMessage } from '@tokex/contract';

const encoder = new TextEncoder();

async function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function base64(bytes: ArrayBuffer): string {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s);
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface StockCredentials {
  apiKey: string;
  apiSecret: string;
}

export function stockClient(opts: { baseUrl: string; chainId: number; product: string; creds: StockCredentials }) {
  const key = hmacKey(opts.creds.apiSecret);
  return async function stockRequest<T>(method: string, path: string, query?: Record<string, string | number | undefined>, body?: unknown): Promise<T> {
    const uri = stockSignedUri(`/api/v1${path}`, query);
    const text = body === undefined ? '' : JSON.stringify(body);
    const ts = String(Date.now());
    const nonce = crypto.randomUUID();
    const payload = stockSignMessage({ method, uri, ts, nonce, body: text });
    const sign = hex(await crypto.subtle.sign('HMAC', await key, encoder.encode(payload)));
    const headers: Record<string, string> = {
      [STOCK_HEADERS.key]: opts.creds.apiKey,
      [STOCK_HEADERS.sign]: sign,
      [STOCK_HEADERS.ts]: ts,
      [STOCK_HEADERS.nonce]: nonce,
      [STOCK_HEADERS.chainId]: String(opts.chainId),
      [STOCK_HEADERS.product]: opts.product,
    };
    if (text) headers['content-type'] = 'application/json';
    const res = await fetch(opts.baseUrl + uri, { method, headers, body: text || undefined });
    const json = (await res.json()) as { code: number; errMsg?: string; data: T };
    if (json.code !== STOCK_OK_CODE) throw new ApiError(json.code, `stock ${method} ${path}: ${json.errMsg ?? res.status}`);
    return json.data;
  };
}

export function perpClient(opts: { baseUrl: string; chainId: number; creds: StockCredentials }) {
  const key = hmacKey(opts.creds.apiSecret);
  // Two identical signed requests in one millisecond would be a replay (20007): never reuse a ts.
  let lastTs = 0;
  return async function perpRequest<T>(method: string, path: string, query?: Record<string, string | number | undefined>, body?: unknown): Promise<T> {
    const requestPath = perpRequestPath(`/v4/public/trader/${path}`, query);
    const text = body === undefined ? '' : JSON.stringify(body);
    lastTs = Math.max(Date.now(), lastTs + 1);
    const ts = String(lastTs);
    const sign = base64(await crypto.subtle.sign('HMAC', await key, encoder.encode(perpSignMessage({ ts, method, requestPath, body: text }))));
    const headers: Record<string, string> = {
      [PERP_HEADERS.key]: opts.creds.apiKey,
      [PERP_HEADERS.ts]: ts,
      [PERP_HEADERS.sign]: sign,
      [PERP_HEADERS.chainId]: String(opts.chainId),
    };
    if (text) headers['content-type'] = 'application/json';
    const res = await fetch(opts.baseUrl + requestPath, { method, headers, body: text || undefined });
    const json = (await res.json()) as { code: number; msg?: string; data: T };
    if (json.code !== PERP_OK_CODE) throw new ApiError(json.code, `perp ${method} ${path}: ${json.code} ${json.msg ?? res.status}`);
    return json.data;
  };
}

export type StockRequest = ReturnType<typeof stockClient>;
export type PerpRequest = ReturnType<typeof perpClient>;
