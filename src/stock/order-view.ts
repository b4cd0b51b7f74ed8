/** The API's view of an indexed order (contract.md §A Values: state, openOrder, history); its shape is the contract's StockOrder. */
import { baseToShares } from './corporate-actions/split-math.ts';
import type { StockAnchoredOrderStatus, StockClosedOrderStatus, StockOrder, StockOrderFill, StockOrderState } from '@tokex/contract';
import { formatDecimal, mulDiv } from '../lib/decimal.ts';
import type { FillRecord, OrderRecord } from './store/stock-order-store.ts';
import type { StockDirectory } from './stock-deps.ts';

const D = 18;
const fmt = (v: string | bigint) => formatDecimal(BigInt(v), D);

export function orderState(status: OrderRecord['status']): StockOrderState {
  return status === 'Open' ? 'open' : status === 'Canceling' ? 'canceling' : 'history';
}

/**
 * An order's `status` in Anchored's vocabulary (anchored-reference.md §5.3; docs/stock-api.md prints
 * this mapping). An order is shown once indexed, so never `Init` or `Pending` (a recorded
 * transaction the indexer has not reached is `mappingStatus: Pending` in the `orders/tx` answer),
 * and never `Failed` (a reverted transaction places no order, and `…/tx` refuses it). A canceling
 * order is still live on chain until the executor closes it: New or Partial filled like an open one.
 */
export function anchoredOrderStatus(status: OrderRecord['status'], filledQuantity: bigint): StockAnchoredOrderStatus {
  switch (status) {
    case 'Open':
    case 'Canceling':
      return filledQuantity > 0n ? 'Partial filled' : 'New';
    case 'Filled':
      return 'Filled';
    case 'Canceled':
      return 'Canceled';
    case 'Expired':
      return 'Expired';
    case 'Rejected':
      return 'Rejected';
  }
}

/**
 * The average fill price: Σ quantity·price / Σ quantity over the fills, so one fill at 227.08 reads
 * 227.08. The charged notional is not used: the StockRouter rounds a buy's charge up to the next
 * wei (`filledNotional = ceil(Σ quantity·price / 1e18)`), and dividing that back by the quantity
 * gave 227.080000000000000001. When the fills do not add up to the filled quantity (a split since
 * rescaled the order's shares), the charged notional is all there is.
 */
export function averagePrice(filledNotional: bigint, filledQuantity: bigint, fills: readonly Pick<FillRecord, 'quantity' | 'price'>[] = []): string | null {
  if (filledQuantity === 0n) return null;
  let quantity = 0n;
  let value = 0n;
  for (const f of fills) {
    quantity += BigInt(f.quantity);
    value += BigInt(f.quantity) * BigInt(f.price);
  }
  if (quantity === filledQuantity) return fmt(value / quantity);
  return fmt(mulDiv(filledNotional, 10n ** 18n, filledQuantity));
}

/** `reason`: why the executor closed it REJECTED or EXPIRED (src/stock/store/order-reason-store.ts), if it did. */
export function orderView(o: OrderRecord, fills: FillRecord[], stocks: StockDirectory, reason: string | null = null): StockOrder {
  const state = orderState(o.status);
  const filledQuantity = BigInt(o.filledQuantity);
  const filledNotional = BigInt(o.filledNotional);
  const isMarketBuy = o.orderType === 'Market' && o.side === 'Buy';
  const fillRows = fills.map((f): StockOrderFill => ({
    quantity: fmt(f.quantity),
    price: fmt(f.price),
    notional: fmt(f.notional),
    fee: fmt(f.fee),
    txHash: f.txHash,
    timestamp: f.timestamp,
  }));
  return {
    orderId: o.orderId,
    symbol: stocks.byAddress(o.stockAddress)?.symbol ?? null,
    stockAddress: o.stockAddress,
    userAddress: o.userAddress,
    side: o.side,
    type: o.orderType,
    state,
    status: anchoredOrderStatus(o.status, filledQuantity),
    timeInForce: o.orderType === 'Limit' ? 'DAY' : null,
    deadline: o.deadline,
    quantity: isMarketBuy ? null : fmt(o.quantity),
    notional: o.orderType === 'Market' && o.side === 'Sell' ? null : fmt(o.notional),
    price: o.orderType === 'Limit' ? fmt(o.price) : null,
    txHash: o.placeTxHash,
    cancelTxHash: o.cancelTxHash,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
    fees: fmt(o.fees),
    fills: fillRows,
    ...(state === 'history'
      ? {
          history: {
            // In history the status is one of the closed ones: Filled, Canceled, Expired or Rejected.
            status: o.status.toUpperCase() as StockClosedOrderStatus,
            filledQuantity: fmt(filledQuantity),
            filledNotional: fmt(filledNotional),
            averagePrice: averagePrice(filledNotional, filledQuantity, fills),
            fees: fmt(o.fees),
            fills: fillRows,
            settledAt: o.closedAt,
            settleTxHash: o.closeTxHash,
            reason: o.status === 'Rejected' || o.status === 'Expired' || o.status === 'Canceled' ? reason : null,
          },
        }
      : {
          openOrder: {
            status: o.status === 'Open' ? 'OPEN' : 'CANCELING',
            filledQuantity: fmt(filledQuantity),
            remainingQuantity: isMarketBuy ? null : fmt(BigInt(o.quantity) - filledQuantity),
            // A sell locks base units of the stock: shown in the shares of the order's multiplier.
            lockedAmount: fmt(o.side === 'Sell' ? baseToShares(BigInt(o.locked), BigInt(o.multiplier)) : o.locked),
          },
        }),
  };
}
