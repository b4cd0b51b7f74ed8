/**
 * Splits in shares (docs/corporate-actions.md, "Splits"): the Stock token's multiplier and the
 * restatement of an order in a new multiplier. Mirrors StockRouter's `_rescaled` to the unit, so
 * that the indexer's rows and the chain's `getOrder` agree after a split.
 */

import { BASE_MULTIPLIER } from '../../marketdata/price-splits.ts';

export interface SharesStatement {
  side: 'Buy' | 'Sell';
  quantity: string;
  filledQuantity: string;
  price: string;
  multiplier: string;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/**
 * `order` restated in `multiplier`: quantities × new / old (rounded down), a limit price × old / new
 * rounded in the user's favour (a buy's down, a sell's up). Unchanged when already in it.
 */
export function restateShares<T extends SharesStatement>(order: T, multiplier: bigint): T {
  const old = BigInt(order.multiplier);
  if (old === multiplier) return order;
  const scaled = (v: string) => ((BigInt(v) * multiplier) / old).toString();
  const p = BigInt(order.price) * old;
  return {
    ...order,
    quantity: scaled(order.quantity),
    filledQuantity: scaled(order.filledQuantity),
    price: (order.side === 'Buy' ? p / multiplier : ceilDiv(p, multiplier)).toString(),
    multiplier: multiplier.toString(),
  };
}

/** Shares shown for `base` base units at `multiplier` (rounded down, as `Stock.baseToShares`). */
export function baseToShares(base: bigint, multiplier: bigint): bigint {
  return (base * multiplier) / BASE_MULTIPLIER;
}
