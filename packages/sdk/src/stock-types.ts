/**
 * Types of the tokenized-stock API as the SDK sends and receives them: every shape that crosses the
 * wire is the contract's (@tokex/contract, the schemas openapi/stock-api.json prints), re-exported
 * or aliased here under the names the SDK has always used; only the client's own options and
 * envelope are written here. Decimal strings for amounts, Unix seconds for `deadline`,
 * milliseconds for response timestamps.
 */
import type {
  Page,
  StockCalldata,
  StockCashOperation,
  StockMoveBody,
  StockOneClickChange,
  StockOneClickPrepared,
  StockOneClickStatus,
  StockOperationListQuery,
  StockOperationSend,
  StockOrder,
  StockOrderBody,
  StockOrderSend,
  StockOrderType,
  StockOrderWithDepositBody,
  StockRecordedOperationTx,
  StockRecordedOrderTx,
  StockRelay,
  StockSide,
  StockTransferOperation,
} from '@tokex/contract';
import type { RetryOptions } from './retry-policy.ts';

export type {
  StockAnchoredOneClickStatus,
  StockAnchoredOrderStatus,
  StockBalance,
  StockCashDepositOperation,
  StockCashMapping,
  StockCashWithdrawalOperation,
  StockExchangeFeeConfig,
  StockMappingStatus,
  StockMusdDetail,
  StockOneClickStatusValue,
  StockQuoteBasicInfo,
  StockQuoteOnChain,
  StockRouterMethod,
  StockCandle,
  StockCashOperation,
  StockCashTokenBalance,
  StockCashTokenConfig,
  StockClosedOrderStatus,
  StockConfig,
  StockCorporateAction,
  StockDelegateTypedData,
  StockKlineInterval,
  StockOpenOrderStatus,
  StockOperationKind,
  StockOperationStatus,
  StockOrderFill,
  StockOrderState,
  StockOrderStatus,
  StockPosition,
  StockPriceHistory,
  StockQuote,
  StockSymbol,
  StockTokenBalance,
  StockTransferOperation,
  StockUnderlyingPrice,
  StockUserInfo,
} from '@tokex/contract';
export type { StockOrderType, StockSide } from '@tokex/contract';

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
  /** The server's clock when it answered, ms (every answer of a current server; `syncTime` reads it). */
  t?: number;
}

/** The query of the lists: page and limit, and the time range (ms) of those that take one. */
export type StockPageQuery = Omit<StockOperationListQuery, 'status'>;

export type StockPage<T> = Page<T>;

/** A side or order type as a client may spell it (the API takes any case). */
type AnyCase<T extends string> = T | Uppercase<T> | Lowercase<T>;

/**
 * An order as `orders/calldata` and `orders/send` take it (the contract's StockOrderBody), with
 * what the API requires of every order required here: side, type (in any case) and deadline.
 */
export type StockOrderInput = Omit<StockOrderBody, 'side' | 'type' | 'deadline'> & {
  side: AnyCase<StockSide>;
  type: AnyCase<StockOrderType>;
  /** Unix seconds, in the future and at most 30 days ahead. */
  deadline: number;
};

/** `orders/with-deposit/*`: the order plus, for a buy, the cash token and amount to deposit (defaults: the configured cash token, what the order locks). */
export type StockOrderWithDepositInput = StockOrderInput & Pick<StockOrderWithDepositBody, 'tokenAddress' | 'tokenAmount'>;

export type TokenAmountInput = StockMoveBody;

/** What a calldata endpoint answers: the StockRouter call for the wallet to send. */
export type Calldata = StockCalldata;

/** What a One Click send endpoint answers: an order send's or an operation send's ids. */
export type RelayedSend = StockRelay &
  Partial<Pick<StockOrderSend, 'orderId' | 'orderIds'>> &
  Partial<Pick<StockOperationSend, 'operationId' | 'operationIds'>>;

export type RecordedOrderTx = StockRecordedOrderTx;

export type RecordedOperationTx = StockRecordedOperationTx<OperationView>;

export type StockOrderView = StockOrder;

/** A cash or a stock operation: the fields both have, and each kind's own as optional. */
export type OperationView = Pick<StockCashOperation, keyof StockCashOperation & keyof StockTransferOperation> &
  Partial<StockCashOperation> &
  Partial<StockTransferOperation>;

export type OneClickState = StockOneClickStatus;

export type OneClickEnabled = StockOneClickChange;

export type OneClickPrepared = StockOneClickPrepared;
