/**
 * Stock events → the `stock_operations` projection (an exchange deposit or withdrawal completes in
 * its own transaction) and the (user, stock) pairs whose position must be re-read from the Stock
 * contract's state.
 */
import type { ChainEventRecord } from '../../storage/chain-block-store.ts';
import type { StockOperationState } from '../store/stock-operation-store.ts';
import { operationIdOf } from '../operation-id.ts';

export const STOCK_OPERATION_EVENTS: ReadonlySet<string> = new Set(['StockDeposited', 'StockWithdrawn']);

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

export function stockEntityKey(operationId: string): string {
  return `s:${operationId}`;
}

export function applyStockEvent(state: StockOperationState | undefined, ev: ChainEventRecord): StockOperationState | undefined {
  if (ev.name !== 'StockDeposited' && ev.name !== 'StockWithdrawn') return state;
  return {
    operationId: operationIdOf(ev.txHash, ev.ordinal),
    kind: ev.name === 'StockDeposited' ? 'deposit' : 'withdrawal',
    userAddress: ev.args.user as string,
    stockAddress: ev.address,
    amount: String(ev.args.amount),
    status: 'completed',
    txHash: ev.txHash,
    blockNumber: ev.blockNumber,
    createdAt: ev.timestamp,
    updatedAt: ev.timestamp,
    logIndex: ev.logIndex,
  };
}

export function reduceStockOperation(events: readonly ChainEventRecord[]): StockOperationState | undefined {
  let state: StockOperationState | undefined;
  for (const ev of events) state = applyStockEvent(state, ev);
  return state;
}

/** user → stocks whose balances changed. */
export type PositionTouches = Map<string, Set<string>>;

function touch(touches: PositionTouches, user: string, stock: string): void {
  let stocks = touches.get(user);
  if (!stocks) touches.set(user, (stocks = new Set()));
  stocks.add(stock);
}

/**
 * Records the (user, stock) pairs whose Stock balances `ev` may have changed. Every change of a
 * Stock's balances shows up as one of these events: exchange deposits and withdrawals, wallet
 * transfers (mint and burn included), and the router's order events (a sell locks and unlocks
 * exchange stock, a fill mints or burns it). `orderStock` resolves an order id to its stock.
 */
export function collectPositionTouches(
  ev: ChainEventRecord,
  contractKind: string | undefined,
  orderStock: (orderId: string) => string | undefined,
  touches: PositionTouches,
): void {
  const a = ev.args;
  if (contractKind === 'stock') {
    if (ev.name === 'StockDeposited' || ev.name === 'StockWithdrawn') touch(touches, a.user as string, ev.address);
    else if (ev.name === 'Transfer') {
      for (const who of [a.from as string, a.to as string]) {
        if (who !== ZERO_ADDRESS && who !== ev.address) touch(touches, who, ev.address);
      }
    }
  } else if (contractKind === 'router') {
    if (ev.name === 'OrderPlaced') touch(touches, a.user as string, a.stock as string);
    else if (ev.name === 'OrderFilled' || ev.name === 'OrderClosed') {
      const stock = orderStock(String(a.orderId));
      if (stock) touch(touches, a.user as string, stock);
    }
  }
}
