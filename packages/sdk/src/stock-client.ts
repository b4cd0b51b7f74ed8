/**
 * The tokenized-stock API client: one method per endpoint (STOCK_ROUTES lists them). Each method
 * calls the action of the same name in `stock/actions/<route group>/` with this client's transport
 * (`stock/stock-transport.ts`: signing as contract.md §A says, retries of GETs and One Click sends,
 * the server's clock); the secret stays inside the transport and is never part of an error or a
 * returned object.
 */
import type { Query } from './signing.ts';
import type { AnyTypedDataSigner } from './signer-types.ts';
import { paginate, type PaginateOptions } from './pagination.ts';
import { createStockTransport, type SendOptions, type SignedRequest, type StockTransport } from './stock/stock-transport.ts';
import {
  cancelOrderCalldata,
  cashDepositCalldata,
  cashWithdrawalCalldata,
  disableOneClick,
  enableOneClick,
  getBalance,
  getCashDeposit,
  getCashWithdrawal,
  getConfig,
  getCorporateActions,
  getOneClickStatus,
  getOrder,
  getOrdersByTx,
  getPositions,
  getPrice,
  getPriceHistory,
  getStockDeposit,
  getStockWithdrawal,
  getSymbols,
  getUnderlyingPrice,
  getUser,
  listCashDeposits,
  listCashWithdrawals,
  listOrders,
  listStockDeposits,
  listStockWithdrawals,
  orderCalldata,
  orderWithDepositCalldata,
  prepareOneClick,
  recordCashDepositTx,
  recordCashWithdrawalTx,
  recordOrderTx,
  recordStockDepositTx,
  recordStockWithdrawalTx,
  sendCancelOrder,
  sendCashDeposit,
  sendCashWithdrawal,
  sendOrder,
  sendOrderWithDeposit,
  sendStockDeposit,
  sendStockWithdrawal,
  stockDepositCalldata,
  stockWithdrawalCalldata,
  submitOneClick,
  syncTime,
} from './stock/actions/index.ts';
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
  StockBalance,
  StockPriceHistory,
  StockResponse,
  StockSymbol,
  StockUserInfo,
  TokenAmountInput,
} from './stock-types.ts';

export type { SendOptions, SignedRequest } from './stock/stock-transport.ts';
export { validateStockOrder } from './stock/actions/orders/validate-stock-order.ts';

export class StockClient {
  readonly #t: StockTransport;

  constructor(opts: StockClientOptions) {
    this.#t = createStockTransport(opts);
  }

  /** The signed-request core the methods send through: pass it to the actions of `stockActions`. */
  get transport(): StockTransport {
    return this.#t;
  }

  /** Server clock minus local clock in ms (0 until `syncTime()`). */
  get clockOffsetMs(): number {
    return this.#t.clockOffsetMs;
  }

  /** Builds the signed request without sending it (useful for curl, debugging and tests). */
  sign(method: string, path: string, opts: { query?: Query; body?: unknown; nonce?: string; ts?: number; idempotencyKey?: string } = {}): SignedRequest {
    return this.#t.sign(method, path, opts);
  }

