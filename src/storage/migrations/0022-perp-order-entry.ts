import type { Kysely } from 'kysely';

/**
 * Order entry for trading firms (docs/perp-api.md "Trigger orders", "Amend", "Orders by id"): a
 * trigger order's trigger price, what it watches, whether it closes the position and when it fired;
 * and an index for reading an order by its clientOrderId (unique per account in the engine).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('perp_orders').addColumn('trigger_price_ticks', 'bigint').execute();
  await db.schema.alterTable('perp_orders').addColumn('trigger_by', 'text').execute();
  await db.schema.alterTable('perp_orders').addColumn('close_position', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('perp_orders').addColumn('triggered_at', 'bigint').execute();
  await db.schema.createIndex('perp_orders_client_idx').on('perp_orders').columns(['account', 'client_order_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('perp_orders_client_idx').execute();
  for (const c of ['triggered_at', 'close_position', 'trigger_by', 'trigger_price_ticks']) await db.schema.alterTable('perp_orders').dropColumn(c).execute();
}
