/**
 * StockRouter order events → the `stock_orders` and `stock_order_fills` projections. `applyOrderEvent` is a
 * pure reducer: the projection of an order is the fold of its events in chain order, so appending
 * events folds them onto the stored row and a reorg re-folds what is left (docs/indexer.md).
 */
import type { ChainEventRecord } from '../../storage/chain-block-store.ts';
import type { FillRecord, OrderSide, OrderState, OrderStatus, OrderType } from '../store/stock-order-store.ts';
import { restateShares } from '../corporate-actions/split-math.ts';
import { BASE_MULTIPLIER } from '../../marketdata/price-splits.ts';

export const ORDER_EVENT_NAMES: ReadonlySet<string> = new Set(['OrderPlaced', 'OrderCancelRequested', 'OrderFilled', 'OrderClosed']);

const SIDES: readonly OrderSide[] = ['Buy', 'Sell'];
const TYPES: readonly OrderType[] = ['Market', 'Limit'];
/** IStockRouter.OrderStatus by enum value (None = 0 never appears in an event). */
const STATUSES: readonly (OrderStatus | undefined)[] = [undefined, 'Open', 'Canceling', 'Filled', 'Canceled', 'Expired', 'Rejected'];

export function orderEntityKey(orderId: string): string {
  return `o:${orderId}`;
}

/** The order id of a router order event (decimal string). */
export function orderIdOf(ev: ChainEventRecord): string {
  return String(ev.args.orderId);
}

/** The final status an OrderClosed event closes its order with. */
export function closedStatusOf(ev: ChainEventRecord): OrderStatus | undefined {
  return ev.name === 'OrderClosed' ? STATUSES[ev.args.status as number] : undefined;
}

function timeInForceName(value: number): string {
  return value === 0 ? 'DAY' : `TIF_${value}`;
}

const big = (v: unknown): bigint => BigInt(v as string | number);

/**
 * Folds one order event onto the order's state (undefined before its OrderPlaced). An event for an
 * order whose placement was never indexed (placed before the indexer's start block) leaves it
 * undefined: there is nothing exact to show.
 */
export function applyOrderEvent(state: OrderState | undefined, ev: ChainEventRecord): OrderState | undefined {
  const a = ev.args;
  switch (ev.name) {
    case 'OrderPlaced':
      return {
        orderId: String(a.orderId),
        userAddress: a.user as string,
        stockAddress: a.stock as string,
        side: SIDES[a.side as number] ?? 'Buy',
        orderType: TYPES[a.orderType as number] ?? 'Market',
        status: 'Open',
        timeInForce: timeInForceName(a.timeInForce as number),
        deadline: a.deadline as number,
        quantity: String(a.quantity),
        notional: String(a.notional),
        price: String(a.price),
        locked: String(a.locked),
        filledQuantity: '0',
        filledNotional: '0',
        fees: '0',
        placeTxHash: ev.txHash,
        cancelTxHash: null,
        closeTxHash: null,
        createdAt: ev.timestamp,
        updatedAt: ev.timestamp,
        closedAt: null,
        blockNumber: ev.blockNumber,
        placeLogIndex: ev.logIndex,
        multiplier: a.multiplier === undefined ? BASE_MULTIPLIER.toString() : String(a.multiplier),
      };
    case 'OrderCancelRequested':
      if (!state) return state;
      return { ...state, status: 'Canceling', cancelTxHash: ev.txHash, updatedAt: ev.timestamp };
    case 'OrderFilled': {
      if (!state) return state;
      // The fill is stated in the stock's multiplier at the fill: a split since the order's last
      // event restates the order first, as the router did.
      const current = a.multiplier === undefined ? state : restateShares(state, big(a.multiplier));
      const quantity = big(a.quantity);
      const notional = big(a.notional);
      const fee = big(a.fee);
      return {
        ...current,
        filledQuantity: (big(current.filledQuantity) + quantity).toString(),
        filledNotional: (big(current.filledNotional) + notional).toString(),
        fees: (big(current.fees) + fee).toString(),
        // The router reports what the order still has locked (a sell's in base units). A fill of a
        // release before splits does not: its lock shrank by what the fill took (shares were base units).
        locked: a.locked !== undefined ? String(a.locked) : (big(current.locked) - (current.side === 'Buy' ? notional + fee : quantity)).toString(),
        updatedAt: ev.timestamp,
      };
    }
    case 'OrderClosed': {
      if (!state) return state;
      return {
        ...state,
        status: STATUSES[a.status as number] ?? state.status,
        locked: (big(state.locked) - big(a.released)).toString(),
        closeTxHash: ev.txHash,
        closedAt: ev.timestamp,
        updatedAt: ev.timestamp,
      };
    }
    default:
      return state;
  }
}

/** The fill row of an OrderFilled event. */
export function fillOf(ev: ChainEventRecord): FillRecord {
  const a = ev.args;
  return {
    orderId: String(a.orderId),
    txHash: ev.txHash,
    blockNumber: ev.blockNumber,
    logIndex: ev.logIndex,
    quantity: String(a.quantity),
    price: String(a.price),
    notional: String(a.notional),
    fee: String(a.fee),
    timestamp: ev.timestamp,
  };
}

/** The whole projection of one order from all its events (chain order): row and fills. */
export function reduceOrder(events: readonly ChainEventRecord[]): { order: OrderState | undefined; fills: FillRecord[] } {
  let order: OrderState | undefined;
  const fills: FillRecord[] = [];
  for (const ev of events) {
    order = applyOrderEvent(order, ev);
    if (ev.name === 'OrderFilled' && order) fills.push(fillOf(ev));
  }
  return { order, fills };
}
