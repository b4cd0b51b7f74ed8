/**
 * The signed perpetual order (contract.md §B, docs/perp-api.md "Orders"): EIP-712 typed data in the
 * venue's domain (`TokexPerp` / `1` / the chain / the margin vault, the same domain as API-key
 * creation). The wallet signs what it reads: symbol, side, type and time in force as text, size and
 * price as the decimal strings the API takes, so a wallet's signing prompt shows the order as a
 * human would write it. `nonce` is usable once per account and `expiry` (ms) bounds when the order
 * may arrive; together they stop replays. `price` is empty for a market order without a worst
 * price, `clientOrderId` empty when the client gives none.
 */
import { ORDER_FIELDS } from '@tokex/contract';
import type { Address } from 'viem';
import { defineTypedData } from '../chain/typed-data.ts';

export const orderType = defineTypedData({
  primaryType: 'Order',
  types: {
    Order: ORDER_FIELDS,
  },
});

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
}
