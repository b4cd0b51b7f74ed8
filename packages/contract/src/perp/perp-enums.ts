/**
 * Enums and limits of the perpetual API (contract.md §B, docs/perp-api.md): one definition that the
 * routes' schemas, the engine's invariant checks, the SDK, the CCXT class and the CLI read.
 */
export const ORDER_SIDES = ['BUY', 'SELL'] as const;
export type OrderSide = (typeof ORDER_SIDES)[number];

export const ORDER_TYPES = ['LIMIT', 'MARKET', 'STOP_MARKET', 'STOP_LIMIT', 'TAKE_PROFIT_MARKET', 'TAKE_PROFIT_LIMIT'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

/**
 * Trigger orders (docs/perp-api.md "Trigger orders"): they rest off the book until the trigger price
 * is reached, then enter it as the MARKET or LIMIT order they carry. A stop fires when the price
 * moves against the side (a BUY stop at or above its trigger, a SELL stop at or below); a take-profit
 * when it moves with it (a BUY take-profit at or below, a SELL take-profit at or above), as Binance's.
 */
export const TRIGGER_ORDER_TYPES = ['STOP_MARKET', 'STOP_LIMIT', 'TAKE_PROFIT_MARKET', 'TAKE_PROFIT_LIMIT'] as const;
export type TriggerOrderType = (typeof TRIGGER_ORDER_TYPES)[number];

export function isTriggerType(type: string): type is TriggerOrderType {
  return (TRIGGER_ORDER_TYPES as readonly string[]).includes(type);
}

/** The order a trigger order becomes when it fires. */
export function triggeredType(type: OrderType): 'LIMIT' | 'MARKET' {
  return type === 'LIMIT' || type === 'STOP_LIMIT' || type === 'TAKE_PROFIT_LIMIT' ? 'LIMIT' : 'MARKET';
}

/**
 * Whether a trigger fires when the price rises to it (true) or falls to it (false): a BUY stop and a
 * SELL take-profit rise, a SELL stop and a BUY take-profit fall.
 */
export function triggersOnRise(type: TriggerOrderType, side: OrderSide): boolean {
  const stop = type === 'STOP_MARKET' || type === 'STOP_LIMIT';
  return stop === (side === 'BUY');
}

/** The price a trigger watches: the mark (the default, as Hyperliquid's TP/SL) or the last trade. */
export const TRIGGER_BY = ['MARK', 'LAST'] as const;
export type TriggerBy = (typeof TRIGGER_BY)[number];

export const TIME_IN_FORCES = ['GTC', 'IOC', 'FOK', 'POST_ONLY'] as const;
export type TimeInForce = (typeof TIME_IN_FORCES)[number];

/**
 * The time-in-force rule: which an order type takes, the first being its default. A market order
 * never rests, so it is IOC or FOK; a limit order may also rest (GTC) or insist on resting (POST_ONLY).
 */
export const TIME_IN_FORCE_BY_TYPE: Readonly<Record<OrderType, readonly TimeInForce[]>> = {
  LIMIT: ['GTC', 'IOC', 'FOK', 'POST_ONLY'],
  MARKET: ['IOC', 'FOK'],
  STOP_MARKET: ['IOC', 'FOK'],
  STOP_LIMIT: ['GTC', 'IOC', 'FOK', 'POST_ONLY'],
  TAKE_PROFIT_MARKET: ['IOC', 'FOK'],
  TAKE_PROFIT_LIMIT: ['GTC', 'IOC', 'FOK', 'POST_ONLY'],
};

/** The time in force an order of `type` takes when none is given. */
export function defaultTimeInForce(type: OrderType): TimeInForce {
  return TIME_IN_FORCE_BY_TYPE[type][0];
}

/** Whether `type` takes `tif` (false for anything not an order type or a time in force). */
export function timeInForceAllowed(type: string, tif: string): tif is TimeInForce {
  const allowed = (TIME_IN_FORCE_BY_TYPE as Record<string, readonly string[] | undefined>)[type];
  return allowed !== undefined && allowed.includes(tif);
}

/** UNTRIGGERED: a trigger order waiting for its price; it then follows the ordinary statuses. */
export const ORDER_STATUSES = ['UNTRIGGERED', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/** The statuses of an order that can still trade or be cancelled. */
export const OPEN_ORDER_STATUSES = ['UNTRIGGERED', 'NEW', 'PARTIALLY_FILLED'] as const;

/**
 * Why a done order ended. FILLED; USER_CANCEL; IOC_REMAINDER (IOC, FOK or market left over);
 * SELF_TRADE_PREVENTION; REDUCE_ONLY (could no longer reduce); LIQUIDATION (its account was being
 * liquidated); CANCEL_AFTER (the dead man's switch); POSITION_CLOSED (a closePosition trigger whose
 * position reached zero: the other half of a take-profit / stop-loss pair); and, for a trigger that
 * fired but could not enter the book: INSUFFICIENT_MARGIN, PRICE_BAND (its limit price was outside
 * the band when it fired), POST_ONLY_WOULD_CROSS; SPLIT (a stock split left the order under one lot
 * or its price outside the instrument's range: docs/perp-risk.md, "Stock splits").
 */
export const ORDER_REASONS = [
  'FILLED', 'USER_CANCEL', 'IOC_REMAINDER', 'SELF_TRADE_PREVENTION', 'REDUCE_ONLY', 'LIQUIDATION', 'CANCEL_AFTER',
  'POSITION_CLOSED', 'INSUFFICIENT_MARGIN', 'PRICE_BAND', 'POST_ONLY_WOULD_CROSS', 'SPLIT',
] as const;
export type OrderReason = (typeof ORDER_REASONS)[number];

export const POSITION_SIDES = ['LONG', 'SHORT', 'FLAT'] as const;
export type PositionSide = (typeof POSITION_SIDES)[number];

export const MARGIN_MODES = ['cross', 'isolated'] as const;
export type MarginMode = (typeof MARGIN_MODES)[number];

export const TRADE_ROLES = ['MAKER', 'TAKER'] as const;
export type TradeRole = (typeof TRADE_ROLES)[number];

export const PERMISSIONS = ['READ', 'TRADE', 'TRANSFER'] as const;
export type PerpPermission = (typeof PERMISSIONS)[number];

export const KLINE_INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type KlineInterval = (typeof KLINE_INTERVALS)[number];

/** `clientOrderId`: 1 to 64 visible ASCII characters, unique per account. */
export const MAX_CLIENT_ORDER_ID = 64;
export const CLIENT_ORDER_ID_PATTERN = '^[!-~]{1,64}$';

/** A signed order's `expiry` when the build call is given none, and the furthest ahead it may be. */
export const DEFAULT_ORDER_TTL_MS = 10 * 60_000;
export const MAX_ORDER_TTL_MS = 30 * 24 * 60 * 60_000;

/** An engine order id as the API shows it: a positive decimal integer below 2^53. */
export const ORDER_ID_PATTERN = '^[1-9][0-9]{0,15}$';
export const MAX_ORDER_ID_LENGTH = 20;

/** Orders one batch cancel may name. */
export const MAX_BATCH_CANCEL = 100;

/** Signed orders one `POST orders/batch` (or one WebSocket `batch`) may carry. */
export const MAX_BATCH_ORDERS = 20;

/**
 * Rate-limit units of a request that carries `items` orders or order ids (docs/perp-api.md "Rate
 * limits"): 1 + ⌊items / 10⌋. A single order or cancel costs 1; a batch of 20 orders 3, not 20; a
 * batch cancel of 100 ids 11. Batching is cheaper per order than single calls, never free.
 */
export function requestWeight(items: number): number {
  return 1 + Math.floor(Math.max(0, items) / 10);
}

/** Candles of the instrument's trades, or of its mark or index price. */
export const KLINE_TYPES = ['trade', 'mark', 'index'] as const;
export type KlineType = (typeof KLINE_TYPES)[number];

/** A withdrawal: PENDING reserved, SENT broadcast, COMPLETED mined and settled, FAILED returned to the balance. */
export const WITHDRAWAL_STATUSES = ['PENDING', 'SENT', 'COMPLETED', 'FAILED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** `clientWithdrawalId`: 1 to 64 visible ASCII characters, unique per account. */
export const MAX_CLIENT_WITHDRAWAL_ID = 64;
/**
 * A signed withdrawal's `deadline` (unix seconds): at least 5 minutes ahead, so the vault has time
 * to pay it, at most 7 days, so a signature lying around does not stay payable for ever. The build
 * call's default is one day.
 */
export const WITHDRAWAL_DEADLINE_MIN_S = 5 * 60;
export const WITHDRAWAL_DEADLINE_MAX_S = 7 * 24 * 60 * 60;
export const WITHDRAWAL_DEADLINE_DEFAULT_S = 24 * 60 * 60;
/** What a signed withdrawal's deadline must still leave when the request arrives. */
export const WITHDRAWAL_DEADLINE_MIN_LEFT_S = 60;

/** What moved an account's money (`GET account/transactions`). */
export const PERP_TRANSACTION_TYPES = [
  'DEPOSIT', 'WITHDRAWAL', 'WITHDRAWAL_RELEASE', 'FEE', 'REALISED_PNL', 'FUNDING', 'LIQUIDATION_FEE', 'LIQUIDATION', 'ADL', 'BAD_DEBT',
  'LIQUIDITY_ADD', 'LIQUIDITY_REMOVE', 'OTHER',
] as const;
export type PerpTransactionType = (typeof PERP_TRANSACTION_TYPES)[number];

/** A deposit as the vault's logs give it: CREDITED once applied, REFUSED when it never will be; a withdrawal's log PAID. */
export const DEPOSIT_STATUSES = ['PENDING', 'CREDITED', 'REFUSED', 'PAID'] as const;

/** The wallet-signed vault transactions the approve flow prepares, broadcasts and follows. */
export const VAULT_TRANSACTION_KINDS = ['approve', 'deposit'] as const;
export type VaultTransactionKind = (typeof VAULT_TRANSACTION_KINDS)[number];
export const VAULT_TRANSACTION_STATUSES = ['pending', 'mined', 'reverted'] as const;
export type VaultTransactionStatus = (typeof VAULT_TRANSACTION_STATUSES)[number];

/** A liquidity pool move, and why the insurance fund moved. */
export const LIQUIDITY_ACTIONS = ['ADD', 'REMOVE'] as const;
export const INSURANCE_REASONS = ['liquidationFee', 'badDebt'] as const;

/** An API key's label, free text for its owner. */
export const MAX_API_KEY_LABEL = 200;
