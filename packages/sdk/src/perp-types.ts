/**
 * Types of the perpetual API as the SDK sends and receives them (openapi/perp-api.json): decimal
 * strings for amounts, prices and sizes, milliseconds for timestamps. What crosses the wire is the
 * contract's (@tokex/contract), derived from the schemas the server validates and answers with; the
 * SDK's names for them are kept here as aliases. Only the client's own types are written here.
 */
import type {
  BlockInfo,
  ListedOrder,
  Order,
  PerpWithdrawal as PerpWithdrawalRow,
  RequestedWithdrawal,
  SignedOrderBody,
  SubmittedOrder,
  TimeRangeQuery,
  UnsignedTransaction,
  VaultTransactionView,
} from '@tokex/contract';
import type { Query } from './signing.ts';
import type { TypedDataSigner } from './signer-types.ts';
import type { RetryOptions } from './retry-policy.ts';

/** Options of the state-changing helpers (`cancelOrder`, `batchCancel`, `setLeverage`, `adjustMargin`). */
export interface IdempotentCallOptions {
  /**
   * Names the request (1 to 64 visible ASCII characters): the server applies it at most once and
   * answers every retry with the first answer. Default: a fresh random key per call, kept across
   * the call's own retries. Pass your own to retry across restarts of your program.
   */
  idempotencyKey?: string;
  /** Retries, with the same key, after a network failure, a 429, a 503 or a 50001/50002 answer. Default: the client's `retry.retries` (2). */
  retries?: number;
  /** First wait before a retry, doubled each time (no jitter when given). Default: the client's full-jitter backoff. */
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
  /** Clock for X-Api-Ts; tests may shift it. `syncTime()` adds the server's offset to it. */
  now?: () => number;
  fetch?: typeof fetch;
  /** Retries of idempotent calls on 429, 503, 50001/50002 and network errors; `false` turns them off. */
  retry?: RetryOptions | false;
  /** Refuse orders off the instrument's lot or tick, or a LIMIT without price, before sending. Default true. */
  validateOrders?: boolean;
}

export interface PerpResponse<T = unknown> {
  httpStatus: number;
  code: number;
  msg: string;
  requestId: string;
  data?: T;
  /** On answers that depend on chain state: the last block the service has indexed. */
  blockInfo?: BlockInfo;
  /** The rate-limit headers of the answer, when it carried them. */
  rateLimit?: { limit: number; remaining: number; reset: number };
  retryAfter?: number;
}

export interface SignedPerpRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
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

// ------------------------------------------------------------------ the wire's shapes, from the contract

export type {
  AccountAsset,
  AccountDeposit,
  AccountProof,
  AccountSummary,
  AccountTransaction,
  AmendInput,
  ApiKeyInfo,
  BatchCancelResult,
  BatchOrderResult,
  BatchOrdersResult,
  BuildWithdrawalBody,
  BuiltAmend,
  BuiltOrder,
  BuiltWithdrawal,
  CancelAllAfterStatus,
  CreatedApiKey,
  Depth,
  FundingRate,
  InsuranceFund,
  Instrument,
  Kline,
  LiquidityHistoryRow,
  LiquidityMove,
  LiquidityPosition,
  MarketTrade,
  OneClickStatus,
  OrderInput,
  OrderSide,
  OrderStatus,
  OrderType,
  Page,
  PerpPermission,
  Position,
  PreparedVaultTransaction,
  Ticker,
  TimeInForce,
  Trade,
  TriggerBy,
  TriggerOrderType,
  TypedData,
  VaultTransactionView,
  WithdrawBody,
} from '@tokex/contract';
export type { Fill as OrderFill, KlineInterval as KlineIntervalName } from '@tokex/contract';

/** The unsigned transaction `approve/prepare` and `deposit/prepare` answer. */
export type PreparedTransaction = UnsignedTransaction;

/** A vault transaction the API broadcast and follows (what `vaultTransaction` and `depositCollateral` answer). */
export type VaultTransaction = VaultTransactionView;

/**
 * A withdrawal as `POST account/withdrawals` and `GET account/withdrawals` answer it; `duplicate`
 * only in the answer of `withdraw` (true when it is a withdrawal requested before under this
 * clientWithdrawalId).
 */
export type PerpWithdrawal = PerpWithdrawalRow & Partial<Pick<RequestedWithdrawal, 'duplicate'>>;

/**
 * A withdrawal the wallet signed (`signWithdrawal`): the body `POST account/withdrawals` takes
 * (`amount`, `clientWithdrawalId`, the signed `deadline` in unix seconds, the wallet's `signature`)
 * and the vault's `withdrawalId`. Resending it answers the same withdrawal.
 */
export interface SignedWithdrawal {
  amount: string;
  clientWithdrawalId: string;
  deadline: number;
  signature: `0x${string}`;
  withdrawalId: string;
}

/** The answer of `POST orders`, `orders/fill` and `positions/close`. */
export type PlacedOrder = SubmittedOrder;

/** An order as `DELETE orders/{orderId}` answers it, or as the lists do (these add `liquidation`). */
export type OrderView = Order & Partial<Pick<ListedOrder, 'liquidation'>>;

/** What `POST orders`, `orders/fill` and `positions/close` take. */
export type SignedMessage = SignedOrderBody;

/** Paging and time filters every list endpoint takes. */
export type PageQuery = TimeRangeQuery;

export interface SignedOrder {
  message: Record<string, unknown>;
  signature: `0x${string}`;
  orderHash: string;
}

/** A signed amendment (`signAmend`): what `POST orders/amend` takes, with its EIP-712 hash. */
export interface SignedAmend {
  message: Record<string, unknown>;
  signature: `0x${string}`;
  amendHash: string;
}

/** An order as `GET orders/{orderId}` and `GET orders/client/{clientOrderId}` answer it (any state). */
export type OrderDetail = ListedOrder;

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
