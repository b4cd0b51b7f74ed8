/**
 * Types of the perpetual API as the SDK sends and receives them (openapi/perp-api.json): decimal
 * strings for amounts, prices and sizes, milliseconds for timestamps.
 */
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
  blockInfo?: { number: string; hash: string; timestamp: number };
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


// ------------------------------------------------------------------ answers of the typed methods

export type OrderSide = 'BUY' | 'SELL';
export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED';
export type TimeInForce = 'GTC' | 'IOC' | 'FOK' | 'POST_ONLY';
export type KlineIntervalName = '1m' | '5m' | '15m' | '1h' | '4h' | '1d';

export interface Page<T> {
  total: number;
  rows: T[];
}

/** Paging and time filters every list endpoint takes. */
export type PageQuery = {
  page?: number;
  limit?: number;
  startTime?: number;
  endTime?: number;
};

export interface Instrument {
  symbol: string;
  base: string;
  quote: string;
  tickSize: string;
  lotSize: string;
  minSize: string;
  maxSize: string;
  maxLeverage: string;
  initialMarginRatio: string;
  maintenanceMarginRatio: string;
  makerFeeRate: string;
  takerFeeRate: string;
  fundingInterval: number;
}

export interface Depth {
  symbol: string;
  /** `[price, size]` pairs, best first. */
  bids: string[][];
  asks: string[][];
  seq: number;
  ts: number;
}

export interface Ticker {
  symbol: string;
  lastPrice: string | null;
  open24h: string | null;
  high24h: string | null;
  low24h: string | null;
  volume24h: string;
  turnover24h: string;
  trades24h: number;
  bestBid: string | null;
  bestAsk: string | null;
  markPrice: string | null;
  indexPrice: string | null;
  fundingRate: string;
  nextFundingTime: number;
  openInterest: string;
  ts: number;
  /** When the mark was last set (ms); null before the first. */
  markTime?: number | null;
  /** The time of the market-data quote the index came from (ms); null before the first. */
  indexTime?: number | null;
  /** No mark or index yet, or either older than the instrument allows (docs/perp-api.md "Market data"). */
  stale?: boolean;
}

export interface Kline {
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  turnover: string;
  trades: number;
}

export interface MarketTrade {
  id: string;
  symbol: string;
  price: string;
  size: string;
  side: OrderSide;
  ts: number;
  liquidation: boolean;
}

export interface FundingRate {
  symbol: string;
  fundingRate: string;
  fundingTime: number;
  markPrice: string;
}

export interface ApiKeyInfo {
  apiKey: string;
  label: string;
  permissions: PerpPermission[];
  createdAt: number;
  updatedAt: number;
}

/** Complete EIP-712 typed data as a prepare/build call answers it. */
export interface TypedData {
  domain: { name?: string; version?: string; chainId: number; verifyingContract?: string };
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: string;
  message: Record<string, unknown>;
}

export interface BuiltOrder {
  typedData: TypedData;
  orderHash: string;
}

/** What `POST orders`, `orders/fill` and `positions/close` take. */
export interface SignedMessage {
  message: Record<string, unknown>;
  signature: `0x${string}`;
}

export interface OrderFill {
  tradeId: string;
  orderId: string;
  symbol: string;
  side: OrderSide;
  role: 'MAKER' | 'TAKER';
  price: string;
  size: string;
  notional: string;
  fee: string;
  realisedPnl: string;
  ts: number;
}

export interface OrderView {
  orderId: string;
  clientOrderId: string | null;
  symbol: string;
  side: OrderSide;
  type: 'LIMIT' | 'MARKET';
  timeInForce: TimeInForce;
  price: string | null;
  size: string;
  filledSize: string;
  remainingSize: string;
  avgPrice: string | null;
  fee: string;
  status: OrderStatus;
  reason: string | null;
  reduceOnly: boolean;
  createdAt: number;
  updatedAt: number;
  liquidation?: boolean;
}

