/**
 * A small client for the perpetual API that signs every request as contract.md §B says:
 * `X-Api-Sign` = Base64 HMAC-SHA256(secret, ts + METHOD + request_path + body), request_path from
 * `/v4/` with the query sorted by name. The secret stays inside the client: it is never part of an
 * error or a returned object.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { randomUUID } from 'node:crypto';
import { canonicalQuery, signedUri, signPerp } from '../auth/hmac.ts';

export const PERP_PATH_ROOT = '/v4/public/trader';

/** Codes whose request may be retried as is: 50001/50002 (the outcome may be unknown: see `data.outcome`). */
const RETRYABLE_CODES = new Set([50001, 50002]);

/** Options of the state-changing helpers (`cancelOrder`, `batchCancel`, `setLeverage`, `adjustMargin`). */
export interface IdempotentCallOptions {
  /**
   * Names the request (1 to 64 visible ASCII characters): the server applies it at most once and
   * answers every retry with the first answer. Default: a fresh random key per call, kept across
   * the call's own retries. Pass your own to retry across restarts of your program.
   */
  idempotencyKey?: string;
  /** Retries, with the same key, after a network failure or a 50001/50002 answer. Default 2. */
  retries?: number;
  /** First wait before a retry, doubled each time. Default 250 ms. */
  retryDelayMs?: number;
}

/** What a signed request may carry besides the signed parts. */
export interface RequestOptions {
  query?: Query;
  body?: unknown;
  ts?: number;
  /** Sent as `Idempotency-Key` (not part of the signature, like every header). */
  idempotencyKey?: string;
}

export interface PerpClientOptions {
  /** `{perp_base_url}`: scheme, host and any service prefix, without /v4 (e.g. http://127.0.0.1:8090). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  chainId: number | string;
  /** Clock for X-Api-Ts; tests may shift it. */
  now?: () => number;
  fetch?: typeof fetch;
}

export interface PerpResponse<T = unknown> {
  httpStatus: number;
  code: number;
  msg: string;
  requestId: string;
  data?: T;
  /** On answers that depend on chain state: the last block the service has indexed. */
  blockInfo?: { number: string; hash: string; timestamp: number };
  /** The rate-limit headers of the answer, when it carried them. */
  rateLimit?: { limit: number; remaining: number; reset: number };
  retryAfter?: number;
}

export type Query = Record<string, string | number | undefined>;

export interface SignedPerpRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export class PerpApiError extends Error {
  readonly httpStatus: number;
  readonly code: number;
  readonly requestId: string;
  readonly data?: unknown;
  /** Seconds to wait before retrying (a 429 answer). */
  readonly retryAfter?: number;
  constructor(res: PerpResponse) {
    super(`perp API ${res.code}: ${res.msg} (requestId ${res.requestId})`);
    this.name = 'PerpApiError';
    this.httpStatus = res.httpStatus;
    this.code = res.code;
    this.requestId = res.requestId;
    this.data = res.data;
    this.retryAfter = res.retryAfter;
  }
}

/** What signs the key creation: a viem account or wallet client, or any eth_signTypedData_v4 wallet. */
export interface TypedDataSigner {
  address: `0x${string}`;
  signTypedData(typedData: any): Promise<`0x${string}`>;
}

/** A wallet that signs transactions (a viem account). */
export interface TransactionSigner {
  address: `0x${string}`;
  signTransaction(tx: {
    type: 'eip1559';
    chainId: number;
    to: `0x${string}`;
    data: `0x${string}`;
    value: bigint;
    nonce: number;
    gas: bigint;
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
  }): Promise<`0x${string}`>;
}

/** The unsigned transaction `approve/prepare` and `deposit/prepare` answer (integers as numbers or decimal strings). */
export interface PreparedTransaction {
  type: 'eip1559';
  chainId: number | string;
  from: `0x${string}`;
  to: `0x${string}`;
  data: `0x${string}`;
  value: string;
  nonce: number | string;
  gas: number | string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
}

/** A vault transaction the API broadcast and follows. */
export interface VaultTransaction {
  txHash: `0x${string}`;
  kind: 'approve' | 'deposit';
  status: 'pending' | 'mined' | 'reverted';
  blockNumber: string | number | null;
}