  /** Sends one signed request (no retry) and returns the envelope whatever its code. */
  async request<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown; idempotencyKey?: string } = {}): Promise<StockResponse<T>> {
    return (await this.#t.exchange<T>(method, path, opts)).envelope;
  }

  /**
   * Like request, but returns `data` and throws StockApiError unless the code is 200. GETs, and
   * calls under an `idempotencyKey` (the One Click sends), are retried after a network failure, a
   * 429 (after Retry-After) or a 503, each with a fresh nonce.
   */
  call<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown; idempotencyKey?: string } = {}): Promise<T> {
    return this.#t.call<T>(method, path, opts);
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

  /** Measures the server's clock from the `Date` header of a `GET config` and signs with the offset from now on; answers it in ms. */
  syncTime(): Promise<number> {
    return syncTime(this.#t);
  }

  /** Every row of a list endpoint, page after page (see `paginate`). */
  paginate<R>(list: (query: { page: number; limit: number }) => Promise<StockPage<R>>, opts: PaginateOptions = {}): AsyncGenerator<R, void, undefined> {
    return paginate(list, opts);
  }

  // ---------------------------------------------------------------- market data and portfolio

  /** `GET config`: chain, product, cashier buffers, fees. */
  getConfig<T = Record<string, unknown>>(): Promise<T> {
    return getConfig<T>(this.#t);
  }

  /** `GET symbols`. */
  getSymbols(): Promise<StockSymbol[]> {
    return getSymbols(this.#t);
  }

  /** `GET prices/{symbol}`: bid, ask, last and market status. */
  getPrice(symbol: string): Promise<StockQuote> {
    return getPrice(this.#t, { symbol });
  }

  /** `GET prices/{symbol}/history`: candles; times in Unix seconds, `interval` 1m and `endTime` now unless given. */
  getPriceHistory<T = StockPriceHistory>(symbol: string, query: { interval?: string; startTime?: number; endTime?: number; limit?: number; adjustment?: string } = {}): Promise<T> {
    return getPriceHistory<T>(this.#t, { ...query, symbol });
  }

  /** `GET underlying/{symbol}/price`: the underlying share's price. */
  getUnderlyingPrice<T = { symbol: string; underlying: string; exchange: string; price: string; timestamp: number; marketStatus: 'open' | 'closed'; stale?: boolean }>(symbol: string): Promise<T> {
    return getUnderlyingPrice<T>(this.#t, { symbol });
  }

  /** `GET corporate-action`. */
  getCorporateActions<R = Record<string, unknown>>(query: { symbol?: string; page?: number; limit?: number } = {}): Promise<StockPage<R>> {
    return getCorporateActions<R>(this.#t, query);
  }

  /** `GET users/{userId}`: One Click state and whether the wallet is bound to this key. */
  getUser<T = StockUserInfo>(userId: string): Promise<T> {
    return getUser<T>(this.#t, { userId });
  }

  /** `GET users/{userId}/balance` (`spenderAddress`: the allowances to it; default the zero address, every allowance 0). */
  getBalance<T = StockBalance>(userId: string, query: { spenderAddress?: string } = {}): Promise<T> {
    return getBalance<T>(this.#t, { ...query, userId });
  }

  /** `GET users/{userId}/positions`. */
  getPositions<R = Record<string, unknown>>(userId: string): Promise<R[]> {
    return getPositions<R>(this.#t, { userId });
  }

  // ---------------------------------------------------------------- orders

  /** `POST orders/calldata`: the StockRouter call placing the order, for the wallet to send. */
  orderCalldata(order: StockOrderInput): Promise<Calldata> {
    return orderCalldata(this.#t, order);
  }

  /** `POST orders/with-deposit/calldata`: deposit `tokenAmount` of cash and place the order in one call. */
  orderWithDepositCalldata(order: StockOrderWithDepositInput): Promise<Calldata> {
    return orderWithDepositCalldata(this.#t, order);
  }

  /** `POST orders/send` (One Click): the relayer places the order for the key's wallet. */
  sendOrder(order: StockOrderInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendOrder(this.#t, { ...order, idempotencyKey: opts.idempotencyKey });
  }

  /** `POST orders/with-deposit/send` (One Click). */
  sendOrderWithDeposit(order: StockOrderWithDepositInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendOrderWithDeposit(this.#t, { ...order, idempotencyKey: opts.idempotencyKey });
  }

  /** `POST orders/tx`: records a self-submitted order transaction. */
  recordOrderTx(txHash: string): Promise<RecordedOrderTx> {
    return recordOrderTx(this.#t, { txHash });
  }

  /** `GET orders`: the key's orders (`state`: open, canceling, history). */
  listOrders(query: { symbol?: string; status?: string; state?: string } & StockPageQuery = {}): Promise<StockPage<StockOrderView>> {
    return listOrders(this.#t, query);
  }

  /** `GET orders/tx/{txHash}`: the orders one transaction placed. */
  getOrdersByTx(txHash: string): Promise<StockOrderView[]> {
    return getOrdersByTx(this.#t, { txHash });
  }

  /** `GET orders/{orderId}`. */
  getOrder(orderId: string): Promise<StockOrderView> {
    return getOrder(this.#t, { orderId });
  }

  /** `DELETE orders/{orderId}/calldata`: the cancel call for the wallet to send. */
  cancelOrderCalldata(orderId: string): Promise<Calldata> {
    return cancelOrderCalldata(this.#t, { orderId });
  }

  /** `DELETE orders/{orderId}/send` (One Click): the relayer cancels. */
  sendCancelOrder(orderId: string, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendCancelOrder(this.#t, { orderId, idempotencyKey: opts.idempotencyKey });
  }

  // ---------------------------------------------------------------- cash and stock moves (operations)

  /** `POST cash/deposits/calldata`. */
  cashDepositCalldata(input: TokenAmountInput): Promise<Calldata> {
    return cashDepositCalldata(this.#t, input);
  }

  /** `POST cash/deposits/send` (One Click). */
  sendCashDeposit(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendCashDeposit(this.#t, { ...input, idempotencyKey: opts.idempotencyKey });
  }

  /** `POST cash/deposits/tx`: records a self-submitted deposit. */
  recordCashDepositTx(txHash: string): Promise<RecordedOperationTx> {
    return recordCashDepositTx(this.#t, { txHash });
  }

  /** `GET cash/deposits`. */
  listCashDeposits(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return listCashDeposits(this.#t, query);
  }

  /** `GET cash/deposits/{operationId}`. */
  getCashDeposit(operationId: string): Promise<OperationView> {
    return getCashDeposit(this.#t, { operationId });
  }

  /** `POST cash/withdrawals/calldata`. */
  cashWithdrawalCalldata(input: TokenAmountInput): Promise<Calldata> {
    return cashWithdrawalCalldata(this.#t, input);
  }

  /** `POST cash/withdrawals/send` (One Click). */
  sendCashWithdrawal(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendCashWithdrawal(this.#t, { ...input, idempotencyKey: opts.idempotencyKey });
  }

  /** `POST cash/withdrawals/tx`. */
  recordCashWithdrawalTx(txHash: string): Promise<RecordedOperationTx> {
    return recordCashWithdrawalTx(this.#t, { txHash });
  }

  /** `GET cash/withdrawals`. */
  listCashWithdrawals(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return listCashWithdrawals(this.#t, query);
  }

  /** `GET cash/withdrawals/{operationId}`. */
  getCashWithdrawal(operationId: string): Promise<OperationView> {
    return getCashWithdrawal(this.#t, { operationId });
  }

  /** `POST stock/deposits/calldata`: wallet shares into the exchange balance. */
  stockDepositCalldata(input: TokenAmountInput): Promise<Calldata> {
    return stockDepositCalldata(this.#t, input);
  }

  /** `POST stock/deposits/send` (One Click). */
  sendStockDeposit(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendStockDeposit(this.#t, { ...input, idempotencyKey: opts.idempotencyKey });
  }

  /** `POST stock/deposits/tx`. */
  recordStockDepositTx(txHash: string): Promise<RecordedOperationTx> {
    return recordStockDepositTx(this.#t, { txHash });
  }

  /** `GET stock/deposits`. */
  listStockDeposits(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return listStockDeposits(this.#t, query);
  }

  /** `GET stock/deposits/{operationId}`. */
  getStockDeposit(operationId: string): Promise<OperationView> {
    return getStockDeposit(this.#t, { operationId });
  }

  /** `POST stock/withdrawals/calldata`. */
  stockWithdrawalCalldata(input: TokenAmountInput): Promise<Calldata> {
    return stockWithdrawalCalldata(this.#t, input);
  }

  /** `POST stock/withdrawals/send` (One Click). */
  sendStockWithdrawal(input: TokenAmountInput & { gasLimit?: string | number }, opts: SendOptions = {}): Promise<RelayedSend> {
    return sendStockWithdrawal(this.#t, { ...input, idempotencyKey: opts.idempotencyKey });
  }

  /** `POST stock/withdrawals/tx`. */
  recordStockWithdrawalTx(txHash: string): Promise<RecordedOperationTx> {
    return recordStockWithdrawalTx(this.#t, { txHash });
  }

  /** `GET stock/withdrawals`. */
  listStockWithdrawals(query: { status?: string } & StockPageQuery = {}): Promise<StockPage<OperationView>> {
    return listStockWithdrawals(this.#t, query);
  }

  /** `GET stock/withdrawals/{operationId}`. */
  getStockWithdrawal(operationId: string): Promise<OperationView> {
    return getStockWithdrawal(this.#t, { operationId });
  }

  // ---------------------------------------------------------------- One Click

  /** `GET 1ct/status`. */
  getOneClickStatus(): Promise<OneClickState> {
    return getOneClickStatus(this.#t);
  }

  /** `POST 1ct/prepare`: the delegation typed data (`signPayload`) for the wallet to sign. */
  prepareOneClick(input: { deadline: number }): Promise<OneClickPrepared> {
    return prepareOneClick(this.#t, input);
  }

  /** `POST 1ct/enable`: the relayer submits the signed delegation. */
  submitOneClick(input: { signature: `0x${string}`; deadline: number }): Promise<OneClickEnabled> {
    return submitOneClick(this.#t, input);
  }

  /** `POST 1ct/disable`. */
  disableOneClick(): Promise<OneClickEnabled> {
    return disableOneClick(this.#t);
  }

  /** Enables One Click for the key's bound wallet: prepare, the wallet signs, enable. `deadline` (Unix s) defaults to ten minutes ahead. */
  enableOneClick(wallet: AnyTypedDataSigner, opts: { deadline?: number } = {}): Promise<OneClickEnabled> {
    return enableOneClick(this.#t, { wallet, deadline: opts.deadline });
  }
}
