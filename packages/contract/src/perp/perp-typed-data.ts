/**
 * The EIP-712 types the perpetual venue's wallets sign (docs/perp-api.md): orders, API-key creation
 * and One-Click session signers, all in the domain `TokexPerp` / `1` / chain id / the margin vault.
 * The servers build and verify typed data from these definitions and the clients sign them.
 */
import type { TypedFields } from '../common/typed-data-fields.ts';

export const PERP_DOMAIN_NAME = 'TokexPerp';
export const PERP_DOMAIN_VERSION = '1';

/**
 * A signed order. The wallet signs what it reads: symbol, side, type and time in force as text, size
 * and price as the decimal strings the API takes; `price` is empty for a market order without a
 * worst price, `clientOrderId` empty when none; `nonce` is usable once per account and `expiry` (ms)
 * bounds when the order may arrive.
 */
export const ORDER_FIELDS = [
  { name: 'account', type: 'address' },
  { name: 'symbol', type: 'string' },
  { name: 'side', type: 'string' },
  { name: 'orderType', type: 'string' },
  { name: 'size', type: 'string' },
  { name: 'price', type: 'string' },
  { name: 'timeInForce', type: 'string' },
  { name: 'reduceOnly', type: 'bool' },
  { name: 'clientOrderId', type: 'string' },
  { name: 'nonce', type: 'uint64' },
  { name: 'expiry', type: 'uint64' },
] as const satisfies TypedFields;

/**
 * A signed trigger order (STOP_* and TAKE_PROFIT_*): an order's fields and, before its nonce, the
 * trigger price (decimal string), what it watches (MARK or LAST) and whether it closes the whole
 * position (`size` is then empty). A separate primary type, so a plain order's hash is unchanged.
 */
export const TRIGGER_ORDER_FIELDS = [
  ...ORDER_FIELDS.slice(0, 9),
  { name: 'triggerPrice', type: 'string' },
  { name: 'triggerBy', type: 'string' },
  { name: 'closePosition', type: 'bool' },
  ...ORDER_FIELDS.slice(9),
] as const satisfies TypedFields;

/**
 * A signed amendment of an open order: its new `price` and/or `size` (decimal strings, empty when
 * unchanged; `size` is the new total size, fills included), with its own nonce and expiry.
 */
export const AMEND_ORDER_FIELDS = [
  { name: 'account', type: 'address' },
  { name: 'orderId', type: 'uint64' },
  { name: 'price', type: 'string' },
  { name: 'size', type: 'string' },
  { name: 'nonce', type: 'uint64' },
  { name: 'expiry', type: 'uint64' },
] as const satisfies TypedFields;

/** An API key created by the wallet's signature; `permissions` comma-separated in the order READ, TRADE, TRANSFER. */
export const CREATE_API_KEY_FIELDS = [
  { name: 'wallet', type: 'address' },
  { name: 'label', type: 'string' },
  { name: 'permissions', type: 'string' },
  { name: 'nonce', type: 'uint64' },
  { name: 'expiry', type: 'uint64' },
] as const satisfies TypedFields;

/** A session signer allowed to sign orders for `account` until `expiresAt` (ms). */
export const ENABLE_SESSION_FIELDS = [
  { name: 'account', type: 'address' },
  { name: 'session', type: 'address' },
  { name: 'expiresAt', type: 'uint64' },
  { name: 'nonce', type: 'uint64' },
] as const satisfies TypedFields;

/**
 * A withdrawal the wallet signs and the margin vault checks before it pays (docs/security.md):
 * `amount` in collateral-token units (USDC, 6 decimals), `withdrawalId` the vault's id
 * (`account/withdrawals/build` answers it), `deadline` unix seconds after which it cannot be paid.
 * The operator relays it; its own key signs for nobody. One-Click session keys cannot sign it.
 */
export const WITHDRAWAL_FIELDS = [
  { name: 'account', type: 'address' },
  { name: 'recipient', type: 'address' },
  { name: 'amount', type: 'uint256' },
  { name: 'withdrawalId', type: 'bytes32' },
  { name: 'deadline', type: 'uint64' },
] as const satisfies TypedFields;

export const PERP_TYPED_DATA = {
  Order: ORDER_FIELDS,
  TriggerOrder: TRIGGER_ORDER_FIELDS,
  AmendOrder: AMEND_ORDER_FIELDS,
  CreateApiKey: CREATE_API_KEY_FIELDS,
  EnableSession: ENABLE_SESSION_FIELDS,
  Withdrawal: WITHDRAWAL_FIELDS,
} as const;