/** A withdrawal as `POST account/withdrawals` and `GET account/withdrawals` answer it. */
export interface PerpWithdrawal {
  /** The vault's bytes32 id: keccak256(abi.encode("tokex.perp.withdrawal", account, clientWithdrawalId)). */
  withdrawalId: `0x${string}`;
  clientWithdrawalId: string | null;
  /** The wallet paid: the account itself. */
  address: `0x${string}`;
  asset: 'USDC';
  amount: string;
  status: 'PENDING' | 'SENT' | 'COMPLETED' | 'FAILED';
  txHash: `0x${string}` | null;
  blockNumber: string | null;
  reason: string | null;
  createdAt: number;
  updatedAt: number;
  /** `withdraw` only: true when the answer is a withdrawal requested before under this clientWithdrawalId. */
  duplicate?: boolean;
}

/** What `orders/build` takes (decimal strings; the key's wallet is the account). */
export interface OrderInput {
  symbol: string;
  side: 'BUY' | 'SELL';
  type: 'LIMIT' | 'MARKET';
  size: string;
  price?: string;
  timeInForce?: 'GTC' | 'IOC' | 'FOK' | 'POST_ONLY';
  reduceOnly?: boolean;
  clientOrderId?: string;
  expiry?: number;
}

export interface SignedOrder {
  message: Record<string, unknown>;
  signature: `0x${string}`;
  orderHash: string;
}

/** The answer of `POST orders` (docs/perp-api.md). */
export interface PlacedOrder {
  orderId: string;
  clientOrderId: string | null;
  symbol: string;
  side: string;
  type: string;
  status: string;
  size: string;
  filledSize: string;
  remainingSize: string;
  avgPrice: string | null;
  fee: string;
  fills: Array<{ tradeId: string; price: string; size: string; fee: string; role: string }>;
  duplicate: boolean;
}

export type PerpPermission = 'READ' | 'TRADE' | 'TRANSFER';

/** The answer of `cancelAllAfter`. */
export interface CancelAllAfterStatus {
  armed: boolean;
  /** When the open orders go (ms; at the first mark update from then); null when disarmed. */
  deadline: number | null;
  timeoutMs: number;
}

/** The answer of `addLiquidity` and `removeLiquidity`. */
export interface LiquidityMove {
  action: 'ADD' | 'REMOVE';
  amount: string;
  /** Shares minted or burned (6 decimals). */
  shares: string;
  lockedUntil: number;
  ts: number;
}

/** The answer of `liquidityPositions`. */
export interface LiquidityPosition {
  shares: string;
  value: string;
  netDeposited: string;
  pnl: string;
  lockedUntil: number | null;
  poolEquity: string;
  totalShares: string;
}

/** What `GET one-click` (and enable, disable) answer. */
export interface OneClickStatus {
  /** True while the session signer may sign orders for the wallet. */
  enabled: boolean;
  /** The last session signer enabled, also after it ended; null when none ever was. */
  sessionAddress: string | null;
  expiresAt: number | null;
  enabledAt: number | null;
}

/** The EIP-712 EnableSession typed data `one-click/prepare` answers. */
export interface EnableSessionTypedData {
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: 'EnableSession';
  message: { account: string; session: string; expiresAt: string; nonce: string };
}

/**
 * A session key enabled for One-Click Trade: a signer for `signOrder`, `placeOrder` and
 * `closePosition` (the wallet no longer signs each order). `expiresAt` lets those helpers keep an
 * order's expiry within the session's, which the API demands. Keep `privateKey` as safely as an API
 * secret until the session expires or is disabled: it can trade for the wallet (and only trade).
 */
export interface SessionSigner extends TypedDataSigner {
  readonly privateKey: `0x${string}`;
  readonly expiresAt: number;
}

export interface CreatedApiKey {
  apiKey: string;
  apiSecret: string;
  label: string;
  permissions: PerpPermission[];
}

/** `instruments` or `/v4/public/trader/instruments` → the absolute path. */
function endpointPath(path: string): string {
  if (path.startsWith('/v4/')) return path;
  return `${PERP_PATH_ROOT}/${path.replace(/^\/+/, '')}`;
}

function bodyText(body: unknown): string {
  return body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
}

