import type { Kysely } from 'kysely';

/**
 * The Stock token's share multiplier an order's `quantity`, `price` and `filled_quantity` are
 * stated in (docs/corporate-actions.md, "Splits"): 1e36 until the stock's first split. A split
 * restates every open order of its stock in the new multiplier; a sell's `locked` stays in the
 * stock's base units, which a split never changes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('stock_orders')
    .addColumn('multiplier', 'text', (c) => c.notNull().defaultTo('1' + '0'.repeat(36)))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('stock_orders').dropColumn('multiplier').execute();
}
