/**
 * The perpetual API client: one method per endpoint (PERP_ROUTES lists them) and the flows that
 * sign with a wallet (orders, One-Click sessions, approve and deposit). Each method calls the
 * action of the same name in `perp/actions/<route group>/` with this client's transport
 * (`perp/perp-transport.ts`: signing as contract.md §B says, retries, the server's clock); the
 * secret stays inside the transport and is never part of an error or a returned object.
 */
import type { Query } from './signing.ts';
import type { TypedDataSigner } from './signer-types.ts';
import { paginate, type PaginateOptions } from './pagination.ts';
import { createPerpTransport, type PerpTransport } from './perp/perp-transport.ts';
import {
  addLiquidity,
  adjustMargin,
  amendOrder,
  batchCancel,
  buildAmend,
  buildOrder,
  buildWithdrawal,
  cancelAllAfter,
  cancelOrder,
  closePosition,
  createApiKey,
  deleteApiKey,
  depositCollateral,
  disableOneClick,
  enableOneClick,
  fillOrder,
  getAccount,
  getAccountProof,
  getApprove,
  getAssets,
  getCachedInstrument,
  getDeposit,
  getDepth,
  getFundingRates,
  getInstruments,
  getInsuranceFund,
  getKlines,
  getMarketTrades,
  getOneClick,
  getOpenOrders,
  getOrder,
  getOrderByClientId,
  getPositions,
  getPublicInsuranceFund,
  getPublicServerTime,
  getServerTime,
  getTickers,
  liquidityHistory,
  liquidityPositions,
  listApiKeys,
  listDeposits,
  listOrderHistory,
  listTrades,
  listTransactions,
  listWithdrawals,
  newSessionSigner,
  placeBatchOrders,
  placeOrder,
  prepareApiKey,
  prepareApprove,
  prepareDeposit,
  prepareOneClick,
  removeLiquidity,
  setLeverage,
  signAmend,
  signOrder,
  signWithdrawal,
  startOneClickSession,
  submitAmend,
  submitApiKey,
  submitApprove,
  submitBatchOrders,
  submitClosePosition,
  submitDeposit,
  submitOneClick,
  submitOrder,
  submitWithdrawal,
  syncTime,
  updateApiKey,
  validateOrder,
  vaultTransaction,
  waitForWithdrawal,
  withdraw,
} from './perp/actions/index.ts';
import type {
  AccountAsset,
  AccountDeposit,
  AccountProof,
  AccountSummary,
  AccountTransaction,
  AmendInput,
  ApiKeyInfo,
  BatchCancelResult,
  BatchOrdersResult,
  BuiltAmend,
  BuiltOrder,
  BuiltWithdrawal,
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
  OrderDetail,
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
  PreparedVaultTransaction,
  RequestOptions,
  SessionSigner,
  SignedAmend,
  SignedMessage,
  SignedOrder,
  SignedPerpRequest,
  SignedWithdrawal,
  Ticker,
  Trade,
  TransactionSigner,
  TypedData,
  VaultTransaction,
  VaultTransactionView,
} from './perp-types.ts';

export { PERP_PATH_ROOT } from './perp/perp-transport.ts';
/** The vault's escape hatch, called from a wallet with a kept proof (docs/security.md). */
export { escapeWithdrawArgs, MARGIN_VAULT_ESCAPE_ABI, RESERVE_REGISTRY_LEAVES_ABI, type EscapeWithdrawArgs } from '@tokex/contract';
export { escapeCallFromChain, readPublishedLeaves, type EscapeCall, type EscapeFromChainOptions, type EscapeLeafProof } from './perp/escape-from-chain.ts';

export class PerpClient {
  readonly #t: PerpTransport;

  constructor(opts: PerpClientOptions) {
    this.#t = createPerpTransport(opts);
  }

  /** The signed-request core the methods send through: pass it to the actions of `perpActions`. */
  get transport(): PerpTransport {
    return this.#t;
  }

  get apiKey(): string {
    return this.#t.apiKey;
  }

  /** Server clock minus local clock in ms (0 until `syncTime()`). */
  get clockOffsetMs(): number {
    return this.#t.clockOffsetMs;
  }

