/**
 * The signed-request core of the tokenized-stock API that every action in `stock/actions/` sends
 * through (contract.md §A): lower-case hex HMAC-SHA256 over `METHOD\nURI\nTS\nNONCE\nBODY`, the
 * server's clock offset, and retries of GETs and of calls under an Idempotency-Key. The secret
 * lives in this closure only: it is never a property of the transport, an error or a returned object.
 */
import { canonicalQuery, randomId, signedUri, signStockRequest, type Query } from '../signing.ts';
import { StockApiError, TokexNetworkError } from '../errors.ts';
import { isAbort, isRetryableStatus, neverSent, parseRetryAfter, resolveRetry, retryDelayMs, sleep, type ResolvedRetry } from '../retry-policy.ts';
import type { StockClientOptions, StockResponse } from '../stock-types.ts';
import { createServerClock, withServerClock, type ServerClock } from '../server-clock.ts';

export interface SignedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** What one call carries besides its method and path. */
export interface StockCallOptions {
  query?: Query;
  body?: unknown;
  idempotencyKey?: string;
}

/** One answer: the envelope as the API wrote it, and what the headers said. */
export interface StockExchange<T> {
  envelope: StockResponse<T>;
  retryAfter?: number;
  serverDate?: number;
}

/** Every error a sent call may end in besides an abort: the API's refusal or no answer. */
export type StockRequestErrorType = StockApiError | TokexNetworkError;

export interface StockTransport extends ServerClock {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly chainId: number | string;
  readonly product: string;
  /** Whether the order actions check an order before sending (StockClientOptions.validateOrders). */
  readonly validateOrders: boolean;
  /** Builds the signed request without sending it (useful for curl, debugging and tests). */
  sign(method: string, path: string, opts?: StockCallOptions & { nonce?: string; ts?: number }): SignedRequest;
  /** One signed request, no retry: the envelope whatever its code, with the Retry-After and Date headers. */
  exchange<T = unknown>(method: string, path: string, opts?: StockCallOptions): Promise<StockExchange<T>>;
  /**
   * Returns `data` and throws StockApiError unless the code is 200. GETs, and calls under an
   * `idempotencyKey` (the One Click sends), are retried after a network failure, a 429 (after
   * Retry-After) or a 503, each with a fresh nonce: the key makes the server answer a retry with
   * what the first attempt did.
   */
  call<T = unknown>(method: string, path: string, opts?: StockCallOptions): Promise<T>;
}

/** The transport of one API key: what StockClient wraps, and what the actions take. */
export function createStockTransport(opts: StockClientOptions): StockTransport {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const { apiKey, apiSecret, chainId } = opts;
  const product = opts.product ?? 'STOCK';
  const time = createServerClock(opts.now);
  const f = opts.fetch ?? fetch;
  const policy: ResolvedRetry = resolveRetry(opts.retry);

  const { now } = time;

  function sign(method: string, path: string, o: StockCallOptions & { nonce?: string; ts?: number } = {}): SignedRequest {
    if (!path.startsWith('/api/v1/')) throw new Error('path must start with /api/v1/');
    const query = o.query ? canonicalQuery(o.query) : '';
    const uri = signedUri(path, query);
    const body = o.body === undefined ? '' : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const ts = String(o.ts ?? now());
    const nonce = o.nonce ?? randomId();
    const headers: Record<string, string> = {
      'x-api-key': apiKey,
      'x-api-sign': signStockRequest(apiSecret, { method, uri, ts, nonce, body }),
      'x-api-ts': ts,
      'x-api-nonce': nonce,
      'x-api-chain-id': String(chainId),
      'x-api-p': product,
    };
    if (body !== '') headers['content-type'] = 'application/json';
    if (o.idempotencyKey !== undefined) headers['idempotency-key'] = o.idempotencyKey;
    return { url: baseUrl + uri, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  async function exchange<T>(method: string, path: string, o: StockCallOptions = {}): Promise<StockExchange<T>> {
    const req = sign(method, path, o);
    const res = await f(req.url, { method: req.method, headers: req.headers, body: req.body });
    const text = await res.text();
    let json: Omit<StockResponse<T>, 'httpStatus'>;
    try {
      json = JSON.parse(text) as Omit<StockResponse<T>, 'httpStatus'>;
    } catch {
      // A proxy or a server going down may answer something else than the envelope.
      json = { code: res.status, errMsg: `HTTP ${res.status} without the API envelope`, uuid: '' };
    }
    const date = res.headers.get('date');
    return {
      envelope: { httpStatus: res.status, ...json },
      retryAfter: parseRetryAfter(res.headers.get('retry-after')),
      serverDate: date !== null && !Number.isNaN(Date.parse(date)) ? Date.parse(date) : undefined,
    };
  }

  async function call<T>(method: string, path: string, o: StockCallOptions = {}): Promise<T> {
    const idempotent = method.toUpperCase() === 'GET' || o.idempotencyKey !== undefined;
    const endpoint = `${method.toUpperCase()} ${path}`;
    for (let attempt = 0; ; attempt++) {
      let res: StockResponse<T>;
      let retryAfter: number | undefined;
      try {
        ({ envelope: res, retryAfter } = await exchange<T>(method, path, o));
      } catch (err) {
        if (isAbort(err)) throw err;
        // No answer: after a reset the request may have arrived, after a refusal it never left.
        const unsent = neverSent(err);
        if ((!idempotent && !unsent) || attempt >= policy.retries) {
          throw new TokexNetworkError(`${endpoint}: no answer (${(err as Error).message})`, unsent ? false : 'unknown', { cause: err });
        }
        await sleep(retryDelayMs(policy, attempt)!);
        continue;
      }
      if (res.code === 200) return res.data as T;
      if (!idempotent || !isRetryableStatus(res.httpStatus) || attempt >= policy.retries) throw new StockApiError({ ...res, retryAfter }, endpoint);
      const wait = retryDelayMs(policy, attempt, retryAfter);
      if (wait === undefined) throw new StockApiError({ ...res, retryAfter }, endpoint);
      await sleep(wait);
    }
  }

  return withServerClock(time, {
    baseUrl,
    apiKey,
    chainId,
    product,
    validateOrders: opts.validateOrders ?? true,
    sign,
    exchange,
    call,
  });
}

/** A path segment: ids and symbols are encoded so they cannot change the path. */
export const seg = encodeURIComponent;

/**
 * A One Click send's `Idempotency-Key`. The SDK names every send with a fresh one unless given, so
 * its retries (network failure, 429, 503) are answered with the first attempt's transaction, never
 * a second one. Pass your own to retry a send across restarts of your program.
 */
export interface SendOptions {
  idempotencyKey?: string;
}

/** The body of a One Click send and its Idempotency-Key (a fresh one unless given). */
export function sendKey(opts: SendOptions): { idempotencyKey: string } {
  return { idempotencyKey: opts.idempotencyKey ?? globalThis.crypto.randomUUID() };
}

/** Splits a One Click send's SendOptions from the body it sends. */
export function splitSendOptions<B extends SendOptions>(parameters: B): [Omit<B, keyof SendOptions>, { idempotencyKey: string }] {
  const { idempotencyKey, ...body } = parameters;
  return [body, sendKey({ idempotencyKey })];
}
