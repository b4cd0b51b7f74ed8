/**
 * A client of Anchored Finance's RWA Trading API written only from what its documentation shows
 * (shared/spec/anchored-reference.md §1, §2): nothing of tokex (no SDK, no contract package, no
 * signing helper of src/) is used, so that a test running it shows that a client written from
 * Anchored's documentation works unmodified against tokex.
 *
 * - Base URL: the service's address including its context path (Anchored's is
 *   `https://rwa-api.anchored.finance/rwa/trading`); paths start with `/api/v1`.
 * - Signed URI: the path from `/api/v1` (never the host or the context path) plus the query as the
 *   documentation's Node.js helper builds it: keys sorted ascending, `key=value` joined with `&`,
 *   an array's values expanded in order under its key, null/undefined skipped, and no
 *   percent-encoding of names or values. The request is sent to that same URI.
 * - Payload: METHOD, URI, TIMESTAMP, NONCE, RAW_BODY joined by `\n`; `x-api-sign` is the hex
 *   HMAC-SHA256 of it under the API secret, UTF-8 throughout.
 * - Headers: `x-api-key`, `x-api-ts` (ms), `x-api-nonce` (a UUID), `x-api-sign`, `x-api-chain-id`,
 *   `x-api-p`, and `content-type: application/json` with a JSON body.
 * - Envelope: `{code, errMsg, data, uuid, t}`; `code` 200 is success, any other a failure, whatever
 *   the HTTP status (business errors come as HTTP 400).
 */
import { createHmac, randomUUID } from 'node:crypto';

export type AnchoredQueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>;
export type AnchoredQuery = Record<string, AnchoredQueryValue>;

export interface AnchoredEnvelope<T = any> {
  code: number;
  errMsg: string;
  data: T;
  uuid: string | null;
  t: number | null;
}

/** The envelope with what came around it, for tests that look at the wire. */
export interface AnchoredAnswer<T = any> extends AnchoredEnvelope<T> {
  httpStatus: number;
  /** The answer's text exactly as received. */
  text: string;
  /** The signed URI (also what was requested after the base URL). */
  uri: string;
}

export interface AnchoredClientOptions {
  /** Host plus context path, e.g. `https://rwa-api.anchored.finance/rwa/trading`. */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** `x-api-chain-id`, e.g. 8453 (Base). */
  chainId: number | string;
  /** `x-api-p`, e.g. `Anchored` (exact case). */
  productType: string;
}

/** The query as the Node.js helper writes it: sorted keys, arrays expanded, nulls skipped, nothing encoded. */
export function anchoredQueryString(query: AnchoredQuery = {}): string {
  const parts: string[] = [];
  for (const key of Object.keys(query).sort()) {
    const value = query[key];
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && item !== undefined) parts.push(`${key}=${item}`);
    } else {
      parts.push(`${key}=${value}`);
    }
  }
  return parts.join('&');
}

/** `path` plus `?` and the sorted query when there is one. */
export function anchoredCanonicalUri(path: string, query?: AnchoredQuery): string {
  const qs = anchoredQueryString(query);
  return qs === '' ? path : `${path}?${qs}`;
}

/** The five-line payload: METHOD, URI, TIMESTAMP, NONCE, RAW_BODY. */
export function anchoredSignPayload(method: string, uri: string, timestamp: string, nonce: string, rawBody: string): string {
  return [method.toUpperCase(), uri, timestamp, nonce, rawBody].join('\n');
}

/** `x-api-sign`: hex HMAC-SHA256 of the payload, keyed with the API secret. */
export function anchoredSign(apiSecret: string, payload: string): string {
  return createHmac('sha256', Buffer.from(apiSecret, 'utf8')).update(Buffer.from(payload, 'utf8')).digest('hex');
}

export class AnchoredClient {
  constructor(private readonly opts: AnchoredClientOptions) {}

  /** The headers for one request, with a fresh timestamp and nonce. */
  headers(method: string, uri: string, rawBody: string): Record<string, string> {
    const ts = String(Date.now());
    const nonce = randomUUID();
    const headers: Record<string, string> = {
      'x-api-key': this.opts.apiKey,
      'x-api-ts': ts,
      'x-api-nonce': nonce,
      'x-api-sign': anchoredSign(this.opts.apiSecret, anchoredSignPayload(method, uri, ts, nonce, rawBody)),
      'x-api-chain-id': String(this.opts.chainId),
      'x-api-p': this.opts.productType,
    };
    if (rawBody !== '') headers['content-type'] = 'application/json';
    return headers;
  }

  /** Sends one signed request; never throws on a failure code (read `code`). */
  async request<T = any>(method: string, path: string, opts: { query?: AnchoredQuery; body?: unknown } = {}): Promise<AnchoredAnswer<T>> {
    const verb = method.toUpperCase();
    const uri = anchoredCanonicalUri(path, opts.query);
    const rawBody = opts.body === undefined ? '' : JSON.stringify(opts.body);
    const res = await fetch(this.opts.baseUrl.replace(/\/+$/, '') + uri, {
      method: verb,
      headers: this.headers(verb, uri, rawBody),
      body: rawBody === '' ? undefined : rawBody,
    });
    const text = await res.text();
    let envelope: AnchoredEnvelope<T>;
    try {
      envelope = JSON.parse(text) as AnchoredEnvelope<T>;
    } catch {
      throw new Error(`${verb} ${uri}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
    }
    return { ...envelope, httpStatus: res.status, text, uri };
  }

  get<T = any>(path: string, query?: AnchoredQuery): Promise<AnchoredAnswer<T>> {
    return this.request<T>('GET', path, { query });
  }

  post<T = any>(path: string, body?: unknown): Promise<AnchoredAnswer<T>> {
    return this.request<T>('POST', path, { body });
  }

  delete<T = any>(path: string): Promise<AnchoredAnswer<T>> {
    return this.request<T>('DELETE', path);
  }
}
