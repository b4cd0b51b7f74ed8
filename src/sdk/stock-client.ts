/**
 * A small client for the tokenized-stock API that signs every request as contract.md §A says.
 * The secret stays inside the client: it is never part of an error or a returned object.
 */
import { randomUUID } from 'node:crypto';
import { canonicalQuery, signedUri, signStock } from '../auth/hmac.ts';

export interface StockClientOptions {
  /** Base URL including any service prefix, without /api/v1 (e.g. http://127.0.0.1:8080). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  chainId: number | string;
  product?: string;
  /** Clock for x-api-ts; tests may shift it. */
  now?: () => number;
  fetch?: typeof fetch;
}

export interface StockResponse<T = unknown> {
  httpStatus: number;
  code: number;
  errMsg: string;
  uuid: string;
  data?: T;
}

export type Query = Record<string, string | number | undefined>;

export interface SignedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export class StockApiError extends Error {
  readonly httpStatus: number;
  readonly code: number;
  readonly uuid: string;
  /** What the error answered beside its message (a reverted One Click send: its txHash). */
  readonly data?: unknown;
  constructor(res: StockResponse) {
    super(`stock API ${res.code}: ${res.errMsg} (uuid ${res.uuid})`);
    this.name = 'StockApiError';
    this.httpStatus = res.httpStatus;
    this.code = res.code;
    this.uuid = res.uuid;
    this.data = res.data;
  }
}

/**
 * What signs the One Click delegation: a viem account or wallet client (`signTypedData` over the
 * complete typed data the API answers), or any wallet that signs `eth_signTypedData_v4` JSON.
 */
export interface TypedDataSigner {
  signTypedData(typedData: any): Promise<`0x${string}`>;
}

export interface OneClickEnabled {
  status: 'enabled' | 'disabled';
  delegatee: string;
  txHash: string | null;
}

export class StockClient {
  readonly #opts: Required<Omit<StockClientOptions, 'fetch'>> & { fetch: typeof fetch };

  constructor(opts: StockClientOptions) {
    this.#opts = {
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
      apiKey: opts.apiKey,
      apiSecret: opts.apiSecret,
      chainId: opts.chainId,
      product: opts.product ?? 'STOCK',
      now: opts.now ?? Date.now,
      fetch: opts.fetch ?? fetch,
    };
  }

  /** Builds the signed request without sending it (useful for curl, debugging and tests). */
  sign(method: string, path: string, opts: { query?: Query; body?: unknown; nonce?: string; ts?: number } = {}): SignedRequest {
    if (!path.startsWith('/api/v1/')) throw new Error('path must start with /api/v1/');
    const query = opts.query ? canonicalQuery(opts.query) : '';
    const uri = signedUri(path, query);
    const body = opts.body === undefined ? '' : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const ts = String(opts.ts ?? this.#opts.now());
    const nonce = opts.nonce ?? randomUUID();
    const sign = signStock(this.#opts.apiSecret, { method, uri, ts, nonce, body });
    const headers: Record<string, string> = {
      'x-api-key': this.#opts.apiKey,
      'x-api-sign': sign,
      'x-api-ts': ts,
      'x-api-nonce': nonce,
      'x-api-chain-id': String(this.#opts.chainId),
      'x-api-p': this.#opts.product,
    };
    if (body !== '') headers['content-type'] = 'application/json';
    return { url: this.#opts.baseUrl + uri, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  /** Sends a signed request and returns the envelope whatever its code. */
  async request<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<StockResponse<T>> {
    const req = this.sign(method, path, opts);
    const res = await this.#opts.fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    const json = (await res.json()) as Omit<StockResponse<T>, 'httpStatus'>;
    return { httpStatus: res.status, ...json };
  }

  /** Like request, but returns `data` and throws StockApiError unless the code is 200. */
  async call<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    const res = await this.request<T>(method, path, opts);
    if (res.code !== 200) throw new StockApiError(res);
    return res.data as T;
  }

  get<T = unknown>(path: string, query?: Query): Promise<T> {
    return this.call<T>('GET', path, { query });
  }

  post<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('POST', path, { body });
  }

  delete<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('DELETE', path, { body });
  }

  /**
   * Enables One Click for the key's bound wallet: `1ct/prepare`, the wallet signs the payload (no
   * transaction, no gas), `1ct/enable`. `deadline` (Unix seconds) defaults to ten minutes ahead.
   */
  async enableOneClick(wallet: TypedDataSigner, opts: { deadline?: number } = {}): Promise<OneClickEnabled> {
    const deadline = opts.deadline ?? Math.floor(this.#opts.now() / 1000) + 600;
    const prepared = await this.post<{ deadline: number; signPayload: unknown }>('/api/v1/1ct/prepare', { deadline });
    const signature = await wallet.signTypedData(prepared.signPayload);
    return this.post<OneClickEnabled>('/api/v1/1ct/enable', { signature, deadline: prepared.deadline });
  }
}
