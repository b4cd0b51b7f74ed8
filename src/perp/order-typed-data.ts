/**
 * The signed perpetual order (contract.md §B, docs/perp-api.md "Orders"): EIP-712 typed data in the
 * venue's domain (`TokexPerp` / `1` / the chain / the margin vault, the same domain as API-key
 * creation). The wallet signs what it reads: symbol, side, type and time in force as text, size and
 * price as the decimal strings the API takes, so a wallet's signing prompt shows the order as a
 * human would write it. `nonce` is usable once per account and `expiry` (ms) bounds when the order
 * may arrive; together they stop replays. `price` is empty for a market order without a worst
 * price, `clientOrderId` empty when the client gives none.
 */
import { AMEND_ORDER_FIELDS, ORDER_FIELDS, TRIGGER_ORDER_FIELDS } from '@tokex/contract';
import type { Address } from 'viem';
import { defineTypedData } from '../chain/typed-data.ts';

export const orderType = defineTypedData({
  primaryType: 'Order',
  types: {
    Order: ORDER_FIELDS,
  },
});

/** A stop or take-profit order: an order's fields with its trigger (a separate type keeps plain orders' hashes). */
export const triggerOrderType = defineTypedData({
  primaryType: 'TriggerOrder',
  types: {
    TriggerOrder: TRIGGER_ORDER_FIELDS,
  },
});

/** An amendment of an open order: its new price and/or total size (empty: unchanged). */
export const amendOrderType = defineTypedData({
  primaryType: 'AmendOrder',
  types: {
    AmendOrder: AMEND_ORDER_FIELDS,
  },
});

export interface AmendMessage {
  account: Address;
  orderId: bigint;
  price: string;
  size: string;
  nonce: bigint;
  expiry: bigint;
}

/** An order message with its values typed for hashing (what `orderType.parseMessage` answers). */
export interface OrderMessage {
  account: Address;
  symbol: string;
  side: string;
  orderType: string;
  size: string;
  price: string;
  timeInForce: string;
  reduceOnly: boolean;
  clientOrderId: string;
  nonce: bigint;
  /** Milliseconds since the epoch. */
  expiry: bigint;
  /** TriggerOrder only (empty / false on a plain Order). */
  triggerPrice?: string;
  triggerBy?: string;
  closePosition?: boolean;
}
