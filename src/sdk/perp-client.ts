/**
 * A small client for the perpetual API that signs every request as contract.md §B says:
 * `X-Api-Sign` = Base64 HMAC-SHA256(secret, ts + METHOD + request_path + body), request_path from
 * `/v4/` with the query sorted by name. The secret stays inside the client: it is never part of an
 * error or a returned object.
 */
import { canonicalQuery, signedUri, signPerp } from '../auth/hmac.ts';

export const PERP_PATH_ROOT = '/v4/public/trader';

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
  sign(method: string, path: string, opts: { query?: Query; body?: unknown; ts?: number } = {}): SignedPerpRequest {
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
    return { url: this.#opts.baseUrl + requestPath, method: method.toUpperCase(), headers, body: body === '' ? undefined : body };
  }

  /** Sends a signed request and returns the envelope (with the rate-limit headers) whatever its code. */
  async request<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown; ts?: number } = {}): Promise<PerpResponse<T>> {
    const req = this.sign(method, path, opts);
    const res = await this.#opts.fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    return readResponse<T>(res);
  }

  /** Like request, but returns `data` and throws PerpApiError unless the code is 0. */
  async call<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
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
   * An order signed by `account` (the wallet the key is bound to): `orders/build`, then the wallet
   * signs the EIP-712 order (no transaction, no gas). Answers what `POST orders` (or `orders/fill`,
   * `positions/close`) takes.
   */
  async signOrder(account: TypedDataSigner, order: OrderInput): Promise<SignedOrder> {
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
      const list = await this.get<{ rows: Array<{ txHash: string; status: string }> }>('account/deposits', { limit: 100 });
      if (list.rows.some((d) => d.txHash.toLowerCase() === deposit.txHash.toLowerCase() && d.status === 'CREDITED')) return deposit;
      if (Date.now() > until) throw new Error(`deposit ${deposit.txHash} not credited yet`);
      await new Promise((r) => setTimeout(r, 200));
    }
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
