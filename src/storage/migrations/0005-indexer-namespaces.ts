import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Room for a second venue in the same database.
 *
 * 1. The indexer's record of the chain is namespaced per indexer: `chain_blocks` and `chain_events`
 *    gain an `indexer` column (the checkpoint's name) at the front of their primary keys, so that a
 *    rollback of one indexer (`deleteBlocksAbove`) never touches another's rows. `chain_events` stays
 *    keyed by position within its indexer, `(indexer, block_number, log_index)`, so a catch-up still
 *    appends at the right edge of the key (migration 0003), and stays `WITHOUT ROWID` on SQLite.
 *    Existing rows belong to the one checkpoint stored, or to `stock` (the stock indexer's name).
 * 2. The stock domain's tables carry its name, so that `orders`, `positions` and the rest are free
 *    for the perpetual venue: every table only the stock domain uses starts with `stock_`
 *    (`stock_operations` already did). Indexes, and on PostgreSQL the constraints (whose indexes
 *    share the schema's namespace), are renamed with their tables. Rows are kept.
 */
export const RENAMES: ReadonlyArray<readonly [from: string, to: string]> = [
  ['orders', 'stock_orders'],
  ['order_fills', 'stock_order_fills'],
  ['positions', 'stock_positions'],
  ['cash_operations', 'stock_cash_operations'],
  ['tx_records', 'stock_tx_records'],
  ['calldata_requests', 'stock_calldata_requests'],
];

/** Secondary indexes of the renamed tables: [table, old name, new name, columns]. */
const INDEXES: ReadonlyArray<readonly [table: string, from: string, to: string, columns: readonly string[]]> = [
  ['stock_orders', 'orders_place_tx_idx', 'stock_orders_place_tx_idx', ['place_tx_hash']],
  ['stock_order_fills', 'order_fills_order_idx', 'stock_order_fills_order_idx', ['order_id']],
  ['stock_cash_operations', 'cash_operations_tx_idx', 'stock_cash_operations_tx_idx', ['tx_hash']],
  ['stock_cash_operations', 'cash_operations_queue_idx', 'stock_cash_operations_queue_idx', ['kind', 'queue_id']],
  ['stock_tx_records', 'tx_records_api_key_idx', 'stock_tx_records_api_key_idx', ['api_key']],
  // The wallet indexes of 0004 (read access by a bound key).
  ['stock_orders', 'orders_user_created_idx', 'stock_orders_user_created_idx', ['user_address', 'created_at']],
  ['stock_cash_operations', 'cash_operations_user_created_idx', 'stock_cash_operations_user_created_idx', ['user_address', 'created_at']],
];

/** The indexer name of rows stored before this migration. */
const DEFAULT_INDEXER = 'stock';

export async function up(db: Kysely<any>): Promise<void> {
  const owner = await ownerOfExistingRows(db);
  if (isPostgres(db)) {
    await sql`alter table chain_events add column indexer text not null default ${sql.lit(owner)}`.execute(db);
    await sql`alter table chain_events alter column indexer drop default`.execute(db);
    await sql`alter table chain_events drop constraint chain_events_pk`.execute(db);
    await sql`alter table chain_events add constraint chain_events_pk primary key (indexer, block_number, log_index)`.execute(db);
    await sql`alter table chain_blocks add column indexer text not null default ${sql.lit(owner)}`.execute(db);
    await sql`alter table chain_blocks alter column indexer drop default`.execute(db);
    await sql`alter table chain_blocks drop constraint chain_blocks_pkey`.execute(db);
    await sql`alter table chain_blocks add constraint chain_blocks_pk primary key (indexer, hash)`.execute(db);
    await db.schema.dropIndex('chain_events_entity_idx').execute();
    await db.schema.dropIndex('chain_blocks_number_idx').execute();
  } else {
    await rebuildChainTables(db, { namespaced: true, owner });
  }
  await db.schema.createIndex('chain_events_entity_idx').on('chain_events').columns(['indexer', 'entity_key']).execute();
  await db.schema.createIndex('chain_blocks_number_idx').on('chain_blocks').columns(['indexer', 'number']).execute();

  for (const [from, to] of RENAMES) await renameTable(db, from, to);
  for (const [table, from, to, columns] of INDEXES) {
    await db.schema.dropIndex(from).execute();
    await db.schema.createIndex(to).on(table).columns([...columns]).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [from, to] of RENAMES) await renameTable(db, to, from);
  for (const [table, from, to, columns] of INDEXES) {
    await db.schema.dropIndex(to).execute();
    await db.schema.createIndex(from).on(renamedBack(table)).columns([...columns]).execute();
  }

  // Without the namespace only one indexer's rows fit: those of the one checkpoint, or `stock`'s.
  const owner = await ownerOfExistingRows(db);
  await db.schema.dropIndex('chain_events_entity_idx').execute();
  await db.schema.dropIndex('chain_blocks_number_idx').execute();
  if (isPostgres(db)) {
    await sql`delete from chain_events where indexer <> ${owner}`.execute(db);
    await sql`delete from chain_blocks where indexer <> ${owner}`.execute(db);
    await sql`alter table chain_events drop constraint chain_events_pk`.execute(db);
    await sql`alter table chain_events drop column indexer`.execute(db);
    await sql`alter table chain_events add constraint chain_events_pk primary key (block_number, log_index)`.execute(db);
    await sql`alter table chain_blocks drop constraint chain_blocks_pk`.execute(db);
    await sql`alter table chain_blocks drop column indexer`.execute(db);
    await sql`alter table chain_blocks add constraint chain_blocks_pkey primary key (hash)`.execute(db);
  } else {
    await rebuildChainTables(db, { namespaced: false, owner });
  }
  await db.schema.createIndex('chain_events_entity_idx').on('chain_events').column('entity_key').execute();
  await db.schema.createIndex('chain_blocks_number_idx').on('chain_blocks').column('number').execute();
}

function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

function renamedBack(table: string): string {
  return RENAMES.find(([, to]) => to === table)?.[0] ?? table;
}

async function ownerOfExistingRows(db: Kysely<any>): Promise<string> {
  const rows = await db.selectFrom('indexer_checkpoints').select('name').execute();
  return rows.length === 1 ? String(rows[0].name) : DEFAULT_INDEXER;
}

/**
 * Renames a table; on PostgreSQL also the constraints named after it (`orders_pkey`,
 * `order_fills_pk`, `orders_side_ck`, ...): a primary key's index lives in the schema's namespace,
 * so the perpetual venue's `orders` would otherwise collide with the stock table's `orders_pkey`.
 * SQLite keeps constraint names inside the table and has no such clash. Secondary indexes are
 * renamed by the caller (SQLite cannot rename an index).
 */
async function renameTable(db: Kysely<any>, from: string, to: string): Promise<void> {
  await db.schema.alterTable(from).renameTo(to).execute();
  if (!isPostgres(db)) return;
  const { rows } = await sql<{ name: string }>`
    select c.conname as name
    from pg_catalog.pg_constraint c
    join pg_catalog.pg_class t on t.oid = c.conrelid
    join pg_catalog.pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and t.relname = ${to}`.execute(db);
  for (const { name } of rows) {
    if (!name.startsWith(`${from}_`)) continue;
    const next = `${to}_${name.slice(from.length + 1)}`;
    await sql`alter table ${sql.table(to)} rename constraint ${sql.id(name)} to ${sql.id(next)}`.execute(db);
  }
}

const EVENT_COLUMNS = ['block_hash', 'block_number', 'block_timestamp', 'tx_hash', 'log_index', 'ordinal', 'address', 'event_name', 'args', 'entity_key'];
const BLOCK_COLUMNS = ['hash', 'number', 'parent_hash', 'timestamp'];

/**
 * SQLite cannot change a primary key: both tables are rebuilt, with or without the `indexer`
 * column, and their rows copied (`owner`'s rows only when the column goes away).
 */
async function rebuildChainTables(db: Kysely<any>, opts: { namespaced: boolean; owner: string }): Promise<void> {
  const { namespaced, owner } = opts;
  let events = db.schema.createTable('chain_events_next');
  if (namespaced) events = events.addColumn('indexer', 'text', (c) => c.notNull());
  events = events
    .addColumn('block_hash', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_timestamp', 'bigint', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('args', 'text', (c) => c.notNull())
    .addColumn('entity_key', 'text')
    .addPrimaryKeyConstraint('chain_events_pk', (namespaced ? ['indexer', 'block_number', 'log_index'] : ['block_number', 'log_index']) as never)
    .modifyEnd(sql`without rowid`);
  await events.execute();

  let blocks = db.schema.createTable('chain_blocks_next');
  if (namespaced) blocks = blocks.addColumn('indexer', 'text', (c) => c.notNull());
  blocks = blocks
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('number', 'bigint', (c) => c.notNull())
    .addColumn('parent_hash', 'text')
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_blocks_pk', (namespaced ? ['indexer', 'hash'] : ['hash']) as never);
  await blocks.execute();

  const copy = async (table: string, columns: readonly string[]) => {
    const cols = sql.join(columns.map((c) => sql.ref(c)));
    if (namespaced) {
      await sql`insert into ${sql.table(`${table}_next`)} (indexer, ${cols}) select ${owner}, ${cols} from ${sql.table(table)}`.execute(db);
    } else {
      await sql`insert into ${sql.table(`${table}_next`)} (${cols}) select ${cols} from ${sql.table(table)} where indexer = ${owner}`.execute(db);
    }
    await db.schema.dropTable(table).execute();
    await db.schema.alterTable(`${table}_next`).renameTo(table).execute();
  };
  await copy('chain_events', EVENT_COLUMNS);
  await copy('chain_blocks', BLOCK_COLUMNS);
}
