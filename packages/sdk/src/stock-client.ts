/**
 * The tokenized-stock API client. Every request is signed as contract.md §A says (lower-case hex
 * HMAC-SHA256 over `METHOD\nURI\nTS\nNONCE\nBODY`). One typed method per endpoint (STOCK_ROUTES
 * lists them), retries of GETs, a clock synchronised from the server's Date header, and client-side
 * refusals of orders the API would refuse. The secret stays inside the client: it is never part of
 * an error or a returned object.
 */
import { canonicalQuery, randomId, signedUri, signStockRequest, type Query } from './signing.ts';
import type { AnyTypedDataSigner } from './signer-types.ts';
import { StockApiError, TokexNetworkError, TokexValidationError } from './errors.ts';
import { isAbort, isRetryableStatus, neverSent, parseRetryAfter, resolveRetry, retryDelayMs, sleep, type ResolvedRetry } from './retry-policy.ts';
import { paginate, type PaginateOptions } from './pagination.ts';
import type {
  Calldata,
  OneClickEnabled,
  OneClickPrepared,
  OneClickState,
  OperationView,
  RecordedOperationTx,
  RecordedOrderTx,
  RelayedSend,
  StockClientOptions,
  StockOrderInput,
  StockOrderView,
  StockOrderWithDepositInput,
  StockPage,
  StockPageQuery,
  StockQuote,
  StockResponse,
  StockSymbol,
  TokenAmountInput,
} from './stock-types.ts';

export interface SignedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** What the API's validation would refuse in an order, found before sending (contract.md §A Values). */
export function validateStockOrder(order: StockOrderInput): void {
  const side = String(order.side ?? '').toLowerCase();
  const type = String(order.type ?? '').toLowerCase();
  if (side !== 'buy' && side !== 'sell') throw new TokexValidationError('side', 'Buy or Sell');
  if (type !== 'market' && type !== 'limit') throw new TokexValidationError('type', 'Market or Limit');
  if (type === 'market' && side === 'buy' && (order.notional === undefined || order.notional === '')) throw new TokexValidationError('notional', 'required for a market buy');
  if (type === 'limit') {
    if (order.timeInForce === undefined) throw new TokexValidationError('timeInForce', 'required for a limit order (DAY)');
    if (String(order.timeInForce).toUpperCase() !== 'DAY') throw new TokexValidationError('timeInForce', 'only DAY is accepted');
    if (order.price === undefined || order.price === '') throw new TokexValidationError('price', 'required for a limit order');
  }
}

/** A path segment: ids and symbols are encoded so they cannot change the path. */
const seg = encodeURIComponent;

/**
 * A One Click send's `Idempotency-Key`. The SDK names every send with a fresh one unless given, so
 * its retries (network failure, 429, 503) are answered with the first attempt's transaction, never
 * a second one. Pass your own to retry a send across restarts of your program.
 */
export interface SendOptions {
  idempotencyKey?: string;
}

function sendKey(opts: SendOptions): { idempotencyKey: string } {
  return { idempotencyKey: opts.idempotencyKey ?? globalThis.crypto.randomUUID() };
}

