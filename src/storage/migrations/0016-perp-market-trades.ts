import type { Kysely } from 'kysely';

/**
 * The public trade list of an instrument (docs/perp-api.md "Market data") reads the taker's row of
 * each fill by symbol, newest first: without this index every page would scan the fills of every
 * instrument and account.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('perp_trades_symbol_idx').on('perp_trades').columns(['symbol', 'role', 'ts']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('perp_trades_symbol_idx').execute();
}