async function readResponse<T>(res: Response): Promise<PerpResponse<T>> {
  const json = (await res.json()) as Omit<PerpResponse<T>, 'httpStatus'>;
  const out: PerpResponse<T> = { httpStatus: res.status, ...json };
  const limit = res.headers.get('x-ratelimit-limit');
  if (limit !== null) {
    out.rateLimit = { limit: Number(limit), remaining: Number(res.headers.get('x-ratelimit-remaining')), reset: Number(res.headers.get('x-ratelimit-reset')) };
  }
  const retry = res.headers.get('retry-after');
  if (retry !== null) out.retryAfter = Number(retry);
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

export class PerpClient {
  readonly #opts: Required<Omit<PerpClientOptions, 'fetch'>> & { fetch: typeof fetch };
  /** The last X-Api-Ts this client used: see `nextTs`. */
  #lastTs = 0;

  constructor(opts: PerpClientOptions) {
    this.#opts = {
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
      apiKey: opts.apiKey,
      apiSecret: opts.apiSecret,
      chainId: opts.chainId,
      now: opts.now ?? Date.now,
      fetch: opts.fetch ?? fetch,
    };
  }

  get apiKey(): string {
    return this.#opts.apiKey;
  }

  /**
   * Strictly increasing timestamps: two identical requests in the same millisecond would carry the
   * same signature, and the server refuses the second as a replay (20007).
   */
  #nextTs(): number {
    this.#lastTs = Math.max(this.#opts.now(), this.#lastTs + 1);
    return this.#lastTs;
  }

  /** Builds the signed request without sending it (for curl, debugging and tests). */
  sign(method: string, path: string, opts: RequestOptions = {}): SignedPerpRequest {
    const query = opts.query ? canonicalQuery(opts.query) : '';
    const requestPath = signedUri(endpointPath(path), query);
    const body = bodyText(opts.body);
    const ts = String(opts.ts ?? this.#nextTs());
    const headers: Record<string, string> = {
      'X-Api-Key': this.#opts.apiKey,
      'X-Api-Sign': signPerp(this.#opts.apiSecret, { ts, method, requestPath, body }),
      'X-Api-Ts': ts,
      'X-Chain-Id': String(this.#opts.chainId),
    };
    if (body !== '') headers['content-type'] = 'application/json';
    if (opts.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;
    return { url: this.#opts.baseUrl + requestPath, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  /** Sends a signed request and returns the envelope (with the rate-limit headers) whatever its code. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<PerpResponse<T>> {
    const req = this.sign(method, path, opts);
    const res = await this.#opts.fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    return readResponse<T>(res);
  }

  /** Like request, but returns `data` and throws PerpApiError unless the code is 0. */
  async call<T = unknown>(method: string, path: string, opts: Omit<RequestOptions, 'ts'> = {}): Promise<T> {
    return unwrap(await this.request<T>(method, path, opts));
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

  /**
   * A state-changing call under an Idempotency-Key, retried with that key after a network failure
   * or a 50001/50002 answer (safe: the server applies the request at most once).
   */
  async #idempotent<T>(method: string, path: string, body: unknown, opts: IdempotentCallOptions): Promise<T> {
    const idempotencyKey = opts.idempotencyKey ?? randomUUID();
    const retries = opts.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      let res: PerpResponse<T>;
      try {
        res = await this.request<T>(method, path, { body, idempotencyKey });
      } catch (err) {
        // No answer (connection refused or reset): the request may or may not have arrived.
        if (attempt >= retries) throw err;
        await new Promise((r) => setTimeout(r, (opts.retryDelayMs ?? 250) * 2 ** attempt));
        continue;
      }
      if (res.code === 0 || !RETRYABLE_CODES.has(res.code) || attempt >= retries) return unwrap(res);
      await new Promise((r) => setTimeout(r, (opts.retryDelayMs ?? 250) * 2 ** attempt));
    }
  }

  /** `DELETE orders/{orderId}`: the order, CANCELED. Idempotent (see IdempotentCallOptions). */
  cancelOrder<T = unknown>(orderId: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('DELETE', `orders/${encodeURIComponent(orderId)}`, undefined, opts);
  }

  /** `POST orders/batch-cancel` by ids or by symbol: `{canceled, failed}`. Idempotent. */
  batchCancel<T = { canceled: string[]; failed: Array<{ orderId: string; code: string; msg: string }> }>(
    input: { orderIds: string[] } | { symbol: string },
    opts: IdempotentCallOptions = {},
  ): Promise<T> {
    return this.#idempotent<T>('POST', 'orders/batch-cancel', input, opts);
  }

  /** `POST positions/adjust`: leverage (and margin mode while flat). Idempotent. */
  setLeverage<T = unknown>(input: { symbol: string; leverage: number; marginMode?: 'cross' | 'isolated' }, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'positions/adjust', input, opts);
  }

  /** `POST positions/margin`: moves `amount` USD into (positive) or out of (negative) an isolated position. Idempotent. */
  adjustMargin<T = unknown>(input: { symbol: string; amount: string }, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'positions/margin', input, opts);
  }

  /**
   * `POST account/withdrawals` (a key with TRANSFER): reserves `amount` USD at once and has the
   * margin vault pay it to the key's own wallet. `clientWithdrawalId` names the withdrawal: sending
   * it again answers the same withdrawal (`duplicate: true`), so the call is retried with it after a
   * network failure or a 50001/50002 (`retries`, default 2, from 250 ms doubling). Poll
   * `listWithdrawals` (or `waitForWithdrawal`) for `COMPLETED`.
   */
  async withdraw(input: { amount: string; clientWithdrawalId: string }, opts: { retries?: number; retryDelayMs?: number } = {}): Promise<PerpWithdrawal> {
    const retries = opts.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      let res: PerpResponse<PerpWithdrawal>;
      try {
        res = await this.request<PerpWithdrawal>('POST', 'account/withdrawals', { body: { amount: input.amount, clientWithdrawalId: input.clientWithdrawalId } });
      } catch (err) {
        if (attempt >= retries) throw err;
        await new Promise((r) => setTimeout(r, (opts.retryDelayMs ?? 250) * 2 ** attempt));
        continue;
      }
      if (res.code === 0 || !RETRYABLE_CODES.has(res.code) || attempt >= retries) return unwrap(res);
      await new Promise((r) => setTimeout(r, (opts.retryDelayMs ?? 250) * 2 ** attempt));
    }
  }

  /** `GET account/withdrawals`: the account's withdrawals, newest first (`status`, `startTime`, `endTime`, `page`, `limit`). */
  listWithdrawals(query: { status?: PerpWithdrawal['status']; startTime?: number; endTime?: number; page?: number; limit?: number } = {}): Promise<{ total: number; rows: PerpWithdrawal[] }> {
    return this.get<{ total: number; rows: PerpWithdrawal[] }>('account/withdrawals', query);
  }

  /** Polls `listWithdrawals` until the withdrawal `clientWithdrawalId` is COMPLETED or FAILED (default 60 s). */
  async waitForWithdrawal(clientWithdrawalId: string, opts: { timeoutMs?: number; pollMs?: number } = {}): Promise<PerpWithdrawal> {
    const until = Date.now() + (opts.timeoutMs ?? 60_000);
    for (;;) {
      const page = await this.listWithdrawals({ limit: 100 });
      const w = page.rows.find((r) => r.clientWithdrawalId === clientWithdrawalId);
      if (w && (w.status === 'COMPLETED' || w.status === 'FAILED')) return w;
      if (Date.now() > until) throw new Error(`withdrawal ${clientWithdrawalId} is ${w?.status ?? 'not listed'} after the wait`);
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
    }
  }

  /**
   * `POST orders/cancel-all-after`: the dead man's switch. Every open order of the account is
   * cancelled `timeoutMs` (5 000 to 86 400 000) from now unless called again; 0 disarms. Idempotent.
   */
  cancelAllAfter<T = CancelAllAfterStatus>(timeoutMs: number, opts: IdempotentCallOptions = {}): Promise<T> {
    return this.#idempotent<T>('POST', 'orders/cancel-all-after', { timeoutMs }, opts);
  }

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
    return this.get<T>('liquidity/positions');
  }

  /** `GET liquidity/history`: the account's additions and removals, newest first. */
  liquidityHistory<T = { total: number; rows: unknown[] }>(query: { page?: number; limit?: number; startTime?: number; endTime?: number } = {}): Promise<T> {
    return this.get<T>('liquidity/history', query);
  }

  /**
   * An order signed by `account` (the wallet the key is bound to): `orders/build`, then the wallet
   * signs the EIP-712 order (no transaction, no gas). Answers what `POST orders` (or `orders/fill`,
   * `positions/close`) takes.
   */
  async signOrder(account: TypedDataSigner, order: OrderInput): Promise<SignedOrder> {
    const sessionEnd = (account as Partial<SessionSigner>).expiresAt;
    // A session may not sign beyond its own life: the default ten minutes end with the session.
    if (order.expiry === undefined && typeof sessionEnd === 'number') order = { ...order, expiry: Math.min(this.#opts.now() + 10 * 60_000, sessionEnd) };
    const built = await this.post<{ typedData: { domain: { chainId: number }; message: Record<string, unknown> }; orderHash: string }>('orders/build', order);
    if (String(built.typedData.domain.chainId) !== String(this.#opts.chainId)) {
      throw new Error(`perp API serves chain ${built.typedData.domain.chainId}, not ${this.#opts.chainId}`);
    }
    const signature = await account.signTypedData(built.typedData);
    return { message: built.typedData.message, signature, orderHash: built.orderHash };
  }

  /** Builds, signs and places an order: the answer carries its status and fills so far. */
  async placeOrder<T = PlacedOrder>(account: TypedDataSigner, order: OrderInput): Promise<T> {
    const { message, signature } = await this.signOrder(account, order);
    return this.post<T>('orders', { message, signature });
  }

  /**
   * Closes `size` (default: all) of the account's position on `symbol` at market with a signed
   * reduce-only order; `worstPrice` bounds the fills.
   */
  async closePosition<T = PlacedOrder>(account: TypedDataSigner, opts: { symbol: string; size?: string; worstPrice?: string }): Promise<T> {
    const positions = await this.get<{ rows: Array<{ symbol: string; side: string; size: string }> }>('positions', { symbol: opts.symbol });
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
    return this.post<T>('positions/close', { message, signature });
  }

  /** `POST one-click/prepare`: the EnableSession typed data for the wallet to sign (nothing is stored). */
  async prepareOneClick(input: { sessionAddress: string; expiresAt: number }): Promise<{ typedData: EnableSessionTypedData }> {
    return this.post<{ typedData: EnableSessionTypedData }>('one-click/prepare', input);
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
    return this.post<OneClickStatus>('one-click/enable', { message: m, signature });
  }

  /** `GET one-click`: the wallet's session signer as it stands. */
  getOneClick(): Promise<OneClickStatus> {
    return this.get<OneClickStatus>('one-click');
  }

  /** `POST one-click/disable`: revokes the session signer at once (idempotent). */
  disableOneClick(): Promise<OneClickStatus> {
    return this.post<OneClickStatus>('one-click/disable');
  }

  /**
   * A fresh session key, enabled for `ttlMs` (default 24 h, at most 30 days): pass it to
   * `placeOrder`, `signOrder` or `closePosition` instead of the wallet.
   */
  async startOneClickSession(wallet: TypedDataSigner, opts: { ttlMs?: number } = {}): Promise<SessionSigner> {
    const session = PerpClient.newSessionSigner(this.#opts.now() + (opts.ttlMs ?? 24 * 60 * 60_000));
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
    const prepared = await this.post<{ transaction: PreparedTransaction }>(`${kind}/prepare`, { address: wallet.address, amount });
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
    return this.post<VaultTransaction>(`${kind}/submit`, { signedTransaction });
  }

  /**
   * Approves the margin vault for `amount` of collateral and deposits it, each through the API's
   * prepare → sign → submit; then waits until the engine has credited the deposit (the perp indexer
   * follows the vault after PERP_CONFIRMATIONS blocks).
   */
  async depositCollateral(wallet: TransactionSigner, amount: string, opts: { timeoutMs?: number } = {}): Promise<VaultTransaction> {
    const approve = await this.vaultTransaction(wallet, 'approve', amount);
    if (approve.status !== 'mined') throw new Error(`approve ${approve.txHash} is ${approve.status}`);
    const deposit = await this.vaultTransaction(wallet, 'deposit', amount);
    if (deposit.status !== 'mined') throw new Error(`deposit ${deposit.txHash} is ${deposit.status}`);
    const until = Date.now() + (opts.timeoutMs ?? 30_000);
    for (;;) {
      const list = await this.get<{ rows: Array<{ txHash: string; status: string; reason?: string | null }> }>('account/deposits', { limit: 100 });
      const row = list.rows.find((d) => d.txHash.toLowerCase() === deposit.txHash.toLowerCase());
      if (row?.status === 'CREDITED') return deposit;
      // The engine will never credit it (docs/perp-api.md): waiting longer changes nothing.
      if (row?.status === 'REFUSED') throw new Error(`deposit ${deposit.txHash} refused by the venue${row.reason ? `: ${row.reason}` : ''}`);
      if (Date.now() > until) throw new Error(`deposit ${deposit.txHash} not credited yet`);
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
