import type { Kysely } from 'kysely';

/**
 * Corporate actions the venue applies on chain (docs/corporate-actions.md): those the operator
 * added at run time (`tokex corporate-actions add`) and those of the configuration file due on or
 * after the venue's deployment, with their state (`scheduled`, `applied`, `failed`), and, for a
 * dividend, the record block, the totals and the distribution's root, funding transaction and id.
 * One action per symbol and ex-date (the primary key says so). Amounts are integer strings: shares
 * in stock units, cash in the cash token's units.
 *
 * `dividend_payouts`: one row per holder of record of a dividend, the DIVIDEND operation the API
 * shows that holder: its shares, the amount paid, the Merkle proof of its leaf, and once paid the
 * transaction that paid it (the operator's push, or the holder's own claim).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('corporate_actions')
    .addColumn('action_id', 'text', (c) => c.primaryKey())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('ex_date', 'text', (c) => c.notNull())
    .addColumn('record_date', 'text')
    .addColumn('ratio', 'text')
    .addColumn('amount', 'text')
    .addColumn('currency', 'text')
    // `cli` (added at run time) or `file` (from the configuration file).
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('stock_address', 'text')
    .addColumn('record_block', 'bigint')
    .addColumn('withholding_bps', 'integer')
    .addColumn('shares_of_record', 'text')
    .addColumn('gross_amount', 'text')
    .addColumn('withholding_amount', 'text')
    .addColumn('net_amount', 'text')
    .addColumn('remainder_units', 'text')
    .addColumn('holders', 'integer')
    .addColumn('merkle_root', 'text')
    .addColumn('distributor', 'text')
    .addColumn('distribution_id', 'text')
    .addColumn('tx_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('applied_at', 'bigint')
    .addUniqueConstraint('corporate_actions_symbol_date', ['symbol', 'ex_date'])
    .execute();
  await db.schema.createIndex('corporate_actions_status_idx').on('corporate_actions').columns(['status', 'ex_date']).execute();

  await db.schema
    .createTable('dividend_payouts')
    .addColumn('operation_id', 'text', (c) => c.primaryKey())
    .addColumn('action_id', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('stock_address', 'text', (c) => c.notNull())
    .addColumn('shares', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('proof', 'text', (c) => c.notNull())
    // `pending` until a transaction pays the leaf, then `paid`.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('block_number', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('paid_at', 'bigint')
    .execute();
  await db.schema.createIndex('dividend_payouts_user_idx').on('dividend_payouts').columns(['user_address', 'created_at']).execute();
  await db.schema.createIndex('dividend_payouts_action_idx').on('dividend_payouts').columns(['action_id', 'status']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dividend_payouts').execute();
  await db.schema.dropTable('corporate_actions').execute();
}
