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

/**
 * A market order's worst price (docs/stock-api.md "Orders"): the StockRouter fills it at no price
 * above it (a buy) or below it (a sell). Without `worstPrice` in the body the server derives it from
 * the quote it answers now: the ask (a buy) or the bid (a sell) moved by `slippageBps`, default 50.
 */
export const STOCK_DEFAULT_SLIPPAGE_BPS = 50;
export const STOCK_MAX_SLIPPAGE_BPS = 1_000;
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

/**
 * The US trading session running when a quote was answered (`session` of `GET prices/{symbol}` and
 * the `quotes` stream): the four sessions of `MARKET_CALENDAR=us-sessions`, or `closed`; the other
 * calendars answer only `regular` or `closed` (docs/stock-api.md, "Trading sessions").
 */
export const STOCK_MARKET_SESSIONS = ['overnight', 'pre-market', 'regular', 'after-hours', 'closed'] as const;
export type StockMarketSession = (typeof STOCK_MARKET_SESSIONS)[number];

/** tokex's One Click state, answered as `delegationStatus` (docs/stock-api.md, "Answers"). */
export const STOCK_ONE_CLICK_STATUSES = ['enabled', 'disabled'] as const;
export type StockOneClickStatusValue = (typeof STOCK_ONE_CLICK_STATUSES)[number];

/** Anchored's One Click `status` (anchored-reference.md §4.6: `disabled` / `enable`), what its clients wait for. */
export const STOCK_ANCHORED_ONE_CLICK_STATUSES = ['enable', 'disabled'] as const;
export type StockAnchoredOneClickStatus = (typeof STOCK_ANCHORED_ONE_CLICK_STATUSES)[number];

/**
 * Anchored's order status vocabulary (anchored-reference.md §5.3), answered as an order's `status`
 * beside tokex's `state`; docs/stock-api.md has the table mapping one to the other.
 */
export const STOCK_ANCHORED_ORDER_STATUSES = ['Init', 'Pending', 'New', 'Partial filled', 'Filled', 'Canceled', 'Expired', 'Rejected', 'Failed'] as const;
export type StockAnchoredOrderStatus = (typeof STOCK_ANCHORED_ORDER_STATUSES)[number];

/**
 * `mappingStatus`: the link of a recorded transaction to what it did. `Pending` while the indexer
 * has not reached the transaction (a `…/tx` answer with `indexed: false`), `Indexed` once it has.
 */
export const STOCK_MAPPING_STATUSES = ['Pending', 'Indexed'] as const;
export type StockMappingStatus = (typeof STOCK_MAPPING_STATUSES)[number];

/** Anchored's `operationType` of a transaction mapping (anchored-reference.md §5.2). */
export const STOCK_MAPPING_OPERATION_TYPES = ['trade', 'deposit', 'withdraw'] as const;
export type StockMappingOperationType = (typeof STOCK_MAPPING_OPERATION_TYPES)[number];

/** The StockRouter function a calldata answer calls, answered as its `method`. */
export const STOCK_ROUTER_METHODS = [
  'placeMarketOrder',
  'placeLimitOrder',
  'cancelLimitOrder',
  'depositAndMarketBuy',
  'depositAndLimitBuy',
  'depositStockAndMarketSell',
  'depositStockAndLimitSell',
  'deposit',
  'withdraw',
  'depositStock',
  'withdrawStock',
] as const;
export type StockRouterMethod = (typeof STOCK_ROUTER_METHODS)[number];

/** A One Click send: `mined`, or `pending` when the receipt did not come within the wait. */
export const STOCK_RELAY_STATUSES = ['mined', 'pending'] as const;
export type StockRelayStatus = (typeof STOCK_RELAY_STATUSES)[number];

export const STOCK_CORPORATE_ACTION_TYPES = ['SPLIT', 'DIVIDEND'] as const;
export type StockCorporateActionType = (typeof STOCK_CORPORATE_ACTION_TYPES)[number];

/**
 * A corporate action's state on the venue (docs/corporate-actions.md): `scheduled` until its
 * ex-date, then `applied` (with the transaction) or `failed` (with the reason).
 */
export const STOCK_CORPORATE_ACTION_STATUSES = ['scheduled', 'applied', 'failed'] as const;
export type StockCorporateActionStatus = (typeof STOCK_CORPORATE_ACTION_STATUSES)[number];

/** A holder's DIVIDEND operation: `processing` while its leaf waits to be paid, then `completed`. */
export const STOCK_DIVIDEND_STATUSES = ['processing', 'completed'] as const;
export type StockDividendStatus = (typeof STOCK_DIVIDEND_STATUSES)[number];

/**
 * Candle intervals of `GET prices/{symbol}/history`: Anchored's (anchored-reference.md §4.1) and
 * tokex's `4h`. `3m` and `1w` are rolled up from the stored `1m` and `1d` candles when asked.
 */
export const STOCK_KLINE_INTERVALS = ['1m', '3m', '5m', '15m', '1h', '4h', '1d', '1w'] as const;
export type StockKlineInterval = (typeof STOCK_KLINE_INTERVALS)[number];
/** Candles one history request answers: 100 unless asked, at most 5000 (as Anchored documents). */
export const STOCK_DEFAULT_KLINE_LIMIT = 100;
export const STOCK_MAX_KLINE_LIMIT = 5000;

/**
 * `adjustment` of a history request (Anchored's values): `raw` as stored, `split` and `dividend`
 * back-adjusted by the corporate-action table, `all` both; `spin-off` is `raw` while the table
 * holds no spin-offs (its types are SPLIT and DIVIDEND). docs/stock-api.md has the arithmetic.
 */
export const STOCK_PRICE_ADJUSTMENTS = ['raw', 'split', 'dividend', 'spin-off', 'all'] as const;
export type StockPriceAdjustment = (typeof STOCK_PRICE_ADJUSTMENTS)[number];
export const STOCK_DEFAULT_PRICE_ADJUSTMENT: StockPriceAdjustment = 'all';

/**
 * The largest Unix-seconds value a request takes: a `deadline` (the contracts' `uint32`) and the
 * history's `startTime`/`endTime`; above it a time is taken for milliseconds and refused.
 */
export const STOCK_MAX_UNIX_SECONDS = 4_294_967_295;

/** The largest amount in a token's smallest units a request takes: 2^96 - 1, the contracts' amount width (uint96). */
export const STOCK_MAX_RAW_AMOUNT = (1n << 96n) - 1n;

/** A stock symbol (`AAPL`): 1 to 16 characters. */
export const STOCK_SYMBOL_MAX_LENGTH = 16;
/** An operation id as `GET {cash|stock}/{deposits|withdrawals}/{operationId}` takes it. */
export const STOCK_OPERATION_ID_MAX_LENGTH = 100;
