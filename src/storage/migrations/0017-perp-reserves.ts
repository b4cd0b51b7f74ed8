import { sql, type Kysely } from 'kysely';

/**
 * Proof of reserves of the perpetual venue (docs/proof-of-reserves.md): one row per epoch (the
 * funding interval's start, ms) with the Merkle-sum tree's root and total, where it was posted and
 * the solvency check; the accounts' leaves with their parts and salt, so the API can give each
 * account its leaf; and every node of the tree, so a proof is one query of log2(n) rows instead of
 * a rebuild.
 *
 * Amounts are integer strings of collateral-token units (USDC, 6 decimals = the engine's micro-USD).
 * Status: BUILT (stored, not yet on chain) → POSTED (the registry holds it), or SKIPPED (a later
 * epoch reached the registry first: epochs only increase there).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_reserve_epochs')
    .addColumn('epoch', 'bigint', (c) => c.primaryKey())
    .addColumn('root', 'text', (c) => c.notNull())
    .addColumn('total', 'text', (c) => c.notNull())
    .addColumn('leaf_count', 'integer', (c) => c.notNull())
    // The negative equity left out of `total` (accounts committed at 0), for the record.
    .addColumn('bad_debt', 'text', (c) => c.notNull())
    .addColumn('snapshot_ts', 'bigint', (c) => c.notNull())
    .addColumn('engine_seq', 'bigint', (c) => c.notNull())
    .addColumn('chain_id', 'integer', (c) => c.notNull())
    .addColumn('registry', 'text', (c) => c.notNull())
    .addColumn('vault', 'text', (c) => c.notNull())
    .addColumn('collateral_token', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql.raw(`status in ('BUILT', 'POSTED', 'SKIPPED')`)))
    .addColumn('tx_hash', 'text')
    .addColumn('block_number', 'bigint')
    // The vault's collateral-token balance when checked after posting, and whether it covers `total` (0/1).
    .addColumn('vault_balance', 'text')
    .addColumn('solvent', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('perp_reserve_leaves')
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .addColumn('leaf_index', 'integer', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('salt', 'text', (c) => c.notNull())
    // Committed equity (never below 0), pending withdrawals, and the account's negative equity left out.
    .addColumn('equity', 'text', (c) => c.notNull())
    .addColumn('pending_withdrawals', 'text', (c) => c.notNull())
    .addColumn('bad_debt', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_reserve_leaves_pk', ['epoch', 'leaf_index'])
    .execute();
  await db.schema.createIndex('perp_reserve_leaves_account_idx').on('perp_reserve_leaves').columns(['account', 'epoch']).unique().execute();
  await db.schema
    .createTable('perp_reserve_nodes')
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    // 0: the leaves; the last level holds the root.
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('sum', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_reserve_nodes_pk', ['epoch', 'level', 'idx'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('perp_reserve_nodes').execute();
  await db.schema.dropTable('perp_reserve_leaves').execute();
  await db.schema.dropTable('perp_reserve_epochs').execute();
}
