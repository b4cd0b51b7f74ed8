/**
 * The perpetual API client. Every request is signed as contract.md §B says: `X-Api-Sign` = Base64
 * HMAC-SHA256(secret, ts + METHOD + request_path + body), request_path from `/v4/` with the query
 * sorted by name. One typed method per endpoint (PERP_ROUTES lists them), flows that sign with a
 * wallet (orders, One-Click sessions, approve and deposit), retries of idempotent calls, a clock
 * synchronised with the server, and client-side refusals of orders the venue would refuse. The
 * secret stays inside the client: it is never part of an error or a returned object.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { canonicalQuery, randomId, signedUri, signPerpRequest, type Query } from './signing.ts';
import type { TypedDataSigner } from './signer-types.ts';
import { PerpApiError, TokexNetworkError, TokexTimeoutError, TokexValidationError } from './errors.ts';
import { isAbort, isRetryableStatus, neverSent, parseRetryAfter, resolveRetry, retryDelayMs, sleep, type ResolvedRetry } from './retry-policy.ts';
import { compareDecimal, isDecimalString, isMultipleOf } from './decimal-step.ts';
import { paginate, type PaginateOptions } from './pagination.ts';
import type {
  AccountAsset,
  AccountDeposit,
  AccountProof,
  AccountSummary,
  AccountTransaction,
  ApiKeyInfo,
  BatchCancelResult,
  BuiltOrder,
  CancelAllAfterStatus,
  CreatedApiKey,
  Depth,
  EnableSessionTypedData,
  FundingRate,
  IdempotentCallOptions,
  InsuranceFund,
  Instrument,
  Kline,
  KlineIntervalName,
  LiquidityHistoryRow,
  LiquidityMove,
  LiquidityPosition,
  MarketTrade,
  OneClickStatus,
  OrderInput,
  OrderStatus,
  OrderView,
  Page,
  PageQuery,
  PerpClientOptions,
  PerpPermission,
  PerpResponse,
  PerpWithdrawal,
  PlacedOrder,
  Position,
  PreparedTransaction,
  PreparedVaultTransaction,
  RequestOptions,
  SessionSigner,
  SignedMessage,
  SignedOrder,
  SignedPerpRequest,
  Ticker,
  Trade,
  TransactionSigner,
  TypedData,
  VaultTransaction,
  VaultTransactionView,
} from './perp-types.ts';

export const PERP_PATH_ROOT = '/v4/public/trader';

/** Codes whose request may be retried as is: 50001/50002 (the outcome may be unknown: see `data.outcome`). */
const RETRYABLE_CODES = new Set([50001, 50002]);