export interface Position {
  symbol: string;
  side: 'LONG' | 'SHORT' | 'FLAT';
  size: string;
  entryPrice: string | null;
  markPrice: string | null;
  notional: string;
  unrealisedPnl: string;
  realisedPnl: string;
  funding: string;
  margin: string;
  maintenanceMargin: string;
  leverage: number;
  marginMode: 'cross' | 'isolated';
  liquidationPrice: string | null;
}

export interface BatchCancelResult {
  canceled: string[];
  failed: Array<{ orderId: string; code: string; msg: string }>;
}

/**
 * `GET account/proof`: the caller's leaf of the latest liabilities tree the ReserveRegistry holds
 * (docs/proof-of-reserves.md). Amounts are integer strings of collateral-token units (`decimals` 6).
 */
export interface AccountProof {
  /** The funding interval's start, ms since the Unix epoch: the registry's key. */
  epoch: number;
  account: string;
  leafIndex: number;
  salt: `0x${string}`;
  /** Equity committed (0 when the account's equity is below zero). */
  equity: string;
  pendingWithdrawals: string;
  /** equity + pendingWithdrawals. */
  value: string;
  /** keccak256(abi.encode(bytes32 salt, address account, uint256 equity, uint256 pendingWithdrawals)). */
  leafHash: `0x${string}`;
  /** Siblings from the leaf up; `side` is where the sibling sits. */
  path: Array<{ hash: `0x${string}`; sum: string; side: 'left' | 'right' }>;
  root: `0x${string}`;
  total: string;
  leafCount: number;
  badDebt: string;
  snapshotTs: number;
  decimals: number;
  chainId: number;
  reserveRegistry: `0x${string}`;
  vault: `0x${string}`;
  collateralToken: `0x${string}`;
  txHash: `0x${string}` | null;
  vaultBalance: string | null;
  solvent: boolean | null;
}

export interface AccountSummary {
  account: string;
  asset: 'USDC';
  balance: string;
  equity: string;
  unrealisedPnl: string;
  freeCollateral: string;
  withdrawable: string;
  pendingWithdrawals: string;
  orderMargin: string;
  positionMargin: string;
  maintenanceMargin: string;
  marginRatio: string | null;
  liquidatable: boolean;
  deposited: string;
  withdrawn: string;
  realisedPnl: string;
  fees: string;
  funding: string;
}

export interface AccountAsset {
  asset: string;
  balance: string;
  equity: string;
  available: string;
  withdrawable: string;
  pendingWithdrawals: string;
  orderMargin: string;
  positionMargin: string;
}

export interface AccountDeposit {
  id: string;
  asset: string;
  amount: string;
  txHash: string;
  blockNumber: string;
  withdrawalId?: string | null;
  status: 'PENDING' | 'CREDITED' | 'REFUSED' | 'PAID';
  reason?: string | null;
  ts: number;
}

export interface AccountTransaction {
  id: string;
  type: string;
  symbol: string | null;
  amount: string;
  asset: string;
  ref: string | null;
  ts: number;
}

export interface Trade extends OrderFill {
  liquidation: boolean;
}

/** What `approve/prepare` and `deposit/prepare` answer. */
export interface PreparedVaultTransaction {
  transaction: PreparedTransaction;
  kind: 'approve' | 'deposit';
  amount: string;
  marginVault: string;
}

/** A vault transaction as `approve/{txHash}` and `deposit/{txHash}` answer it. */
export interface VaultTransactionView {
  txHash: `0x${string}`;
  kind: 'approve' | 'deposit';
  account: string;
  amount: string;
  status: 'pending' | 'mined' | 'reverted';
  blockNumber: string | null;
  submittedAt: number;
}

export interface LiquidityHistoryRow {
  id: string;
  action: 'ADD' | 'REMOVE';
  amount: string;
  shares: string;
  holderShares: string;
  totalShares: string;
  poolEquity: string;
  lockedUntil: number;
  ts: number;
}

export interface InsuranceFund {
  balance: string;
  feesReceived: string;
  badDebtPaid: string;
  openBadDebt: number;
  openBadDebtAccounts: string[];
  movements: Page<Record<string, unknown>>;
}