export class StockClient {
  readonly #opts: Required<Omit<StockClientOptions, 'fetch' | 'retry' | 'validateOrders'>> & { fetch: typeof fetch };
  readonly #retry: ResolvedRetry;
  readonly #validate: boolean;
  /** Server clock minus local clock (ms), from `syncTime()`. */
  #offset = 0;

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
    this.#retry = resolveRetry(opts.retry);
    this.#validate = opts.validateOrders ?? true;
  }

  /** Server clock minus local clock in ms (0 until `syncTime()`). */
  get clockOffsetMs(): number {
    return this.#offset;
  }

  #now(): number {
    return this.#opts.now() + this.#offset;
  }

  /** Builds the signed request without sending it (useful for curl, debugging and tests). */
  sign(method: string, path: string, opts: { query?: Query; body?: unknown; nonce?: string; ts?: number; idempotencyKey?: string } = {}): SignedRequest {
    if (!path.startsWith('/api/v1/')) throw new Error('path must start with /api/v1/');
    const query = opts.query ? canonicalQuery(opts.query) : '';
    const uri = signedUri(path, query);
    const body = opts.body === undefined ? '' : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const ts = String(opts.ts ?? this.#now());
    const nonce = opts.nonce ?? randomId();
    const sign = signStockRequest(this.#opts.apiSecret, { method, uri, ts, nonce, body });
    const headers: Record<string, string> = {
      'x-api-key': this.#opts.apiKey,
      'x-api-sign': sign,
      'x-api-ts': ts,
      'x-api-nonce': nonce,
      'x-api-chain-id': String(this.#opts.chainId),
      'x-api-p': this.#opts.product,
    };
    if (body !== '') headers['content-type'] = 'application/json';
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    return { url: this.#opts.baseUrl + uri, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  /** Sends one signed request (no retry) and returns the envelope whatever its code. */
  async request<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown; idempotencyKey?: string } = {}): Promise<StockResponse<T>> {
    return (await this.#exchange<T>(method, path, opts)).envelope;
  }

  /** One request; besides the envelope (as the API answered it), what the headers said. */
  async #exchange<T>(method: string, path: string, opts: { query?: Query; body?: unknown; idempotencyKey?: string }): Promise<{ envelope: StockResponse<T>; retryAfter?: number; serverDate?: number }> {
    const req = this.sign(method, path, opts);
    const res = await this.#opts.fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
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

  /**
   * Like request, but returns `data` and throws StockApiError unless the code is 200. GETs, and
   * calls under an `idempotencyKey` (the One Click sends), are retried after a network failure, a
   * 429 (after Retry-After) or a 503, each with a fresh nonce: the key makes the server answer a
   * retry with what the first attempt did.
   */
  async call<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown; idempotencyKey?: string } = {}): Promise<T> {
    const idempotent = method.toUpperCase() === 'GET' || opts.idempotencyKey !== undefined;
    const policy = this.#retry;
    for (let attempt = 0; ; attempt++) {
      let res: StockResponse<T>;
      let retryAfter: number | undefined;
      try {
        ({ envelope: res, retryAfter } = await this.#exchange<T>(method, path, opts));
      } catch (err) {
        if (isAbort(err)) throw err;
        // No answer: after a reset the request may have arrived, after a refusal it never left.
        const unsent = neverSent(err);
        if ((!idempotent && !unsent) || attempt >= policy.retries) {
          throw new TokexNetworkError(`${method.toUpperCase()} ${path}: no answer (${(err as Error).message})`, unsent ? false : 'unknown', { cause: err });
        }
        await sleep(retryDelayMs(policy, attempt)!);
        continue;
      }
      if (res.code === 200) return res.data as T;
      const endpoint = `${method.toUpperCase()} ${path}`;
      if (!idempotent || !isRetryableStatus(res.httpStatus) || attempt >= policy.retries) throw new StockApiError({ ...res, retryAfter }, endpoint);
      const wait = retryDelayMs(policy, attempt, retryAfter);
      if (wait === undefined) throw new StockApiError({ ...res, retryAfter }, endpoint);
      await sleep(wait);
    }
  }

  get<T = unknown>(path: string, query?: Query): Promise<T> {
    return this.call<T>('GET', path, { query });
  }

  post<T = unknown>(path: string, body?: unknown, opts: { idempotencyKey?: string } = {}): Promise<T> {
    return this.call<T>('POST', path, { body, ...opts });
  }

  delete<T = unknown>(path: string, body?: unknown, opts: { idempotencyKey?: string } = {}): Promise<T> {
    return this.call<T>('DELETE', path, { body, ...opts });
  }

  /**
   * Measures the server's clock from the `Date` header of a `GET config` (whatever its answer: a
   * request refused for its timestamp still carries the header) and uses the offset for every
   * x-api-ts from now on. Second precision, well inside the 45 s window. Answers the offset in ms.
   */
  async syncTime(): Promise<number> {
    const before = this.#opts.now();
    const { serverDate } = await this.#exchange('GET', '/api/v1/config', {});
    const after = this.#opts.now();
    if (serverDate === undefined) throw new Error('the stock API answered without a Date header');
    // Date is truncated to the second: its middle is the best estimate.
    this.#offset = Math.round(serverDate + 500 - (before + after) / 2);
    return this.#offset;
  }

  /** Every row of a list endpoint, page after page (see `paginate`). */
  paginate<R>(list: (query: { page: number; limit: number }) => Promise<StockPage<R>>, opts: PaginateOptions = {}): AsyncGenerator<R, void, undefined> {
    return paginate(list, opts);
  }

  #checkOrder(order: StockOrderInput): void {
    if (this.#validate) validateStockOrder(order);
  }

  // ---------------------------------------------------------------- market data and users

  /** `GET config`: chain, product, cashier buffers, fees. */
  getConfig<T = Record<string, unknown>>(): Promise<T> {
    return this.get<T>('/api/v1/config');
  }

  /** `GET symbols`. */
  getSymbols(): Promise<StockSymbol[]> {
    return this.get('/api/v1/symbols');
  }

  /** `GET prices/{symbol}`: bid, ask, last and market status. */
  getPrice(symbol: string): Promise<StockQuote> {
    return this.get(`/api/v1/prices/${seg(symbol)}`);
  }

  /** `GET prices/{symbol}/history`: candles. */
  getPriceHistory<T = { symbol: string; interval: string; candles: Array<Record<string, unknown>> }>(symbol: string, query: { interval?: string; startTime?: number; endTime?: number; limit?: number } = {}): Promise<T> {
    return this.get<T>(`/api/v1/prices/${seg(symbol)}/history`, query);
  }

  /** `GET underlying/{symbol}/price`: the underlying share's price. */
  getUnderlyingPrice<T = { symbol: string; underlying: string; exchange: string; price: string; timestamp: number; marketStatus: 'open' | 'closed'; stale?: boolean }>(symbol: string): Promise<T> {
    return this.get<T>(`/api/v1/underlying/${seg(symbol)}/price`);
  }

  /** `GET corporate-action`. */
  getCorporateActions<R = Record<string, unknown>>(query: { symbol?: string; page?: number; limit?: number } = {}): Promise<StockPage<R>> {
    return this.get(`/api/v1/corporate-action`, query);
  }

  /** `GET users/{userId}`: One Click state and whether the wallet is bound to this key. */
  getUser<T = { userId: string; address: string; oneClick: OneClickState; boundToKey: boolean; timestamp: number }>(userId: string): Promise<T> {
    return this.get<T>(`/api/v1/users/${seg(userId)}`);
  }

  /** `GET users/{userId}/balance` (`spenderAddress`: also the allowances to it). */
  getBalance<T = Record<string, any>>(userId: string, query: { spenderAddress?: string } = {}): Promise<T> {
    return this.get<T>(`/api/v1/users/${seg(userId)}/balance`, query);
  }

  /** `GET users/{userId}/positions`. */
  getPositions<R = Record<string, unknown>>(userId: string): Promise<R[]> {
    return this.get<R[]>(`/api/v1/users/${seg(userId)}/positions`);
  }

  // ---------------------------------------------------------------- orders

  /** `POST orders/calldata`: the StockRouter call placing the order, for the wallet to send. */
  async orderCalldata(order: StockOrderInput): Promise<Calldata> {
    this.#checkOrder(order);
    return this.post('/api/v1/orders/calldata', order);
  }

  /** `POST orders/with-deposit/calldata`: deposit `tokenAmount` of cash and place the order in one call. */
  async orderWithDepositCalldata(order: StockOrderWithDepositInput): Promise<Calldata> {
    this.#checkOrder(order);
    return this.post('/api/v1/orders/with-deposit/calldata', order);
  }

  /** `POST orders/send` (One Click): the relayer places the order for the key's wallet. */
  async sendOrder(order: StockOrderInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    this.#checkOrder(order);
    return this.post('/api/v1/orders/send', order, sendKey(opts));
  }

  /** `POST orders/with-deposit/send` (One Click). */
  async sendOrderWithDeposit(order: StockOrderWithDepositInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    this.#checkOrder(order);
    return this.post('/api/v1/orders/with-deposit/send', order, sendKey(opts));
  }

  /** `POST orders/tx`: records a self-submitted order transaction. */
  recordOrderTx(txHash: string): Promise<RecordedOrderTx> {
    return this.post('/api/v1/orders/tx', { txHash });
  }

  /** `GET orders`: the key's orders (`state`: open, canceling, history). */
  listOrders(query: { symbol?: string; status?: string; state?: string } & StockPageQuery = {}): Promise<StockPage<StockOrderView>> {
    return this.get('/api/v1/orders', query);
  }

  /** `GET orders/tx/{txHash}`: the orders one transaction placed. */
  getOrdersByTx(txHash: string): Promise<StockOrderView[]> {
    return this.get(`/api/v1/orders/tx/${seg(txHash)}`);
  }

  /** `GET orders/{orderId}`. */
  getOrder(orderId: string): Promise<StockOrderView> {
    return this.get(`/api/v1/orders/${seg(orderId)}`);
  }

  /** `DELETE orders/{orderId}/calldata`: the cancel call for the wallet to send. */
  cancelOrderCalldata(orderId: string): Promise<Calldata> {
    return this.delete(`/api/v1/orders/${seg(orderId)}/calldata`);
  }

  /** `DELETE orders/{orderId}/send` (One Click): the relayer cancels. */
  sendCancelOrder(orderId: string, opts: SendOptions = {}): Promise<RelayedSend> {
    return this.delete(`/api/v1/orders/${seg(orderId)}/send`, undefined, sendKey(opts));
  }

  // ---------------------------------------------------------------- cash and stock operations

  /** `POST cash/deposits/calldata`. */
  cashDepositCalldata(input: TokenAmountInput): Promise<Calldata> {
    return this.post('/api/v1/cash/deposits/calldata', input);
  }

  /** `POST cash/deposits/send` (One Click). */
  sendCashDeposit(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return this.post('/api/v1/cash/deposits/send', input, sendKey(opts));
  }

  /** `POST cash/deposits/tx`: records a self-submitted deposit. */
  recordCashDepositTx(txHash: string): Promise<RecordedOperationTx> {
    return this.post('/api/v1/cash/deposits/tx', { txHash });
  }

  /** `GET cash/deposits`. */
  listCashDeposits(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return this.get('/api/v1/cash/deposits', query);
  }

  /** `GET cash/deposits/{operationId}`. */
  getCashDeposit(operationId: string): Promise<OperationView> {
    return this.get(`/api/v1/cash/deposits/${seg(operationId)}`);
  }

  /** `POST cash/withdrawals/calldata`. */
  cashWithdrawalCalldata(input: TokenAmountInput): Promise<Calldata> {
    return this.post('/api/v1/cash/withdrawals/calldata', input);
  }

  /** `POST cash/withdrawals/send` (One Click). */
  sendCashWithdrawal(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return this.post('/api/v1/cash/withdrawals/send', input, sendKey(opts));
  }

  /** `POST cash/withdrawals/tx`. */
  recordCashWithdrawalTx(txHash: string): Promise<RecordedOperationTx> {
    return this.post('/api/v1/cash/withdrawals/tx', { txHash });
  }

  /** `GET cash/withdrawals`. */
  listCashWithdrawals(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return this.get('/api/v1/cash/withdrawals', query);
  }

  /** `GET cash/withdrawals/{operationId}`. */
  getCashWithdrawal(operationId: string): Promise<OperationView> {
    return this.get(`/api/v1/cash/withdrawals/${seg(operationId)}`);
  }

  /** `POST stock/deposits/calldata`: wallet shares into the exchange balance. */
  stockDepositCalldata(input: TokenAmountInput): Promise<Calldata> {
    return this.post('/api/v1/stock/deposits/calldata', input);
  }

  /** `POST stock/deposits/send` (One Click). */
  sendStockDeposit(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return this.post('/api/v1/stock/deposits/send', input, sendKey(opts));
  }

  /** `POST stock/deposits/tx`. */
  recordStockDepositTx(txHash: string): Promise<RecordedOperationTx> {
    return this.post('/api/v1/stock/deposits/tx', { txHash });
  }

  /** `GET stock/deposits`. */
  listStockDeposits(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return this.get('/api/v1/stock/deposits', query);
  }

  /** `GET stock/deposits/{operationId}`. */
  getStockDeposit(operationId: string): Promise<OperationView> {
    return this.get(`/api/v1/stock/deposits/${seg(operationId)}`);
  }

  /** `POST stock/withdrawals/calldata`. */
  stockWithdrawalCalldata(input: TokenAmountInput): Promise<Calldata> {
    return this.post('/api/v1/stock/withdrawals/calldata', input);
  }

  /** `POST stock/withdrawals/send` (One Click). */
  sendStockWithdrawal(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return this.post('/api/v1/stock/withdrawals/send', input, sendKey(opts));
  }

  /** `POST stock/withdrawals/tx`. */
  recordStockWithdrawalTx(txHash: string): Promise<RecordedOperationTx> {
    return this.post('/api/v1/stock/withdrawals/tx', { txHash });
  }

  /** `GET stock/withdrawals`. */
  listStockWithdrawals(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return this.get('/api/v1/stock/withdrawals', query);
  }

  /** `GET stock/withdrawals/{operationId}`. */
  getStockWithdrawal(operationId: string): Promise<OperationView> {
    return this.get(`/api/v1/stock/withdrawals/${seg(operationId)}`);
  }

  // ---------------------------------------------------------------- One Click

  /** `GET 1ct/status`. */
  getOneClickStatus(): Promise<OneClickState> {
    return this.get('/api/v1/1ct/status');
  }

  /** `POST 1ct/prepare`: the delegation typed data (`signPayload`) for the wallet to sign. */
  prepareOneClick(input: { deadline: number }): Promise<OneClickPrepared> {
    return this.post('/api/v1/1ct/prepare', input);
  }

  /** `POST 1ct/enable`: the relayer submits the signed delegation. */
  submitOneClick(input: { signature: `0x${string}`; deadline: number }): Promise<OneClickEnabled> {
    return this.post('/api/v1/1ct/enable', input);
  }

  /** `POST 1ct/disable`. */
  disableOneClick(): Promise<OneClickEnabled> {
    return this.post('/api/v1/1ct/disable');
  }

  /**
   * Enables One Click for the key's bound wallet: `1ct/prepare`, the wallet signs the payload (no
   * transaction, no gas), `1ct/enable`. `deadline` (Unix seconds) defaults to ten minutes ahead.
   */
  async enableOneClick(wallet: AnyTypedDataSigner, opts: { deadline?: number } = {}): Promise<OneClickEnabled> {
    const deadline = opts.deadline ?? Math.floor(this.#now() / 1000) + 600;
    const prepared = await this.prepareOneClick({ deadline });
    const signature = await wallet.signTypedData(prepared.signPayload);
    return this.submitOneClick({ signature, deadline: prepared.deadline });
  }
}