/** `instruments` or `/v4/public/trader/instruments` → the absolute path. */
function endpointPath(path: string): string {
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

function unwrap<T>(res: PerpResponse<T>): T {
  if (res.code !== 0) throw new PerpApiError(res);
  return res.data as T;
}

/** An unsigned call (GET time and the two key-creation calls). */
async function publicCall<T>(baseUrl: string, method: string, path: string, body: unknown, f: typeof fetch): Promise<T> {
  const text = bodyText(body);
  const res = await f(baseUrl.replace(/\/+$/, '') + endpointPath(path), {
    method,
    headers: text === '' ? {} : { 'content-type': 'application/json' },
    body: text === '' ? undefined : text,
  });
  return unwrap(await readResponse<T>(res));
}

/** A signed order message names a clientOrderId: the server applies it once, so it may be resent. */
function hasClientOrderId(message: Record<string, unknown>): boolean {
  const id = message.clientOrderId;
  return typeof id === 'string' && id !== '' && !/^0x0*$/.test(id);
}

/** How one call is sent: signed or not, and whether it may be repeated. */
interface SendOptions extends RequestOptions {
  unsigned?: boolean;
  idempotent: boolean;
  retries?: number;
  retryDelayMs?: number;
}

export class PerpClient {
  readonly #opts: Required<Omit<PerpClientOptions, 'fetch' | 'retry' | 'validateOrders'>> & { fetch: typeof fetch };
  readonly #retry: ResolvedRetry;
  readonly #validate: boolean;
  /** The last X-Api-Ts this client used: see `nextTs`. */
  #lastTs = 0;
  /** Server clock minus local clock (ms), from `syncTime()`. */
  #offset = 0;
  #instruments?: Promise<Map<string, Instrument>>;

  constructor(opts: PerpClientOptions) {
    this.#opts = {
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
      apiKey: opts.apiKey,
      apiSecret: opts.apiSecret,
      chainId: opts.chainId,
      now: opts.now ?? Date.now,
      fetch: opts.fetch ?? fetch,
    };
    this.#retry = resolveRetry(opts.retry);
    this.#validate = opts.validateOrders ?? true;
  }

  get apiKey(): string {
    return this.#opts.apiKey;
  }

  /** Server clock minus local clock in ms (0 until `syncTime()`). */
  get clockOffsetMs(): number {
    return this.#offset;
  }

  /** The local clock corrected by the server's offset. */
  #now(): number {
    return this.#opts.now() + this.#offset;
  }

  /**
   * Strictly increasing timestamps: two identical requests in the same millisecond would carry the
   * same signature, and the server refuses the second as a replay (20007).
   */
  #nextTs(): number {
    this.#lastTs = Math.max(this.#now(), this.#lastTs + 1);
    return this.#lastTs;
  }

  /**
   * Measures the server's clock with `GET time` and uses the offset for every X-Api-Ts from now on
   * (the server refuses timestamps 45 s away from its clock). Answers the offset in ms.
   */
  async syncTime(): Promise<number> {
    const before = this.#opts.now();
    const serverTime = (await this.getServerTime()).serverTime;
    const after = this.#opts.now();
    this.#offset = Math.round(serverTime - (before + after) / 2);
    // A clock moved back must not reuse a timestamp already signed.
    return this.#offset;
  }

  /** Builds the signed request without sending it (for curl, debugging and tests). */
  sign(method: string, path: string, opts: RequestOptions = {}): SignedPerpRequest {
    const query = opts.query ? canonicalQuery(opts.query) : '';
    const requestPath = signedUri(endpointPath(path), query);
    const body = bodyText(opts.body);
    const ts = String(opts.ts ?? this.#nextTs());
    const headers: Record<string, string> = {
      'X-Api-Key': this.#opts.apiKey,
      'X-Api-Sign': signPerpRequest(this.#opts.apiSecret, { ts, method, requestPath, body }),
      'X-Api-Ts': ts,
      'X-Chain-Id': String(this.#opts.chainId),
    };
    if (body !== '') headers['content-type'] = 'application/json';
    if (opts.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;
    return { url: this.#opts.baseUrl + requestPath, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  /** Sends one signed request (no retry) and returns the envelope (with the rate-limit headers) whatever its code. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<PerpResponse<T>> {
    const req = this.sign(method, path, opts);
    const res = await this.#opts.fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    return readResponse<T>(res);
  }

  async #requestUnsigned<T>(method: string, path: string, opts: RequestOptions): Promise<PerpResponse<T>> {
    const query = opts.query ? canonicalQuery(opts.query) : '';
    const text = bodyText(opts.body);
    const headers: Record<string, string> = text === '' ? {} : { 'content-type': 'application/json' };
    if (opts.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;
    const res = await this.#opts.fetch(this.#opts.baseUrl + signedUri(endpointPath(path), query), { method, headers, body: text === '' ? undefined : text });
    return readResponse<T>(res);
  }

  /**
   * Sends, signing each attempt afresh, and retries an idempotent call after a network failure, a
   * 429 (after Retry-After), a 503 or a 50001/50002; answers `data` or throws PerpApiError.
   */
  async #send<T>(method: string, path: string, opts: SendOptions): Promise<T> {
    const policy: ResolvedRetry = {
      ...this.#retry,
      retries: opts.retries ?? this.#retry.retries,
      baseDelayMs: opts.retryDelayMs ?? this.#retry.baseDelayMs,
      // A per-call first wait is kept as documented (doubled each time, no jitter): callers size it
      // to outlast something, such as an engine recovery.
      random: opts.retryDelayMs !== undefined ? () => 1 : this.#retry.random,
    };
    const req: RequestOptions = { query: opts.query, body: opts.body, idempotencyKey: opts.idempotencyKey };
    for (let attempt = 0; ; attempt++) {
      let res: PerpResponse<T>;
      try {
        res = opts.unsigned ? await this.#requestUnsigned<T>(method, path, req) : await this.request<T>(method, path, req);
      } catch (err) {
        if (isAbort(err)) throw err;
        // No answer: after a reset the request may have arrived, after a refusal it never left.
        const unsent = neverSent(err);
        if ((!opts.idempotent && !unsent) || attempt >= policy.retries) {
          throw new TokexNetworkError(`${method} ${endpointPath(path)}: no answer (${(err as Error).message})`, unsent ? false : 'unknown', { cause: err });
        }
        await sleep(retryDelayMs(policy, attempt)!);
        continue;
      }
      if (res.code === 0) return res.data as T;
      const endpoint = `${method} ${endpointPath(path)}`;
      const retryable = isRetryableStatus(res.httpStatus) || RETRYABLE_CODES.has(res.code);
      if (!opts.idempotent || !retryable || attempt >= policy.retries) throw new PerpApiError(res, endpoint);
      const wait = retryDelayMs(policy, attempt, res.retryAfter);
      if (wait === undefined) throw new PerpApiError(res, endpoint);
      await sleep(wait);
    }
  }

  /**
   * Like request, but returns `data` and throws PerpApiError unless the code is 0. GETs and calls
   * with an idempotency key are retried (see PerpClientOptions.retry).
   */
  async call<T = unknown>(method: string, path: string, opts: Omit<RequestOptions, 'ts'> = {}): Promise<T> {
    const idempotent = method.toUpperCase() === 'GET' || opts.idempotencyKey !== undefined;
    return this.#send<T>(method.toUpperCase(), path, { ...opts, idempotent });
  }

  get<T = unknown>(path: string, query?: Query): Promise<T> {
    return this.call<T>('GET', path, { query });
  }

  post<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('POST', path, { body });
  }

  patch<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('PATCH', path, { body });
  }

  delete<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('DELETE', path, { body });
  }

  /** A state-changing call under an Idempotency-Key (a fresh one unless given), kept across its retries. */
  #idempotent<T>(method: string, path: string, body: unknown, opts: IdempotentCallOptions): Promise<T> {
    const idempotencyKey = opts.idempotencyKey ?? randomId();
    return this.#send<T>(method, path, { body, idempotencyKey, idempotent: true, retries: opts.retries, retryDelayMs: opts.retryDelayMs });
  }

  /** Every row of a list endpoint, page after page (see `paginate`). */
  paginate<R>(list: (query: { page: number; limit: number }) => Promise<Page<R>>, opts: PaginateOptions = {}): AsyncGenerator<R, void, undefined> {
    return paginate(list, opts);
  }

  // ---------------------------------------------------------------- market data

  /** `GET time` (no signature): the server's clock in ms. */
  getServerTime(): Promise<{ serverTime: number }> {
    return this.#send('GET', 'time', { unsigned: true, idempotent: true });
  }

  /** `GET instruments`: every instrument, or one `symbol`; also refreshes the cache the order checks use. */
  async getInstruments(query: { symbol?: string } = {}): Promise<Instrument[]> {
    const list = await this.#send<Instrument[]>('GET', 'instruments', { query, idempotent: true });
    if (query.symbol === undefined) this.#instruments = Promise.resolve(new Map(list.map((i) => [i.symbol, i])));
    return list;
  }

  /** `GET depth`: the book of `symbol`, `limit` levels a side. */
  getDepth(query: { symbol: string; limit?: number }): Promise<Depth> {
    return this.#send('GET', 'depth', { query, idempotent: true });
  }

  /** `GET tickers`: 24 h statistics, mark, index and funding of every symbol or one. */
  getTickers(query: { symbol?: string } = {}): Promise<Ticker[]> {
    return this.#send('GET', 'tickers', { query, idempotent: true });
  }

  /** `GET klines`: candles of `symbol` (`type` trade, mark or index as the API documents). */
  getKlines(query: { symbol: string; interval: KlineIntervalName; type?: string; startTime?: number; endTime?: number; limit?: number }): Promise<Kline[]> {
    return this.#send('GET', 'klines', { query, idempotent: true });
  }

  /** `GET market-trades`: the public trades of `symbol`, newest first. */
  getMarketTrades(query: { symbol: string } & PageQuery): Promise<Page<MarketTrade>> {
    return this.#send('GET', 'market-trades', { query, idempotent: true });
  }

  /** `GET funding-rates`: the funding history of `symbol`. */
  getFundingRates(query: { symbol: string; startTime?: number; endTime?: number; limit?: number }): Promise<FundingRate[]> {
    return this.#send('GET', 'funding-rates', { query, idempotent: true });
  }

  /** `GET insurance-fund` (no signature): balance, fees received, bad debt paid, open bad debt and a page of movements. */
  getInsuranceFund(query: PageQuery = {}): Promise<InsuranceFund> {
    return this.#send('GET', 'insurance-fund', { query, unsigned: true, idempotent: true });
  }

  // ---------------------------------------------------------------- API keys

  /** `POST api-keys/prepare` (no signature): the typed data the wallet signs to create a key. */
  prepareApiKey(input: { address: string; label?: string; permissions: PerpPermission[] }): Promise<{ typedData: TypedData }> {
    return this.#send('POST', 'api-keys/prepare', { body: input, unsigned: true, idempotent: false });
  }

  /** `POST api-keys` (no signature): creates the key the signed message names; the secret is in this answer only. */
  submitApiKey(input: SignedMessage): Promise<CreatedApiKey> {
    return this.#send('POST', 'api-keys', { body: input, unsigned: true, idempotent: false });
  }

  /** `GET api-keys`: the wallet's keys (never their secrets). */
  listApiKeys(): Promise<ApiKeyInfo[]> {
    return this.#send('GET', 'api-keys', { idempotent: true });
  }

  /** `PATCH api-keys/{apiKey}`: a new label or permissions. */
  updateApiKey(apiKey: string, input: { label?: string; permissions?: PerpPermission[] }): Promise<ApiKeyInfo> {
    return this.#send('PATCH', `api-keys/${encodeURIComponent(apiKey)}`, { body: input, idempotent: false });
  }

  /** `DELETE api-keys/{apiKey}`. */
  deleteApiKey(apiKey: string): Promise<{ apiKey: string; deleted: boolean }> {
    return this.#send('DELETE', `api-keys/${encodeURIComponent(apiKey)}`, { idempotent: false });
  }

  // ---------------------------------------------------------------- trading

  /** The instruments, fetched once per client (refreshed by `getInstruments()`). */
  async instrument(symbol: string): Promise<Instrument | undefined> {
    this.#instruments ??= this.#send<Instrument[]>('GET', 'instruments', { idempotent: true }).then(
      (list) => new Map(list.map((i) => [i.symbol, i])),
      (err) => {
        this.#instruments = undefined;
        throw err;
      },
    );
    return (await this.#instruments).get(symbol);
  }

  /**
   * Refuses, before anything is sent, an order the venue would refuse for its shape: a LIMIT
   * without price, a size or price that is not a positive decimal, off the lot or tick, or outside
   * the instrument's size bounds. An unknown symbol is left to the server.
   */
  async validateOrder(order: OrderInput): Promise<void> {
    if (order.type === 'LIMIT' && (order.price === undefined || order.price === '')) throw new TokexValidationError('price', 'required for a LIMIT order');
    if (!isDecimalString(order.size) || compareDecimal(order.size, '0') <= 0) throw new TokexValidationError('size', 'a positive decimal string');
    if (order.price !== undefined && (!isDecimalString(order.price) || compareDecimal(order.price, '0') <= 0)) throw new TokexValidationError('price', 'a positive decimal string');
    // The lot and tick checks are a convenience: when the instruments cannot be read, the server decides.
    const inst = await this.instrument(order.symbol).catch(() => undefined);
    if (!inst) return;
    if (!isMultipleOf(order.size, inst.lotSize)) throw new TokexValidationError('size', `${order.size} is not a multiple of the lot size ${inst.lotSize}`);
    if (compareDecimal(order.size, inst.minSize) < 0) throw new TokexValidationError('size', `below the minimum size ${inst.minSize}`);
    if (compareDecimal(order.size, inst.maxSize) > 0) throw new TokexValidationError('size', `above the maximum size ${inst.maxSize}`);
    if (order.price !== undefined && !isMultipleOf(order.price, inst.tickSize)) throw new TokexValidationError('price', `${order.price} is off the tick: not a multiple of the tick size ${inst.tickSize}`);
  }

  /** `POST orders/build`: the EIP-712 order for the wallet to sign, checked first (`validateOrder`) unless turned off. */
  async buildOrder(order: OrderInput): Promise<BuiltOrder> {
    if (this.#validate) await this.validateOrder(order);
    return this.#send('POST', 'orders/build', { body: order, idempotent: false });
  }

  /** `POST orders`: places a signed order; resent on failure when it names a clientOrderId. */
  submitOrder<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return this.#send('POST', 'orders', { body: input, idempotent: hasClientOrderId(input.message) });
  }

  /** `POST orders/fill`: an immediate-or-cancel taker order up to its worst price; nothing rests. */
  fillOrder<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return this.#send('POST', 'orders/fill', { body: input, idempotent: hasClientOrderId(input.message) });
  }

  /** `POST positions/close`: a signed reduce-only order (see `closePosition` for the whole flow). */
  submitClosePosition<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return this.#send('POST', 'positions/close', { body: input, idempotent: hasClientOrderId(input.message) });
  }

  /** `DELETE orders/{orderId}`: the order, CANCELED. Idempotent (see IdempotentCallOptions). */
  cancelOrder<T = OrderView>(orderId: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('DELETE', `orders/${encodeURIComponent(orderId)}`, undefined, opts);
  }

  /** `POST orders/batch-cancel` by ids or by symbol: `{canceled, failed}`. Idempotent. */
  batchCancel<T = BatchCancelResult>(input: { orderIds: string[] } | { symbol: string }, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'orders/batch-cancel', input, opts);
  }

  /** `POST positions/adjust`: leverage (and margin mode while flat). Idempotent. */
  setLeverage<T = Position>(input: { symbol: string; leverage: number; marginMode?: 'cross' | 'isolated' }, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'positions/adjust', input, opts);
  }

  /** `POST positions/margin`: moves `amount` USD into (positive) or out of (negative) an isolated position. Idempotent. */
  adjustMargin<T = Position>(input: { symbol: string; amount: string }, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'positions/margin', input, opts);
  }

  /**
   * `POST orders/cancel-all-after`: the dead man's switch. Every open order of the account is
   * cancelled `timeoutMs` (5 000 to 86 400 000) from now unless called again; 0 disarms. Idempotent.
   */
  cancelAllAfter<T = CancelAllAfterStatus>(timeoutMs: number, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'orders/cancel-all-after', { timeoutMs }, opts);
  }

  // ---------------------------------------------------------------- account and history

  /** `GET account`: balances, equity and margin levels. */
  getAccount(): Promise<AccountSummary> {
    return this.#send('GET', 'account', { idempotent: true });
  }

  /**
   * `GET account/proof`: the account's leaf of the latest proof-of-reserves tree and its Merkle
   * path (docs/proof-of-reserves.md; examples/verify-reserves.ts checks it on chain).
   */
  getAccountProof(): Promise<AccountProof> {
    return this.#send('GET', 'account/proof', { idempotent: true });
  }

  /** `GET account/assets`. */
  getAssets(): Promise<AccountAsset[]> {
    return this.#send('GET', 'account/assets', { idempotent: true });
  }

  /** `GET positions`: the account's positions, or the one of `symbol`. */
  getPositions(query: { symbol?: string; page?: number; limit?: number } = {}): Promise<Page<Position>> {
    return this.#send('GET', 'positions', { query, idempotent: true });
  }

  /** `GET account/deposits`: vault deposits as the indexer saw them, newest first. */
  listDeposits(query: PageQuery = {}): Promise<Page<AccountDeposit>> {
    return this.#send('GET', 'account/deposits', { query, idempotent: true });
  }

  /**
   * `POST account/withdrawals` (a key with TRANSFER): reserves `amount` USD at once and has the
   * margin vault pay it to the key's own wallet. `clientWithdrawalId` names the withdrawal: sending
   * it again answers the same withdrawal (`duplicate: true`), so the call is retried with it after a
   * network failure, a 429, a 503 or a 50001/50002. Poll `listWithdrawals` (or `waitForWithdrawal`) for `COMPLETED`.
   */
  withdraw(input: { amount: string; clientWithdrawalId: string }, opts: { retries?: number; retryDelayMs?: number } = {}): Promise<PerpWithdrawal> {
    return this.#send('POST', 'account/withdrawals', {
      body: { amount: input.amount, clientWithdrawalId: input.clientWithdrawalId },
      idempotent: true,
      retries: opts.retries,
      retryDelayMs: opts.retryDelayMs,
    });
  }

  /** `GET account/withdrawals`: the account's withdrawals, newest first. */
  listWithdrawals(query: { status?: PerpWithdrawal['status'] } & PageQuery = {}): Promise<Page<PerpWithdrawal>> {
    return this.#send('GET', 'account/withdrawals', { query, idempotent: true });
  }

  /** Polls `listWithdrawals` until the withdrawal `clientWithdrawalId` is COMPLETED or FAILED (default 60 s). */
  async waitForWithdrawal(clientWithdrawalId: string, opts: { timeoutMs?: number; pollMs?: number; onWait?: (state: string) => void } = {}): Promise<PerpWithdrawal> {
    const until = Date.now() + (opts.timeoutMs ?? 60_000);
    for (;;) {
      const page = await this.listWithdrawals({ limit: 100 });
      const w = page.rows.find((r) => r.clientWithdrawalId === clientWithdrawalId);
      if (w && (w.status === 'COMPLETED' || w.status === 'FAILED')) return w;
      opts.onWait?.(w?.status ?? 'not listed yet');
      if (Date.now() > until) throw new TokexTimeoutError(`withdrawal ${clientWithdrawalId} is ${w?.status ?? 'not listed'} after the wait`, w?.status ?? 'not listed yet');
      await sleep(opts.pollMs ?? 250);
    }
  }

  /** `GET account/transactions`: the account's ledger (`type`, `symbol` filters). */
  listTransactions(query: { type?: string; symbol?: string } & PageQuery = {}): Promise<Page<AccountTransaction>> {
    return this.#send('GET', 'account/transactions', { query, idempotent: true });
  }

  /** `GET orders/open`. */
  getOpenOrders(query: { symbol?: string } & PageQuery = {}): Promise<Page<OrderView>> {
    return this.#send('GET', 'orders/open', { query, idempotent: true });
  }

  /** `GET orders/history`. */
  listOrderHistory(query: { symbol?: string; status?: OrderStatus } & PageQuery = {}): Promise<Page<OrderView>> {
    return this.#send('GET', 'orders/history', { query, idempotent: true });
  }

  /** `GET trades`: the account's fills. */
  listTrades(query: { symbol?: string; orderId?: string } & PageQuery = {}): Promise<Page<Trade>> {
    return this.#send('GET', 'trades', { query, idempotent: true });
  }

  // ---------------------------------------------------------------- approve and deposit through the API

  /** `POST approve/prepare`: the unsigned ERC-20 approve of the margin vault for `amount`. */
  prepareApprove(input: { address: string; amount: string }): Promise<PreparedVaultTransaction> {
    return this.#send('POST', 'approve/prepare', { body: input, idempotent: false });
  }

  /** `POST approve/submit`: broadcasts the signed approve and answers once mined (or still pending). */
  submitApprove(input: { signedTransaction: `0x${string}` }): Promise<VaultTransactionView> {
    return this.#send('POST', 'approve/submit', { body: input, idempotent: false });
  }

  /** `GET approve/{txHash}`. */
  getApprove(txHash: string): Promise<VaultTransactionView> {
    return this.#send('GET', `approve/${encodeURIComponent(txHash)}`, { idempotent: true });
  }

  /** `POST deposit/prepare`: the unsigned vault deposit of `amount`. */
  prepareDeposit(input: { address: string; amount: string }): Promise<PreparedVaultTransaction> {
    return this.#send('POST', 'deposit/prepare', { body: input, idempotent: false });
  }

  /** `POST deposit/submit`: broadcasts the signed deposit and answers once mined (or still pending). */
  submitDeposit(input: { signedTransaction: `0x${string}` }): Promise<VaultTransactionView> {
    return this.#send('POST', 'deposit/submit', { body: input, idempotent: false });
  }

  /** `GET deposit/{txHash}`. */
  getDeposit(txHash: string): Promise<VaultTransactionView> {
    return this.#send('GET', `deposit/${encodeURIComponent(txHash)}`, { idempotent: true });
  }

  // ---------------------------------------------------------------- liquidity

  /** `POST liquidity/add` (TRANSFER): moves `amount` USD of withdrawable collateral into the pool for shares. Idempotent. */
  addLiquidity<T = LiquidityMove>(amount: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'liquidity/add', { amount }, opts);
  }

  /** `POST liquidity/remove` (TRANSFER): burns `shares` for their value once the lock-up has ended. Idempotent. */
  removeLiquidity<T = LiquidityMove>(shares: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'liquidity/remove', { shares }, opts);
  }

  /** `GET liquidity/positions`: the account's shares, their value, PnL and lock-up, with the pool's equity and shares. */
  liquidityPositions<T = LiquidityPosition>(): Promise<T> {
    return this.#send<T>('GET', 'liquidity/positions', { idempotent: true });
  }

  /** `GET liquidity/history`: the account's additions and removals, newest first. */
  liquidityHistory<T = Page<LiquidityHistoryRow>>(query: PageQuery = {}): Promise<T> {
    return this.#send<T>('GET', 'liquidity/history', { query, idempotent: true });
  }

  // ---------------------------------------------------------------- flows with a wallet

  /**
   * An order signed by `account` (the wallet the key is bound to): `orders/build`, then the wallet
   * signs the EIP-712 order (no transaction, no gas). Answers what `POST orders` (or `orders/fill`,
   * `positions/close`) takes.
   */
  async signOrder(account: TypedDataSigner, order: OrderInput): Promise<SignedOrder> {
    const sessionEnd = (account as Partial<SessionSigner>).expiresAt;
    // A session may not sign beyond its own life: the default ten minutes end with the session.
    if (order.expiry === undefined && typeof sessionEnd === 'number') order = { ...order, expiry: Math.min(this.#now() + 10 * 60_000, sessionEnd) };
    const built = await this.buildOrder(order);
    if (String(built.typedData.domain.chainId) !== String(this.#opts.chainId)) {
      throw new Error(`perp API serves chain ${built.typedData.domain.chainId}, not ${this.#opts.chainId}`);
    }
    const signature = await account.signTypedData(built.typedData);
    return { message: built.typedData.message, signature, orderHash: built.orderHash };
  }

  /** Builds, signs and places an order: the answer carries its status and fills so far. */
  async placeOrder<T = PlacedOrder>(account: TypedDataSigner, order: OrderInput): Promise<T> {
    const { message, signature } = await this.signOrder(account, order);
    return this.submitOrder<T>({ message, signature });
  }

  /**
   * Closes `size` (default: all) of the account's position on `symbol` at market with a signed
   * reduce-only order; `worstPrice` bounds the fills.
   */
  async closePosition<T = PlacedOrder>(account: TypedDataSigner, opts: { symbol: string; size?: string; worstPrice?: string }): Promise<T> {
    const positions = await this.getPositions({ symbol: opts.symbol });
    const position = positions.rows.find((p) => p.symbol === opts.symbol);
    if (!position || position.side === 'FLAT') throw new Error(`no open ${opts.symbol} position`);
    const order: OrderInput = {
      symbol: opts.symbol,
      side: position.side === 'LONG' ? 'SELL' : 'BUY',
      type: 'MARKET',
      size: opts.size ?? position.size,
      reduceOnly: true,
      ...(opts.worstPrice !== undefined ? { price: opts.worstPrice } : {}),
    };
    const { message, signature } = await this.signOrder(account, order);
    return this.submitClosePosition<T>({ message, signature });
  }

  /** `POST one-click/prepare`: the EnableSession typed data for the wallet to sign (nothing is stored). */
  async prepareOneClick(input: { sessionAddress: string; expiresAt: number }): Promise<{ typedData: EnableSessionTypedData }> {
    return this.#send('POST', 'one-click/prepare', { body: input, idempotent: false });
  }

  /** `POST one-click/enable`: the signed EnableSession message (see `enableOneClick` for the whole flow). */
  submitOneClick(input: SignedMessage): Promise<OneClickStatus> {
    return this.#send('POST', 'one-click/enable', { body: input, idempotent: false });
  }

  /**
   * Enables `sessionAddress` as the wallet's session signer until `expiresAt` (ms, at most 30 days
   * ahead): `one-click/prepare`, checks that the typed data is what was asked on this client's chain,
   * the wallet signs it (no transaction, no gas), `one-click/enable`. It replaces any other session.
   */
  async enableOneClick(wallet: TypedDataSigner, input: { sessionAddress: string; expiresAt: number }): Promise<OneClickStatus> {
    const { typedData } = await this.prepareOneClick(input);
    const m = typedData.message;
    if (String(typedData.domain.chainId) !== String(this.#opts.chainId)) throw new Error(`perp API serves chain ${typedData.domain.chainId}, not ${this.#opts.chainId}`);
    if (typedData.primaryType !== 'EnableSession' || m.account.toLowerCase() !== wallet.address.toLowerCase() || m.session.toLowerCase() !== input.sessionAddress.toLowerCase() || m.expiresAt !== String(input.expiresAt)) {
      throw new Error('one-click/prepare answered another authorisation than the one asked; not signed');
    }
    const signature = await wallet.signTypedData(typedData);
    return this.submitOneClick({ message: m, signature });
  }

  /** `GET one-click`: the wallet's session signer as it stands. */
  getOneClick(): Promise<OneClickStatus> {
    return this.#send('GET', 'one-click', { idempotent: true });
  }

  /** `POST one-click/disable`: revokes the session signer at once (idempotent). */
  disableOneClick(): Promise<OneClickStatus> {
    return this.#send('POST', 'one-click/disable', { idempotent: false });
  }

  /**
   * A fresh session key, enabled for `ttlMs` (default 24 h, at most 30 days): pass it to
   * `placeOrder`, `signOrder` or `closePosition` instead of the wallet.
   */
  async startOneClickSession(wallet: TypedDataSigner, opts: { ttlMs?: number } = {}): Promise<SessionSigner> {
    const session = PerpClient.newSessionSigner(this.#now() + (opts.ttlMs ?? 24 * 60 * 60_000));
    await this.enableOneClick(wallet, { sessionAddress: session.address, expiresAt: session.expiresAt });
    return session;
  }

  /** A session key (a new random private key, or `privateKey`) that will be enabled until `expiresAt`. */
  static newSessionSigner(expiresAt: number, privateKey: `0x${string}` = generatePrivateKey()): SessionSigner {
    const account = privateKeyToAccount(privateKey);
    const signer = { address: account.address, expiresAt, signTypedData: (typedData: any) => account.signTypedData(typedData) };
    // Not enumerable: a logged or serialised signer does not show its key.
    return Object.defineProperty(signer, 'privateKey', { value: privateKey, enumerable: false }) as SessionSigner;
  }

  /**
   * One vault transaction through the API: `approve/prepare` or `deposit/prepare` answers the
   * unsigned EIP-1559 transaction, the wallet signs it (the API never holds a key), and
   * `…/submit` checks it is that transaction, broadcasts it and answers once it is mined (or still
   * `pending` after the API's wait).
   */
  async vaultTransaction(wallet: TransactionSigner, kind: 'approve' | 'deposit', amount: string): Promise<VaultTransaction> {
    const prepared = kind === 'approve' ? await this.prepareApprove({ address: wallet.address, amount }) : await this.prepareDeposit({ address: wallet.address, amount });
    const t = prepared.transaction;
    const signedTransaction = await wallet.signTransaction({
      type: 'eip1559',
      chainId: Number(t.chainId),
      to: t.to,
      data: t.data,
      value: BigInt(t.value),
      nonce: Number(t.nonce),
      gas: BigInt(t.gas),
      maxFeePerGas: BigInt(t.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(t.maxPriorityFeePerGas),
    });
    const submitted = kind === 'approve' ? await this.submitApprove({ signedTransaction }) : await this.submitDeposit({ signedTransaction });
    return submitted as unknown as VaultTransaction;
  }

  /**
   * Approves the margin vault for `amount` of collateral and deposits it, each through the API's
   * prepare → sign → submit; then waits until the engine has credited the deposit (the perp indexer
   * follows the vault after PERP_CONFIRMATIONS blocks).
   */
  async depositCollateral(wallet: TransactionSigner, amount: string, opts: { timeoutMs?: number; onWait?: (state: string) => void } = {}): Promise<VaultTransaction> {
    opts.onWait?.('approving');
    const approve = await this.vaultTransaction(wallet, 'approve', amount);
    if (approve.status !== 'mined') throw new Error(`approve ${approve.txHash} is ${approve.status}`);
    opts.onWait?.('depositing');
    const deposit = await this.vaultTransaction(wallet, 'deposit', amount);
    if (deposit.status !== 'mined') throw new Error(`deposit ${deposit.txHash} is ${deposit.status}`);
    const until = Date.now() + (opts.timeoutMs ?? 30_000);
    for (;;) {
      const list = await this.listDeposits({ limit: 100 });
      const row = list.rows.find((d) => d.txHash.toLowerCase() === deposit.txHash.toLowerCase());
      if (row?.status === 'CREDITED') return deposit;
      // The engine will never credit it (docs/perp-api.md): waiting longer changes nothing.
      if (row?.status === 'REFUSED') throw new Error(`deposit ${deposit.txHash} refused by the venue${row.reason ? `: ${row.reason}` : ''}`);
      if (Date.now() > until) throw new TokexTimeoutError(`deposit ${deposit.txHash} not credited yet`, row?.status ?? 'waiting for the indexer');
      opts.onWait?.(row?.status ?? 'waiting for the indexer');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** `GET insurance-fund` (no signature): balance, fees received, bad debt paid, open bad debt and a page of movements. */
  static async insuranceFund<T = unknown>(
    baseUrl: string,
    query: { page?: number; limit?: number; startTime?: number; endTime?: number } = {},
    opts: { fetch?: typeof fetch } = {},
  ): Promise<T> {
    const q = canonicalQuery(query);
    return publicCall<T>(baseUrl, 'GET', q === '' ? 'insurance-fund' : `insurance-fund?${q}`, undefined, opts.fetch ?? fetch);
  }

  /** `GET time` (no signature). */
  static async serverTime(baseUrl: string, opts: { fetch?: typeof fetch } = {}): Promise<number> {
    return (await publicCall<{ serverTime: number }>(baseUrl, 'GET', 'time', undefined, opts.fetch ?? fetch)).serverTime;
  }

  /**
   * Creates a key for `account`'s wallet: `api-keys/prepare`, the wallet signs the typed data (no
   * transaction, no gas), `POST api-keys`. The secret is in the answer only: keep it.
   */
  static async createApiKey(
    baseUrl: string,
    account: TypedDataSigner,
    opts: { label?: string; permissions: PerpPermission[]; chainId?: number | string; fetch?: typeof fetch },
  ): Promise<CreatedApiKey> {
    const f = opts.fetch ?? fetch;
    const prepared = await publicCall<{ typedData: { domain: { chainId: number }; message: Record<string, unknown> } }>(
      baseUrl,
      'POST',
      'api-keys/prepare',
      { address: account.address, label: opts.label ?? '', permissions: opts.permissions },
      f,
    );
    // Signing a domain of another chain than the one the caller meant would create a key there.
    if (opts.chainId !== undefined && String(prepared.typedData.domain.chainId) !== String(opts.chainId)) {
      throw new Error(`perp API serves chain ${prepared.typedData.domain.chainId}, not ${opts.chainId}`);
    }
    const signature = await account.signTypedData(prepared.typedData);
    return publicCall<CreatedApiKey>(baseUrl, 'POST', 'api-keys', { message: prepared.typedData.message, signature }, f);
  }

  /** A client for a key just created (`createApiKey`'s answer). */
  static forKey(baseUrl: string, created: { apiKey: string; apiSecret: string }, chainId: number | string, opts: { now?: () => number; fetch?: typeof fetch } = {}): PerpClient {
    return new PerpClient({ baseUrl, apiKey: created.apiKey, apiSecret: created.apiSecret, chainId, ...opts });
  }
}
