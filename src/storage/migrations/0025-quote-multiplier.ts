import type { Kysely } from 'kysely';

/**
 * The Stock token's share multiplier a stored quote is stated in (src/marketdata/price-splits.ts):
 * null for a stock that never split (1e18). Whoever fills on a quote checks it against the chain's.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('quotes').addColumn('multiplier', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('quotes').dropColumn('multiplier').execute();
}
