/**
 * The signed-request core of the perpetual API that every action in `perp/actions/` sends through
 * (contract.md §B): `X-Api-Sign` = Base64 HMAC-SHA256(secret, ts + METHOD + request_path + body),
 * request_path from `/v4/` with the query sorted by name; strictly increasing timestamps, the
 * server's clock offset, and retries of idempotent calls. The secret lives in this closure only:
 * it is never a property of the transport, an error or a returned object.
 */
import { canonicalQuery, randomId, signedUri, signPerpRequest } from '../signing.ts';
import { PerpApiError, TokexNetworkError } from '../errors.ts';
import { isAbort, isRetryableStatus, neverSent, parseRetryAfter, resolveRetry, retryDelayMs, sleep, type ResolvedRetry } from '../retry-policy.ts';
import type { IdempotentCallOptions, Instrument, PerpClientOptions, PerpResponse, RequestOptions, SignedPerpRequest } from '../perp-types.ts';
import { createServerClock, withServerClock, type ServerClock } from '../server-clock.ts';

export const PERP_PATH_ROOT = '/v4/public/trader';

/** Codes whose request may be retried as is: 50001/50002 (the outcome may be unknown: see `data.outcome`). */
const RETRYABLE_CODES = new Set([50001, 50002]);

/** What an unsigned call needs: the calls a wallet signature or nothing authorises (`createApiKey`, `PerpClient.serverTime`). */
export interface PerpPublicTransport {
  /** `{perp_base_url}` without /v4. */
  readonly baseUrl: string;
  readonly fetch: typeof fetch;
}

/** How one call is sent: signed or not, and whether it may be repeated. */
export interface PerpSendOptions extends Omit<RequestOptions, 'ts'> {
  unsigned?: boolean;
  idempotent: boolean;
  retries?: number;
  retryDelayMs?: number;
}

/** Every error a sent call may end in besides an abort: the API's refusal or no answer. */
export type PerpRequestErrorType = PerpApiError | TokexNetworkError;

export interface PerpTransport extends PerpPublicTransport, ServerClock {
  readonly apiKey: string;
  readonly chainId: number | string;
  /** Whether `buildOrder` checks an order against its instrument before sending (PerpClientOptions.validateOrders). */
  readonly validateOrders: boolean;
  /** Builds the signed request without sending it (for curl, debugging and tests). */
  sign(method: string, path: string, opts?: RequestOptions): SignedPerpRequest;
  /** Sends one signed request (no retry) and returns the envelope (with the rate-limit headers) whatever its code. */
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<PerpResponse<T>>;
  /**
   * Sends, signing each attempt afresh, and retries an idempotent call after a network failure, a
   * 429 (after Retry-After), a 503 or a 50001/50002; answers `data` or throws PerpApiError.
   */
  send<T = unknown>(method: string, path: string, opts: PerpSendOptions): Promise<T>;
  /** What the actions keep between calls: the instruments the order checks use (see `getCachedInstrument`). */
  readonly cache: { instruments?: Promise<Map<string, Instrument>> };
}

/** `instruments` or `/v4/public/trader/instruments` → the absolute path. */
export function endpointPath(path: string): string {
  if (path.startsWith('/v4/')) return path;
  return `${PERP_PATH_ROOT}/${path.replace(/^\/+/, '')}`;
}

function bodyText(body: unknown): string {
  return body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
}

async function readResponse<T>(res: Response): Promise<PerpResponse<T>> {
  const text = await res.text();
  let json: Omit<PerpResponse<T>, 'httpStatus'>;
  try {
    json = JSON.parse(text) as Omit<PerpResponse<T>, 'httpStatus'>;
  } catch {
    // A proxy or a server going down may answer something else than the envelope.
    json = { code: res.status, msg: `HTTP ${res.status} without the API envelope`, requestId: res.headers.get('x-request-id') ?? '' };
  }
  const out: PerpResponse<T> = { httpStatus: res.status, ...json };
  const limit = res.headers.get('x-ratelimit-limit');
  if (limit !== null) {
    out.rateLimit = { limit: Number(limit), remaining: Number(res.headers.get('x-ratelimit-remaining')), reset: Number(res.headers.get('x-ratelimit-reset')) };
  }
  const retry = parseRetryAfter(res.headers.get('retry-after'));
  if (retry !== undefined) out.retryAfter = retry;
  return out;
}

/** One unsigned call without retry (GET time and the two key-creation calls of the static helpers): `data`, or PerpApiError. */
export async function publicCall<T>(transport: PerpPublicTransport, method: string, path: string, body?: unknown): Promise<T> {
  const text = bodyText(body);
  // Called unbound: a browser's fetch refuses any other `this` than the window.
  const f = transport.fetch;
  const res = await f(transport.baseUrl.replace(/\/+$/, '') + endpointPath(path), {
    method,
    headers: text === '' ? {} : { 'content-type': 'application/json' },
    body: text === '' ? undefined : text,
  });
  const answer = await readResponse<T>(res);
  if (answer.code !== 0) throw new PerpApiError(answer);
  return answer.data as T;
}

