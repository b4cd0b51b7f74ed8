/**
 * Why the executor closed a stock order REJECTED or EXPIRED (migration 0021): written by the
 * executor before it sends the settlement that closes the order, read by the API (`GET orders/{id}`,
 * the lists) and the `orders` stream as `history.reason`. The sentence is short and secret-free:
 * the symbol, the rule, its figures (docs/stock-api.md, "Why an order was rejected or expired").
 */
import { bulkInsertRecords, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';

export interface OrderCloseReason {
  /** Decimal string of the on-chain order id. */
  orderId: string;
  /** `Canceled` only for the orders a migration closed (reason `MIGRATED: …`). */
  status: 'Rejected' | 'Expired' | 'Canceled';
  reason: string;
  /** ms. */
  decidedAt: number;
}

const UPSERT: BulkTable = {
  table: 'stock_order_reasons',
  columns: ['order_id', 'status', 'reason', 'decided_at'],
  onConflict: { columns: ['order_id'], update: ['status', 'reason', 'decided_at'] },
};

/** Records (or replaces) the reasons of these orders, one entry per order id. */
export async function recordCloseReasons(db: DbExecutor, reasons: readonly OrderCloseReason[]): Promise<void> {
  const unique = [...new Map(reasons.map((r) => [r.orderId, r])).values()];
  await bulkInsertRecords(db, UPSERT, unique);
}

/**
 * The reasons of these orders that have one for their current status (a reason written for a
 * decision the chain did not carry out, the order then filled or cancelled, is not answered).
 */
export async function loadCloseReasons(db: DbExecutor, orders: ReadonlyArray<{ orderId: string; status: string }>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const wanted = new Map(orders.filter((o) => o.status === 'Rejected' || o.status === 'Expired' || o.status === 'Canceled').map((o) => [o.orderId, o.status]));
  for (const ids of chunked([...wanted.keys()])) {
    const rows = await kyselyOf(db).selectFrom('stock_order_reasons').select(['order_id', 'status', 'reason']).where('order_id', 'in', ids).execute();
    for (const r of rows) if (wanted.get(r.order_id) === r.status) out.set(r.order_id, r.reason);
  }
  return out;
}
