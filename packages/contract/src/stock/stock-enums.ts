/**
 * Enums and limits of the stock API (contract.md §A, docs/stock-api.md): one definition that the
 * routes' schemas, the server's order parsing and views, and the SDK read. The wire spells sides and
 * order types `Buy`/`Market` in answers and accepts any case in requests.
 */
export const STOCK_ORDER_SIDES = ['Buy', 'Sell'] as const;
export type StockSide = (typeof STOCK_ORDER_SIDES)[number];

export const STOCK_ORDER_TYPES = ['Market', 'Limit'] as const;
export type StockOrderType = (typeof STOCK_ORDER_TYPES)[number];

/** The only time in force the contracts accept (uint8 0 on chain), for limit orders. */
export const STOCK_TIME_IN_FORCES = ['DAY'] as const;
export type StockTimeInForce = (typeof STOCK_TIME_IN_FORCES)[number];

/** Where an order is in its life: resting, being cancelled, or done. */
export const STOCK_ORDER_STATES = ['open', 'canceling', 'history'] as const;
export type StockOrderState = (typeof STOCK_ORDER_STATES)[number];

/** What `GET orders?state=` filters on (a canceling order is listed with the open ones). */
export const STOCK_ORDER_LIST_STATES = ['open', 'history'] as const;
export type StockOrderListState = (typeof STOCK_ORDER_LIST_STATES)[number];

/** `openOrder.status` of an order not yet done. */
export const STOCK_OPEN_ORDER_STATUSES = ['OPEN', 'CANCELING'] as const;
export type StockOpenOrderStatus = (typeof STOCK_OPEN_ORDER_STATUSES)[number];

/** `history.status` of a done order. */
export const STOCK_CLOSED_ORDER_STATUSES = ['FILLED', 'CANCELED', 'EXPIRED', 'REJECTED'] as const;
export type StockClosedOrderStatus = (typeof STOCK_CLOSED_ORDER_STATUSES)[number];

/** Every order status, as `GET orders?status=` takes it (any case). */
export const STOCK_ORDER_STATUSES = [...STOCK_OPEN_ORDER_STATUSES, ...STOCK_CLOSED_ORDER_STATUSES] as const;
export type StockOrderStatus = (typeof STOCK_ORDER_STATUSES)[number];

/** A cash or stock deposit's or withdrawal's `operationStatus`. */
export const STOCK_OPERATION_STATUSES = ['processing', 'completed', 'failed'] as const;
export type StockOperationStatus = (typeof STOCK_OPERATION_STATUSES)[number];

export const STOCK_OPERATION_KINDS = ['deposit', 'withdrawal'] as const;
export type StockOperationKind = (typeof STOCK_OPERATION_KINDS)[number];

export const STOCK_MARKET_STATUSES = ['open', 'closed'] as const;
export type StockMarketStatus = (typeof STOCK_MARKET_STATUSES)[number];

export const STOCK_ONE_CLICK_STATUSES = ['enabled', 'disabled'] as const;
export type StockOneClickStatusValue = (typeof STOCK_ONE_CLICK_STATUSES)[number];

/** A One Click send: `mined`, or `pending` when the receipt did not come within the wait. */
export const STOCK_RELAY_STATUSES = ['mined', 'pending'] as const;
export type StockRelayStatus = (typeof STOCK_RELAY_STATUSES)[number];

export const STOCK_CORPORATE_ACTION_TYPES = ['SPLIT', 'DIVIDEND'] as const;
export type StockCorporateActionType = (typeof STOCK_CORPORATE_ACTION_TYPES)[number];

/** Candle intervals of `GET prices/{symbol}/history` (the same list as the perpetual API's K-lines). */
export const STOCK_KLINE_INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type StockKlineInterval = (typeof STOCK_KLINE_INTERVALS)[number];
export const STOCK_DEFAULT_KLINE_INTERVAL: StockKlineInterval = '1m';
/** Candles one history request answers: 500 unless asked, at most 1000. */
export const STOCK_DEFAULT_KLINE_LIMIT = 500;
export const STOCK_MAX_KLINE_LIMIT = 1000;

/** A stock symbol (`AAPL`): 1 to 16 characters. */
export const STOCK_SYMBOL_MAX_LENGTH = 16;
/** An operation id as `GET {cash|stock}/{deposits|withdrawals}/{operationId}` takes it. */
export const STOCK_OPERATION_ID_MAX_LENGTH = 100;
/** An order's or a delegation's `deadline` (Unix seconds): in the future, at most 30 days ahead. */
export const STOCK_MAX_DEADLINE_AHEAD_S = 30 * 24 * 3600;
