import type { Kysely } from 'kysely';

/**
 * The liquidity pool and the insurance fund on the perpetual venue's read side (docs/perp-api.md
 * "Liquidity pool", "Insurance fund"): the engine's `liquidity` events (each addition to and
 * removal from the pool, per holder) and `insurance` events (liquidation fees in, bad debt out),
 * projected for `GET liquidity/history` and `GET insurance-fund`. Keyed by the event's seq, so a
 * batch the projector writes twice leaves one row.
 *
 * Money and shares are integer strings (micro-USD; micro-shares, 1 share = 10⁶); times are ms.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_liquidity_moves')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('shares', 'text', (c) => c.notNull())
    .addColumn('holder_shares', 'text', (c) => c.notNull())
    .addColumn('total_shares', 'text', (c) => c.notNull())
    .addColumn('pool_equity', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'bigint', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('perp_liquidity_moves_account_idx').on('perp_liquidity_moves').columns(['account', 'ts']).execute();

  await db.schema
    .createTable('perp_insurance_moves')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    // Signed: positive into the fund.
    .addColumn('delta', 'text', (c) => c.notNull())
    .addColumn('balance', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('perp_insurance_moves_ts_idx').on('perp_insurance_moves').column('ts').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['perp_insurance_moves', 'perp_liquidity_moves']) await db.schema.dropTable(t).execute();
}
