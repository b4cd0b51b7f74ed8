import type { Kysely } from 'kysely';

/**
 * Why the executor closed a stock order REJECTED or EXPIRED (docs/stock-api.md, "Why an order was
 * rejected or expired"): the chain records only the final status, so the executor writes a short,
 * secret-free sentence here before it sends the settlement that closes the order, and the API and
 * the `orders` stream show it as `history.reason`. Keyed by the on-chain order id (decimal string,
 * as `stock_orders.order_id`); a later decision for the same order replaces the earlier one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stock_order_reasons')
    .addColumn('order_id', 'text', (c) => c.primaryKey())
    // `Rejected` or `Expired`: the status the reason was written for.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('decided_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stock_order_reasons').execute();
}
