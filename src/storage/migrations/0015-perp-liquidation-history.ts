import type { Kysely } from 'kysely';

/**
 * Liquidations in the perpetual venue's history (docs/perp-api.md "Account and history"): the
 * engine's own liquidation order of an account is marked in `perp_orders`, and the fills of such an
 * order are marked on the liquidated account's (taker) side in `perp_trades`. Booleans are 0/1;
 * every row written before is an ordinary order or fill (0).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('perp_orders').addColumn('liquidation', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('perp_trades').addColumn('liquidation', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('perp_trades').dropColumn('liquidation').execute();
  await db.schema.alterTable('perp_orders').dropColumn('liquidation').execute();
}
