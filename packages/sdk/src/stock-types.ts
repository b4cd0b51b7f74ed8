/**
 * Types of the tokenized-stock API as the SDK sends and receives them (openapi/stock-api.json):
 * decimal strings for amounts, Unix seconds for `deadline`, milliseconds for response timestamps.
 */
import type { RetryOptions } from './retry-policy.ts';

export interface StockClientOptions {
  /** Base URL including any service prefix, without /api/v1 (e.g. http://127.0.0.1:8080). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  chainId: number | string;
  product?: string;
  /** Clock for x-api-ts; tests may shift it. `syncTime()` adds the server's offset to it. */
  now?: () => number;
  fetch?: typeof fetch;
  /** Retries of GETs on 429, 503 and network errors; `false` turns them off. */
  retry?: RetryOptions | false;
  /** Refuse a market buy without notional or a limit order not DAY before sending. Default true. */
  validateOrders?: boolean;
}

export interface StockResponse<T = unknown> {
  httpStatus: number;
  code: number;
  errMsg: string;
  uuid: string;
  data?: T;
}

export type StockPageQuery = {
  page?: number;
  limit?: number;
  startTime?: number;
  endTime?: number;
};

export interface StockPage<T> {
  total: number;
  rows: T[];
}

export type StockSide = 'Buy' | 'Sell';
export type StockOrderType = 'Market' | 'Limit';

/** An order as `orders/calldata` and `orders/send` take it (side and type in any case). */
export interface StockOrderInput {
  symbol?: string;
  stockAddress?: string;
  side: StockSide | 'BUY' | 'SELL' | 'buy' | 'sell';
  type: StockOrderType | 'MARKET' | 'LIMIT' | 'market' | 'limit';
  /** Shares: a market sell or a limit order. */
  quantity?: string;
  /** mUSD to spend: a market buy. */
  notional?: string;
  /** Limit price. */
  price?: string;
  /** Limit orders: `DAY` (the only value accepted). */
  timeInForce?: string;
  /** Unix seconds, in the future and at most 30 days ahead. */
  deadline: number;
  userAddress?: string;
}

export interface StockOrderWithDepositInput extends StockOrderInput {
  tokenAddress: string;
  tokenAmount: string;
}

export interface TokenAmountInput {
  userAddress?: string;
  tokenAddress: string;
  tokenAmount: string;
}

/** What a calldata endpoint answers: the StockRouter call for the wallet to send. */
export interface Calldata {
  toAddress: `0x${string}`;
  value: string;
  callData: `0x${string}`;
  /** The address to approve the token to, when the call draws on an allowance. */
  spenderAddress?: `0x${string}`;
}

/** What a One Click send endpoint answers. */
export interface RelayedSend {
  requestId: string;
  status: 'mined' | 'pending';
  txHash: `0x${string}` | null;
  blockNumber?: string | null;
  gasUsed?: string | null;
  orderId?: string | null;
  orderIds?: string[];
  operationId?: string | null;
  operationIds?: string[];
}

export interface RecordedOrderTx {
  txHash: string;
  orderId?: string | null;
  orderIds: string[];
  indexed: boolean;
}

export interface RecordedOperationTx {
  txHash: string;
  operationId?: string | null;
  operationStatus?: string | null;
  operationIds: string[];
  operations: Array<Record<string, unknown>>;
  indexed: boolean;
}

export interface StockOrderView {
  orderId: string;
  symbol: string | null;
  stockAddress: string;
  userAddress: string;
  side: StockSide;
  type: StockOrderType;
  state: 'open' | 'canceling' | 'history';
  timeInForce?: 'DAY' | null;
  deadline: number;
  quantity?: string | null;
  notional?: string | null;
  price?: string | null;
  txHash: string;
  cancelTxHash?: string | null;
  createdAt: number;
  updatedAt: number;
  fees: string;
  fills: Array<Record<string, unknown>>;
  openOrder?: { status: 'OPEN' | 'CANCELING'; filledQuantity: string; remainingQuantity?: string | null; [k: string]: unknown };
  history?: {
    status: 'FILLED' | 'CANCELED' | 'EXPIRED' | 'REJECTED';
    filledQuantity: string;
    averagePrice?: string | null;
    fees?: string;
    /** Why the executor rejected or expired it (null for FILLED and CANCELED). */
    reason?: string | null;
    [k: string]: unknown;
  };
}

export interface OperationView {
  operationId: string;
  operationStatus: 'processing' | 'completed' | 'failed';
  kind: 'deposit' | 'withdrawal';
  txHash: string;
  userAddress: string;
  tokenAddress: string;
  tokenSymbol?: string | null;
  symbol?: string | null;
  tokenAmount: string;
  mUsdAmount?: string;
  createdAt: number;
  updatedAt: number;
  [k: string]: unknown;
}

export interface StockQuote {
  symbol: string;
  bid: string;
  ask: string;
  last: string;
  timestamp: number;
  marketStatus: 'open' | 'closed';
  token: { address: string; decimals: number; totalSupply: string };
  /** Older than the executor fills against (30 s by default): the market data stopped. */
  stale?: boolean;
}

export interface StockSymbol {
  symbol: string;
  name: string;
  underlying: string;
  exchange: string;
  address: string;
  decimals: number;
  tradable: boolean;
}

export interface OneClickState {
  status: 'enabled' | 'disabled';
  delegatee: string;
}

export interface OneClickEnabled extends OneClickState {
  txHash: string | null;
  requestId?: string | null;
}

export interface OneClickPrepared {
  delegatee: string;
  nonce: string;
  deadline: number;
  signPayload: unknown;
}