  /** Measures the server's clock with `GET time` and signs with the offset from now on; answers it in ms. */
  syncTime(): Promise<number> {
    return syncTime(this.#t);
  }

  /** Builds the signed request without sending it (for curl, debugging and tests). */
  sign(method: string, path: string, opts: RequestOptions = {}): SignedPerpRequest {
    return this.#t.sign(method, path, opts);
  }

  /** Sends one signed request (no retry) and returns the envelope (with the rate-limit headers) whatever its code. */
  request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<PerpResponse<T>> {
    return this.#t.request<T>(method, path, opts);
  }

  /**
   * Like request, but returns `data` and throws PerpApiError unless the code is 0. GETs and calls
   * with an idempotency key are retried (see PerpClientOptions.retry).
   */
  call<T = unknown>(method: string, path: string, opts: Omit<RequestOptions, 'ts'> = {}): Promise<T> {
    const idempotent = method.toUpperCase() === 'GET' || opts.idempotencyKey !== undefined;
    return this.#t.send<T>(method.toUpperCase(), path, { ...opts, idempotent });
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

  /** Every row of a list endpoint, page after page (see `paginate`). */
  paginate<R>(list: (query: { page: number; limit: number }) => Promise<Page<R>>, opts: PaginateOptions = {}): AsyncGenerator<R, void, undefined> {
    return paginate(list, opts);
  }

  // ---------------------------------------------------------------- market data (and risk)

  /** `GET time` (no signature): the server's clock in ms. */
  getServerTime(): Promise<{ serverTime: number }> {
    return getServerTime(this.#t);
  }

  /** `GET instruments`: every instrument, or one `symbol`; also refreshes the cache the order checks use. */
  getInstruments(query: { symbol?: string } = {}): Promise<Instrument[]> {
    return getInstruments(this.#t, query);
  }

  /** `GET depth`: the book of `symbol`, `limit` levels a side. */
  getDepth(query: { symbol: string; limit?: number }): Promise<Depth> {
    return getDepth(this.#t, query);
  }

  /** `GET tickers`: 24 h statistics, mark, index and funding of every symbol or one. */
  getTickers(query: { symbol?: string } = {}): Promise<Ticker[]> {
    return getTickers(this.#t, query);
  }

  /** `GET klines`: candles of `symbol` (`type` trade, mark or index as the API documents). */
  getKlines(query: { symbol: string; interval: KlineIntervalName; type?: string; startTime?: number; endTime?: number; limit?: number }): Promise<Kline[]> {
    return getKlines(this.#t, query);
  }

  /** `GET market-trades`: the public trades of `symbol`, newest first. */
  getMarketTrades(query: { symbol: string } & PageQuery): Promise<Page<MarketTrade>> {
    return getMarketTrades(this.#t, query);
  }

  /** `GET funding-rates`: the funding history of `symbol`. */
  getFundingRates(query: { symbol: string; startTime?: number; endTime?: number; limit?: number }): Promise<FundingRate[]> {
    return getFundingRates(this.#t, query);
  }

  /** `GET insurance-fund` (no signature): balance, fees received, bad debt paid, open bad debt and a page of movements. */
  getInsuranceFund(query: PageQuery = {}): Promise<InsuranceFund> {
    return getInsuranceFund(this.#t, query);
  }

  // ---------------------------------------------------------------- API keys

  /** `POST api-keys/prepare` (no signature): the typed data the wallet signs to create a key. */
  prepareApiKey(input: { address: string; label?: string; permissions: PerpPermission[] }): Promise<{ typedData: TypedData }> {
    return prepareApiKey(this.#t, input);
  }

  /** `POST api-keys` (no signature): creates the key the signed message names; the secret is in this answer only. */
  submitApiKey(input: SignedMessage): Promise<CreatedApiKey> {
    return submitApiKey(this.#t, input);
  }

  /** `GET api-keys`: the wallet's keys (never their secrets). */
  listApiKeys(): Promise<ApiKeyInfo[]> {
    return listApiKeys(this.#t);
  }

  /** `PATCH api-keys/{apiKey}`: a new label or permissions. */
  updateApiKey(apiKey: string, input: { label?: string; permissions?: PerpPermission[] }): Promise<ApiKeyInfo> {
    return updateApiKey(this.#t, { ...input, apiKey });
  }

  /** `DELETE api-keys/{apiKey}`. */
  deleteApiKey(apiKey: string): Promise<{ apiKey: string; deleted: boolean }> {
    return deleteApiKey(this.#t, { apiKey });
  }

  // ---------------------------------------------------------------- trading

  /** The instruments, fetched once per client (refreshed by `getInstruments()`). */
  instrument(symbol: string): Promise<Instrument | undefined> {
    return getCachedInstrument(this.#t, { symbol });
  }

  /** Refuses, before anything is sent, an order the venue would refuse for its shape (see the `validateOrder` action). */
  validateOrder(order: OrderInput): Promise<void> {
    return validateOrder(this.#t, order);
  }

  /** `POST orders/build`: the EIP-712 order for the wallet to sign, checked first (`validateOrder`) unless turned off. */
  buildOrder(order: OrderInput): Promise<BuiltOrder> {
    return buildOrder(this.#t, order);
  }

  /** `POST orders`: places a signed order; resent on failure when it names a clientOrderId. */
  submitOrder<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return submitOrder<T>(this.#t, input);
  }

  /** `POST orders/fill`: an immediate-or-cancel taker order up to its worst price; nothing rests. */
  fillOrder<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return fillOrder<T>(this.#t, input);
  }

  /** `POST positions/close`: a signed reduce-only order (see `closePosition` for the whole flow). */
  submitClosePosition<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return submitClosePosition<T>(this.#t, input);
  }

  /**
   * `POST orders/batch`: 1 to 20 signed orders placed in input order, journalled in one commit;
   * `results` answers each in input order (`{code: 0, order}` or `{code, msg}`). Resent on failure.
   */
  submitBatchOrders<T = BatchOrdersResult>(orders: ReadonlyArray<SignedMessage>): Promise<T> {
    return submitBatchOrders<T>(this.#t, { orders });
  }

  /** `POST orders/amend/build`: the EIP-712 amendment (new price and/or total size) of an open order for the wallet to sign. */
  buildAmend(input: AmendInput): Promise<BuiltAmend> {
    return buildAmend(this.#t, input);
  }

  /** `POST orders/amend`: applies a signed amendment; the order as it stands after it (same `orderId`). Resent on failure. */
  submitAmend<T = PlacedOrder>(input: SignedMessage): Promise<T> {
    return submitAmend<T>(this.#t, input);
  }

  /** `GET orders/{orderId}`: one of the account's orders in any state. */
  getOrder<T = OrderDetail>(orderId: string): Promise<T> {
    return getOrder<T>(this.#t, { orderId });
  }

  /** `GET orders/client/{clientOrderId}`: one of the account's orders in any state, by its clientOrderId. */
  getOrderByClientId<T = OrderDetail>(clientOrderId: string): Promise<T> {
    return getOrderByClientId<T>(this.#t, { clientOrderId });
  }

  /** `DELETE orders/{orderId}`: the order, CANCELED. Idempotent (see IdempotentCallOptions). */
  cancelOrder<T = OrderView>(orderId: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return cancelOrder<T>(this.#t, { ...opts, orderId });
  }

  /** `POST orders/batch-cancel` by ids or by symbol: `{canceled, failed}`. Idempotent. */
  batchCancel<T = BatchCancelResult>(input: { orderIds: string[] } | { symbol: string }, opts: IdempotentCallOptions = {}): Promise<T> {
    return batchCancel<T>(this.#t, { ...input, ...opts });
  }

  /** `POST positions/adjust`: leverage (and margin mode while flat). Idempotent. */
  setLeverage<T = Position>(input: { symbol: string; leverage: number; marginMode?: 'cross' | 'isolated' }, opts: IdempotentCallOptions = {}): Promise<T> {
    return setLeverage<T>(this.#t, { ...input, ...opts });
  }

  /** `POST positions/margin`: moves `amount` USD into (positive) or out of (negative) an isolated position. Idempotent. */
  adjustMargin<T = Position>(input: { symbol: string; amount: string }, opts: IdempotentCallOptions = {}): Promise<T> {
    return adjustMargin<T>(this.#t, { ...input, ...opts });
  }

  /** `POST orders/cancel-all-after`: the dead man's switch (`timeoutMs` 5 000 to 86 400 000, 0 disarms). Idempotent. */
  cancelAllAfter<T = CancelAllAfterStatus>(timeoutMs: number, opts: IdempotentCallOptions = {}): Promise<T> {
    return cancelAllAfter<T>(this.#t, { ...opts, timeoutMs });
  }

  // ---------------------------------------------------------------- account and history

  /** `GET account`: balances, equity and margin levels. */
  getAccount(): Promise<AccountSummary> {
    return getAccount(this.#t);
  }

  /** `GET account/proof`: the account's leaf of the latest proof-of-reserves tree and its Merkle path. */
  getAccountProof(): Promise<AccountProof> {
    return getAccountProof(this.#t);
  }

  /** `GET account/assets`. */
  getAssets(): Promise<AccountAsset[]> {
    return getAssets(this.#t);
  }

  /** `GET positions`: the account's positions, or the one of `symbol`. */
  getPositions(query: { symbol?: string; page?: number; limit?: number } = {}): Promise<Page<Position>> {
    return getPositions(this.#t, query);
  }

  /** `GET account/deposits`: vault deposits as the indexer saw them, newest first. */
  listDeposits(query: PageQuery = {}): Promise<Page<AccountDeposit>> {
    return listDeposits(this.#t, query);
  }

  /**
   * `POST account/withdrawals/build` (TRANSFER): the EIP-712 Withdrawal the wallet signs (nothing is
   * reserved); `deadline` unix seconds, default a day ahead. `withdraw(wallet, …)` runs the whole flow.
   */
  buildWithdrawal(input: { amount: string; clientWithdrawalId: string; deadline?: number }, opts: { retries?: number; retryDelayMs?: number } = {}): Promise<BuiltWithdrawal> {
    return buildWithdrawal(this.#t, { ...input, ...opts });
  }

  /** `POST account/withdrawals` (TRANSFER): a withdrawal the wallet signed (`signWithdrawal`), resent as it is on failure. */
  submitWithdrawal(input: { amount: string; clientWithdrawalId: string; deadline: number; signature: string }, opts: { retries?: number; retryDelayMs?: number } = {}): Promise<PerpWithdrawal> {
    return submitWithdrawal(this.#t, { amount: input.amount, clientWithdrawalId: input.clientWithdrawalId, deadline: input.deadline, signature: input.signature, ...opts });
  }

  /** `GET account/withdrawals`: the account's withdrawals, newest first. */
  listWithdrawals(query: { status?: PerpWithdrawal['status'] } & PageQuery = {}): Promise<Page<PerpWithdrawal>> {
    return listWithdrawals(this.#t, query);
  }

  /** Polls `listWithdrawals` until the withdrawal `clientWithdrawalId` is COMPLETED or FAILED (default 60 s). */
  waitForWithdrawal(clientWithdrawalId: string, opts: { timeoutMs?: number; pollMs?: number; onWait?: (state: string) => void } = {}): Promise<PerpWithdrawal> {
    return waitForWithdrawal(this.#t, { ...opts, clientWithdrawalId });
  }

  /** `GET account/transactions`: the account's ledger (`type`, `symbol` filters). */
  listTransactions(query: { type?: string; symbol?: string } & PageQuery = {}): Promise<Page<AccountTransaction>> {
    return listTransactions(this.#t, query);
  }

  /** `GET orders/open`. */
  getOpenOrders(query: { symbol?: string } & PageQuery = {}): Promise<Page<OrderView>> {
    return getOpenOrders(this.#t, query);
  }

  /** `GET orders/history`. */
  listOrderHistory(query: { symbol?: string; status?: OrderStatus } & PageQuery = {}): Promise<Page<OrderView>> {
    return listOrderHistory(this.#t, query);
  }

  /** `GET trades`: the account's fills. */
  listTrades(query: { symbol?: string; orderId?: string } & PageQuery = {}): Promise<Page<Trade>> {
    return listTrades(this.#t, query);
  }

  // ---------------------------------------------------------------- approve and deposit through the API

  /** `POST approve/prepare`: the unsigned ERC-20 approve of the margin vault for `amount`. */
  prepareApprove(input: { address: string; amount: string }): Promise<PreparedVaultTransaction> {
    return prepareApprove(this.#t, input);
  }

  /** `POST approve/submit`: broadcasts the signed approve and answers once mined (or still pending). */
  submitApprove(input: { signedTransaction: `0x${string}` }): Promise<VaultTransactionView> {
    return submitApprove(this.#t, input);
  }

  /** `GET approve/{txHash}`. */
  getApprove(txHash: string): Promise<VaultTransactionView> {
    return getApprove(this.#t, { txHash });
  }

  /** `POST deposit/prepare`: the unsigned vault deposit of `amount`. */
  prepareDeposit(input: { address: string; amount: string }): Promise<PreparedVaultTransaction> {
    return prepareDeposit(this.#t, input);
  }

  /** `POST deposit/submit`: broadcasts the signed deposit and answers once mined (or still pending). */
  submitDeposit(input: { signedTransaction: `0x${string}` }): Promise<VaultTransactionView> {
    return submitDeposit(this.#t, input);
  }

  /** `GET deposit/{txHash}`. */
  getDeposit(txHash: string): Promise<VaultTransactionView> {
    return getDeposit(this.#t, { txHash });
  }

  // ---------------------------------------------------------------- liquidity

  /** `POST liquidity/add` (TRANSFER): moves `amount` USD of withdrawable collateral into the pool for shares. Idempotent. */
  addLiquidity<T = LiquidityMove>(amount: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return addLiquidity<T>(this.#t, { ...opts, amount });
  }

  /** `POST liquidity/remove` (TRANSFER): burns `shares` for their value once the lock-up has ended. Idempotent. */
  removeLiquidity<T = LiquidityMove>(shares: string, opts: IdempotentCallOptions = {}): Promise<T> {
    return removeLiquidity<T>(this.#t, { ...opts, shares });
  }

  /** `GET liquidity/positions`: the account's shares, their value, PnL and lock-up, with the pool's equity and shares. */
  liquidityPositions<T = LiquidityPosition>(): Promise<T> {
    return liquidityPositions<T>(this.#t);
  }

  /** `GET liquidity/history`: the account's additions and removals, newest first. */
  liquidityHistory<T = Page<LiquidityHistoryRow>>(query: PageQuery = {}): Promise<T> {
    return liquidityHistory<T>(this.#t, query);
  }

  // ---------------------------------------------------------------- flows with a wallet

  /** `orders/build`, then `account` signs the EIP-712 order (no transaction, no gas): what `POST orders` takes. */
  signOrder(account: TypedDataSigner, order: OrderInput): Promise<SignedOrder> {
    return signOrder(this.#t, { account, order });
  }

  /** Builds, signs and places an order: the answer carries its status and fills so far. */
  placeOrder<T = PlacedOrder>(account: TypedDataSigner, order: OrderInput): Promise<T> {
    return placeOrder<T>(this.#t, { account, order });
  }

  /** Builds and signs each order with `account`, then places them all in one `POST orders/batch` (1 to 20): one result per order, in input order. */
  placeBatchOrders<T = BatchOrdersResult>(account: TypedDataSigner, orders: ReadonlyArray<OrderInput>): Promise<T> {
    return placeBatchOrders<T>(this.#t, { account, orders });
  }

  /** `orders/amend/build`, then `account` signs the EIP-712 amendment: what `POST orders/amend` takes. */
  signAmend(account: TypedDataSigner, input: AmendInput): Promise<SignedAmend> {
    return signAmend(this.#t, { account, amend: input });
  }

  /** Changes an open order's price and/or total size under the same id: build, `account` signs, submit. */
  amendOrder<T = PlacedOrder>(account: TypedDataSigner, input: AmendInput): Promise<T> {
    return amendOrder<T>(this.#t, { ...input, account });
  }

  /** Closes `size` (default: all) of the position on `symbol` at market with a signed reduce-only order; `worstPrice` bounds the fills. */
  closePosition<T = PlacedOrder>(account: TypedDataSigner, opts: { symbol: string; size?: string; worstPrice?: string }): Promise<T> {
    return closePosition<T>(this.#t, { ...opts, account });
  }

  /**
   * `account/withdrawals/build`, checks it is the withdrawal asked for on this chain, then `wallet`
   * (the wallet the key is bound to; a One-Click session key is refused before anything is sent)
   * signs it: what `POST account/withdrawals` takes.
   */
  signWithdrawal(wallet: TypedDataSigner, input: { amount: string; clientWithdrawalId: string; deadline?: number }): Promise<SignedWithdrawal> {
    return signWithdrawal(this.#t, { ...input, wallet });
  }

  /**
   * Withdraws `amount` USD to `wallet` (TRANSFER): build, the wallet signs, `POST account/withdrawals`,
   * the one signed body resent under its `clientWithdrawalId` on failure (see the `withdraw` action).
   * Never a One-Click session key: it trades, it does not withdraw.
   */
  withdraw(
    wallet: TypedDataSigner,
    input: { amount: string; clientWithdrawalId: string; deadline?: number },
    opts: { retries?: number; retryDelayMs?: number } = {},
  ): Promise<PerpWithdrawal> {
    return withdraw(this.#t, { ...input, ...opts, wallet });
  }

  /** `POST one-click/prepare`: the EnableSession typed data for the wallet to sign (nothing is stored). */
  prepareOneClick(input: { sessionAddress: string; expiresAt: number }): Promise<{ typedData: EnableSessionTypedData }> {
    return prepareOneClick(this.#t, input);
  }

  /** `POST one-click/enable`: the signed EnableSession message (see `enableOneClick` for the whole flow). */
  submitOneClick(input: SignedMessage): Promise<OneClickStatus> {
    return submitOneClick(this.#t, input);
  }

  /** Enables `sessionAddress` as the wallet's session signer until `expiresAt`: prepare, check, sign, enable. */
  enableOneClick(wallet: TypedDataSigner, input: { sessionAddress: string; expiresAt: number }): Promise<OneClickStatus> {
    return enableOneClick(this.#t, { wallet, sessionAddress: input.sessionAddress, expiresAt: input.expiresAt });
  }

  /** `GET one-click`: the wallet's session signer as it stands. */
  getOneClick(): Promise<OneClickStatus> {
    return getOneClick(this.#t);
  }

  /** `POST one-click/disable`: revokes the session signer at once (idempotent). */
  disableOneClick(): Promise<OneClickStatus> {
    return disableOneClick(this.#t);
  }

  /** A fresh session key, enabled for `ttlMs` (default 24 h, at most 30 days): sign orders with it instead of the wallet. */
  startOneClickSession(wallet: TypedDataSigner, opts: { ttlMs?: number } = {}): Promise<SessionSigner> {
    return startOneClickSession(this.#t, { wallet, ttlMs: opts.ttlMs });
  }

  /** A session key (a new random private key, or `privateKey`) that will be enabled until `expiresAt`. */
  static newSessionSigner(expiresAt: number, privateKey?: `0x${string}`): SessionSigner {
    return newSessionSigner(expiresAt, privateKey);
  }

  /** One vault transaction through the API: prepare, the wallet signs, submit (answers once mined or still pending). */
  vaultTransaction(wallet: TransactionSigner, kind: 'approve' | 'deposit', amount: string): Promise<VaultTransaction> {
    return vaultTransaction(this.#t, { wallet, kind, amount });
  }

  /** Approves the margin vault and deposits `amount` through the API, then waits until the engine has credited it. */
  depositCollateral(wallet: TransactionSigner, amount: string, opts: { timeoutMs?: number; onWait?: (state: string) => void } = {}): Promise<VaultTransaction> {
    return depositCollateral(this.#t, { ...opts, wallet, amount });
  }

  /** `GET insurance-fund` (no signature): balance, fees received, bad debt paid, open bad debt and a page of movements. */
  static insuranceFund<T = unknown>(
    baseUrl: string,
    query: { page?: number; limit?: number; startTime?: number; endTime?: number } = {},
    opts: { fetch?: typeof fetch } = {},
  ): Promise<T> {
    return getPublicInsuranceFund<T>({ baseUrl, fetch: opts.fetch ?? fetch }, query);
  }

  /** `GET time` (no signature). */
  static serverTime(baseUrl: string, opts: { fetch?: typeof fetch } = {}): Promise<number> {
    return getPublicServerTime({ baseUrl, fetch: opts.fetch ?? fetch });
  }

  /** Creates a key for `account`'s wallet: prepare, the wallet signs, `POST api-keys`. The secret is in the answer only: keep it. */
  static createApiKey(
    baseUrl: string,
    account: TypedDataSigner,
    opts: { label?: string; permissions: PerpPermission[]; chainId?: number | string; fetch?: typeof fetch },
  ): Promise<CreatedApiKey> {
    return createApiKey({ baseUrl, fetch: opts.fetch ?? fetch }, { account, label: opts.label, permissions: opts.permissions, chainId: opts.chainId });
  }

  /** A client for a key just created (`createApiKey`'s answer). */
  static forKey(baseUrl: string, created: { apiKey: string; apiSecret: string }, chainId: number | string, opts: { now?: () => number; fetch?: typeof fetch } = {}): PerpClient {
    return new PerpClient({ baseUrl, apiKey: created.apiKey, apiSecret: created.apiSecret, chainId, ...opts });
  }
}
