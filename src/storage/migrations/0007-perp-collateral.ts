import { sql, type Kysely } from 'kysely';

/**
 * The perpetual venue's collateral movements as the perp indexer reads them off the MarginVault
 * (docs/indexer.md): one row per `Deposited` / `Withdrawn` log, keyed `${txHash}-${logIndex}`.
 * `applied` says whether the engine has taken the movement into its margin accounts; `orphaned`
 * marks an applied movement whose block a reorg removed, kept until the engine has reversed it
 * (an unapplied one is simply deleted).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_collateral_events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql.raw(`kind in ('deposit', 'withdrawal')`)))
    .addColumn('account', 'text', (c) => c.notNull())
    // Integer string in collateral-token units.
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('block_timestamp', 'bigint', (c) => c.notNull())
    .addColumn('withdrawal_id', 'text')
    .addColumn('applied', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('applied_at', 'bigint')
    .addColumn('orphaned', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The engine's question: what is not applied yet, in chain order.
  await db.schema
    .createIndex('perp_collateral_events_pending_idx')
    .on('perp_collateral_events')
    .columns(['applied', 'block_number', 'log_index'])
    .execute();
  // An account's history (the perp API's deposit and withdrawal lists).
  await db.schema.createIndex('perp_collateral_events_account_idx').on('perp_collateral_events').columns(['account', 'block_number']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('perp_collateral_events').execute();
}
