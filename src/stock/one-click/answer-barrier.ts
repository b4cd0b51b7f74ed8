/**
 * Read-your-writes for One Click sends: an id a send answers must be readable, listable and
 * cancellable the moment the answer arrives, on any API instance.
 *
 * Every read of orders and operations (details, lists, `orders/tx/{txHash}`, the cancel pre-checks)
 * looks at the indexer's projections, and the indexer is their only writer (docs/indexer.md). The
 * relayer marks a request mined as soon as it holds the receipt, which is usually before the
 * indexer has polled that block. So a send does not answer what it read off the receipt until the
 * projection shows it: the same rule as the `…/tx` endpoints, which answer only ids they found in
 * the projection. The projection is polled rather than the indexer's checkpoint, so an answer never
 * names an order that a reorg moved out of the indexed chain.
 */
import type { Hex } from 'viem';
import type { DbExecutor } from '../../storage/database.ts';
import { sleep } from '../../lib/async.ts';
import { listCashOperationsByTx, listStockOperationsByTx } from '../store/stock-operation-store.ts';
import { getOrder, listOrdersByTx } from '../store/stock-order-store.ts';
import type { RelayKind, RelayResult } from '../store/relay-request-store.ts';

/** Relayed kinds whose answer names something the projections show; delegation is read off the chain. */
export const PROJECTED_KINDS: ReadonlySet<RelayKind> = new Set<RelayKind>([
  'order',
  'cancel',
  'cash-deposit',
  'cash-withdrawal',
  'stock-deposit',
  'stock-withdrawal',
]);

export interface MinedRelay {
  kind: RelayKind;
  txHash: Hex;
  result: RelayResult;
  /** For a cancel: the order it cancels. */
  cancels?: string;
}

const covers = (have: readonly string[], want: readonly string[]) => {
  const set = new Set(have);
  return want.every((id) => set.has(id));
};

/**
 * Whether the projections show everything the answer to `m` names: the orders it placed and the
 * operations it created (all of them: a with-deposit order also creates a cash operation), or, for
 * a cancel, the cancel request on its order. One indexed read per kind of id.
 */
export async function projectionShows(db: DbExecutor, m: MinedRelay): Promise<boolean> {
  if (m.kind === 'cancel') {
    if (m.cancels === undefined) return true;
    return (await getOrder(db, m.cancels))?.cancelTxHash === m.txHash.toLowerCase();
  }
  const { orderIds, operationIds } = m.result;
  if (orderIds.length > 0 && !covers((await listOrdersByTx(db, m.txHash)).map((o) => o.orderId), orderIds)) return false;
  if (operationIds.length > 0) {
    const [cash, stock] = await Promise.all([listCashOperationsByTx(db, m.txHash), listStockOperationsByTx(db, m.txHash)]);
    if (!covers([...cash, ...stock].map((o) => o.operationId), operationIds)) return false;
  }
  return true;
}

/**
 * Waits until the projections show what `m`'s answer names, reading every `pollMs` for at most
 * `waitMs`; false when they did not in time (the indexer lags, is stopped, or the block was
 * reorged away). A failed read counts as not shown yet: the transaction is mined whatever the
 * database says, and the answer must not invite the client to send it again.
 */
export async function waitUntilProjected(db: DbExecutor, m: MinedRelay, opts: { waitMs: number; pollMs: number }): Promise<boolean> {
  const deadline = Date.now() + opts.waitMs;
  for (;;) {
    try {
      if (await projectionShows(db, m)) return true;
    } catch {
      // Not shown yet, as far as this answer can tell.
    }
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(left, opts.pollMs));
  }
}
