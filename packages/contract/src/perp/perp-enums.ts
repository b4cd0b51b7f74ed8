/**
 * Enums and limits of the perpetual API (contract.md §B, docs/perp-api.md): one definition that the
 * routes' schemas, the engine's invariant checks, the SDK, the CCXT class and the CLI read.
 */
export const ORDER_SIDES = ['BUY', 'SELL'] as const;
export type OrderSide = (typeof ORDER_SIDES)[number];

export const ORDER_TYPES = ['LIMIT', 'MARKET'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const TIME_IN_FORCES = ['GTC', 'IOC', 'FOK', 'POST_ONLY'] as const;
export type TimeInForce = (typeof TIME_IN_FORCES)[number];

/**
 * The time-in-force rule: which an order type takes, the first being its default. A market order
 * never rests, so it is IOC or FOK; a limit order may also rest (GTC) or insist on resting (POST_ONLY).
 */
export const TIME_IN_FORCE_BY_TYPE: Readonly<Record<OrderType, readonly TimeInForce[]>> = {
  LIMIT: ['GTC', 'IOC', 'FOK', 'POST_ONLY'],
  MARKET: ['IOC', 'FOK'],
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

export const ORDER_STATUSES = ['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Why a done order ended. */
export const ORDER_REASONS = ['FILLED', 'USER_CANCEL', 'IOC_REMAINDER', 'SELF_TRADE_PREVENTION', 'REDUCE_ONLY'] as const;

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

/** Candles of the instrument's trades, or of its mark or index price. */
export const KLINE_TYPES = ['trade', 'mark', 'index'] as const;
export type KlineType = (typeof KLINE_TYPES)[number];

/** A withdrawal: PENDING reserved, SENT broadcast, COMPLETED mined and settled, FAILED returned to the balance. */
export const WITHDRAWAL_STATUSES = ['PENDING', 'SENT', 'COMPLETED', 'FAILED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** `clientWithdrawalId`: 1 to 64 visible ASCII characters, unique per account. */
export const MAX_CLIENT_WITHDRAWAL_ID = 64;

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
