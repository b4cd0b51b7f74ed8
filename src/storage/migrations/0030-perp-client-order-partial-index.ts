import { sql, type Kysely } from 'kysely';

/**
 * The look-up of an order by its clientOrderId (`perp_orders_client_idx`, migration 0022) indexes
 * only the orders that have one. An order placed without a clientOrderId (stored NULL) can never be
 * found through it, yet every such row cost the projection an index entry on insert: about 3–5 µs
 * an order of the projection thread's 22 (docs/performance.md "The budget of a batch order",
 * bench/projection-index-cost-bench.ts). Both engines use a partial index for
 * `client_order_id = ?`, which implies the index's condition.
 *
 * Rebuilding the index reads the table once, on the history file at its first open by this release
 * (before any role starts, like every migration).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('perp_orders_client_idx').execute();
  await db.schema
    .createIndex('perp_orders_client_idx')
    .on('perp_orders')
    .columns(['account', 'client_order_id'])
    .where(sql.ref('client_order_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('perp_orders_client_idx').execute();
  await db.schema.createIndex('perp_orders_client_idx').on('perp_orders').columns(['account', 'client_order_id']).execute();
}