/** A state-changing call under an Idempotency-Key (a fresh one unless given), kept across its retries. */
export function sendIdempotent<T>(transport: PerpTransport, method: string, path: string, body: unknown, opts: IdempotentCallOptions): Promise<T> {
  const idempotencyKey = opts.idempotencyKey ?? randomId();
  return transport.send<T>(method, path, { body, idempotencyKey, idempotent: true, retries: opts.retries, retryDelayMs: opts.retryDelayMs });
}

/** Splits a call's IdempotentCallOptions from the body it sends. */
export function splitIdempotentOptions<B extends IdempotentCallOptions>(parameters: B): [Omit<B, keyof IdempotentCallOptions>, IdempotentCallOptions] {
  const { idempotencyKey, retries, retryDelayMs, ...body } = parameters;
  return [body, { idempotencyKey, retries, retryDelayMs }];
}

/** The transport of one API key: what PerpClient wraps, and what the actions take. */
export function createPerpTransport(opts: PerpClientOptions): PerpTransport {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const { apiKey, apiSecret, chainId } = opts;
  const time = createServerClock(opts.now);
  const f = opts.fetch ?? fetch;
  const retry: ResolvedRetry = resolveRetry(opts.retry);
  /** The last X-Api-Ts used: two identical requests in one millisecond would carry the same signature, and the server refuses the second as a replay (20007). */
  let lastTs = 0;

  const { now } = time;

  function sign(method: string, path: string, o: RequestOptions = {}): SignedPerpRequest {
    const query = o.query ? canonicalQuery(o.query) : '';
    const requestPath = signedUri(endpointPath(path), query);
    const body = bodyText(o.body);
    let ts = String(o.ts);
    if (o.ts === undefined) {
      lastTs = Math.max(now(), lastTs + 1);
      ts = String(lastTs);
    }
    const headers: Record<string, string> = {
      'X-Api-Key': apiKey,
      'X-Api-Sign': signPerpRequest(apiSecret, { ts, method, requestPath, body }),
      'X-Api-Ts': ts,
      'X-Chain-Id': String(chainId),
    };
    if (body !== '') headers['content-type'] = 'application/json';
    if (o.idempotencyKey !== undefined) headers['Idempotency-Key'] = o.idempotencyKey;
    return { url: baseUrl + requestPath, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  async function request<T>(method: string, path: string, o: RequestOptions = {}): Promise<PerpResponse<T>> {
    const req = sign(method, path, o);
    return readResponse<T>(await f(req.url, { method: req.method, headers: req.headers, body: req.body }));
  }

  async function requestUnsigned<T>(method: string, path: string, o: RequestOptions): Promise<PerpResponse<T>> {
    const query = o.query ? canonicalQuery(o.query) : '';
    const text = bodyText(o.body);
    const headers: Record<string, string> = text === '' ? {} : { 'content-type': 'application/json' };
    if (o.idempotencyKey !== undefined) headers['Idempotency-Key'] = o.idempotencyKey;
    return readResponse<T>(await f(baseUrl + signedUri(endpointPath(path), query), { method, headers, body: text === '' ? undefined : text }));
  }

  async function send<T>(method: string, path: string, o: PerpSendOptions): Promise<T> {
    const policy: ResolvedRetry = {
      ...retry,
      retries: o.retries ?? retry.retries,
      baseDelayMs: o.retryDelayMs ?? retry.baseDelayMs,
      // A per-call first wait is kept as documented (doubled each time, no jitter): callers size it
      // to outlast something, such as an engine recovery.
      random: o.retryDelayMs !== undefined ? () => 1 : retry.random,
    };
    const req: RequestOptions = { query: o.query, body: o.body, idempotencyKey: o.idempotencyKey };
    const endpoint = `${method} ${endpointPath(path)}`;
    for (let attempt = 0; ; attempt++) {
      let res: PerpResponse<T>;
      try {
        res = o.unsigned ? await requestUnsigned<T>(method, path, req) : await request<T>(method, path, req);
      } catch (err) {
        if (isAbort(err)) throw err;
        // No answer: after a reset the request may have arrived, after a refusal it never left.
        const unsent = neverSent(err);
        if ((!o.idempotent && !unsent) || attempt >= policy.retries) {
          throw new TokexNetworkError(`${endpoint}: no answer (${(err as Error).message})`, unsent ? false : 'unknown', { cause: err });
        }
        await sleep(retryDelayMs(policy, attempt)!);
        continue;
      }
      if (res.code === 0) return res.data as T;
      const retryable = isRetryableStatus(res.httpStatus) || RETRYABLE_CODES.has(res.code);
      if (!o.idempotent || !retryable || attempt >= policy.retries) throw new PerpApiError(res, endpoint);
      const wait = retryDelayMs(policy, attempt, res.retryAfter);
      if (wait === undefined) throw new PerpApiError(res, endpoint);
      await sleep(wait);
    }
  }

  return withServerClock(time, {
    baseUrl,
    fetch: f,
    apiKey,
    chainId,
    validateOrders: opts.validateOrders ?? true,
    sign,
    request,
    send,
    cache: {},
  });
}
