/**
 * A client of Monday Trade's trader API written from the public material only, as summarised in
 * /work/shared/spec/monday-reference.md (§2.1 signing, §2.2 envelope and success rule, §2.4–2.7
 * bodies). It knows nothing of this venue: no @tokex/sdk, no @tokex/contract, no server module.
 * Base URL and chain id are its only settings, as a real client's would be.
 *
 * Signing (§2.1): X-Api-Key, X-Api-Ts (String(Date.now()), ms), X-Chain-Id, X-Api-Sign =
 * base64(HMAC-SHA256(secret, ts + METHOD + path + body)); the query is sorted by decoded key and
 * signed as `path?sortedQuery`; a POST body is parsed, re-serialised with its top-level keys sorted
 * (compact JSON.stringify) and that is signed, while the body is sent as written.
 * Success (§2.2): HTTP 2xx and `code` 0 or 200; anything else throws a MondayApiError.
 */
import { createHmac } from 'node:crypto';

export const MONDAY_ROOT = '/v4/public/trader';
export const PERPETUAL_EXPIRY = 4294967295;
export const SIDE_SHORT = 1;
export const SIDE_LONG = 2;

export class MondayApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: number | undefined,
    readonly msg: string,
    readonly body: unknown,
  ) {
    super(`${httpStatus} ${code ?? '-'} ${msg}`);
  }
}

export interface MondayCredentials {
  apiKey: string;
  apiSecret: string;
}

export interface MondayClientOptions {
  baseUrl: string;
  chainId: number;
  credentials?: MondayCredentials;
  /** The client's clock (ms); Date.now by default. */
  now?: () => number;
}

/** §2.1: `k=v` pairs sorted by decoded key, original encoding kept, joined with `&`. */
export function sortQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => ({ pair, key: decodeURIComponent(pair.split('=')[0]) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((p) => p.pair)
    .join('&');
}

/** §2.1: the JSON body with its top-level keys sorted, compact. */
export function sortedBody(body: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(parsed).sort()) out[k] = parsed[k];
  return JSON.stringify(out);
}

export function signature(secret: string, ts: string, method: string, path: string, body: string): string {
  return createHmac('sha256', secret).update(ts + method + path + body, 'utf8').digest('base64');
}

/** §2.4: the five lines of the key-creation message. */
export function keyCreationMessage(chainID: number, address: string, nonce: string, timestamp: string | number): string {
  return [`Chain ID: ${chainID}`, `Wallet Address: ${address}`, `Nonce: ${nonce}`, `Timestamp: ${timestamp}`, 'Sign this message to authenticate with Monday Trade API.'].join('\n');
}

export interface RawRequest {
  method: 'GET' | 'POST';
  /** After /v4/public/trader/, with the query if any: `market/instruments?symbol=BTC%2FUSDC`. */
  path: string;
  /** The body exactly as sent. */
  body?: string;
  /** What is signed in its place (tests of the server's refusals); default: sortedBody(body). */
  signedBody?: string;
  /** Headers that replace the computed ones. */
  headers?: Record<string, string>;
  /** Send without X-Api-* headers. */
  unsigned?: boolean;
}

export class MondayClient {
  readonly chainId: number;
  private readonly now: () => number;

  constructor(private readonly opts: MondayClientOptions) {
    this.chainId = opts.chainId;
    this.now = opts.now ?? Date.now;
  }

  withCredentials(credentials: MondayCredentials): MondayClient {
    return new MondayClient({ ...this.opts, credentials });
  }

  /** The request as the client sends it; answers the status and the parsed body, whatever they are. */
  async raw(req: RawRequest): Promise<{ status: number; body: any; headers: Headers }> {
    const full = `${MONDAY_ROOT}/${req.path}`;
    const q = full.indexOf('?');
    const pathOnly = q === -1 ? full : full.slice(0, q);
    const query = q === -1 ? '' : sortQuery(full.slice(q + 1));
    const signedPath = query === '' ? pathOnly : `${pathOnly}?${query}`;
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (!req.unsigned) {
      const c = this.opts.credentials;
      if (!c) throw new Error('no credentials');
      const ts = String(this.now());
      const body = req.body === undefined ? '' : (req.signedBody ?? sortedBody(req.body));
      headers['X-Api-Key'] = c.apiKey;
      headers['X-Api-Ts'] = ts;
      headers['X-Chain-Id'] = String(this.chainId);
      headers['X-Api-Sign'] = signature(c.apiSecret, ts, req.method, signedPath, body);
    }
    Object.assign(headers, req.headers ?? {});
    const res = await fetch(`${this.opts.baseUrl}${signedPath}`, { method: req.method, headers, body: req.body });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: res.status, body, headers: res.headers };
  }

  /** §2.2's success rule: HTTP 2xx and code 0 or 200; answers `data`. */
  async call<T>(req: RawRequest): Promise<T> {
    const r = await this.raw(req);
    const code = typeof r.body === 'object' && r.body !== null ? (r.body.code as number | undefined) : undefined;
    if (r.status < 200 || r.status >= 300 || (code !== 0 && code !== 200)) {
      const msg = typeof r.body === 'object' && r.body !== null ? String(r.body.msg ?? r.body.message ?? '') : String(r.body);
      throw new MondayApiError(r.status, code, msg, r.body);
    }
    return r.body.data as T;
  }

  /** §2.4: no X-Api-* headers (the wallet's signature authorises it). */
  createApiKey(body: { chainID: number; address: string; signature: string; nonce: string; timestamp: string | number }): Promise<{ apiKey: string; apiSecret: string }> {
    return this.call({ method: 'POST', path: 'api-key/create', body: JSON.stringify(body), unsigned: true });
  }

  getInstruments(symbol?: string): Promise<any[]> {
    return this.call({ method: 'GET', path: symbol === undefined ? 'market/instruments' : `market/instruments?symbol=${encodeURIComponent(symbol)}` });
  }

  /** §2.5 */
  getFundingHistory(symbol: string): Promise<Array<{ timestamp: number; long: string; short: string }>> {
    return this.call({ method: 'GET', path: `market/funding/history?symbol=${encodeURIComponent(symbol)}&chainId=${this.chainId}` });
  }

  /** §2.6: the body's keys in the client's own (unsorted) order. */
  placeMarketOrder(o: { instrument: string; size: string; side: number; leverage: string; slippageBps?: number; referralCode?: string }): Promise<any> {
    const body = { instrument: o.instrument, expiry: PERPETUAL_EXPIRY, size: o.size, side: o.side, leverage: o.leverage, slippageBps: o.slippageBps ?? 10, ...(o.referralCode ? { referralCode: o.referralCode } : {}), deadline: 0, gasLimit: 0 };
    return this.call({ method: 'POST', path: 'order/market', body: JSON.stringify(body) });
  }

  /** §2.7 */
  placeLimitOrder(o: { instrument: string; size: string; price: string; side: number; leverage: string; postOnly?: boolean; markPriceBufferInBps?: number }): Promise<any> {
    const body = {
      instrument: o.instrument, expiry: PERPETUAL_EXPIRY, size: o.size, price: o.price, side: o.side, leverage: o.leverage,
      ...(o.postOnly !== undefined ? { postOnly: o.postOnly } : {}),
      ...(o.markPriceBufferInBps !== undefined ? { markPriceBufferInBps: o.markPriceBufferInBps } : {}),
      deadline: 0, gasLimit: 0,
    };
    return this.call({ method: 'POST', path: 'order/limit', body: JSON.stringify(body) });
  }
}
