import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * One key table for both APIs: `api` (`stock` | `perp`) and `permissions` (a JSON array, validated
 * by src/auth/api-key-model.ts) replace the single stock `permission`. Existing rows become stock
 * keys holding their one permission, so every issued key keeps working unchanged.
 *
 * PostgreSQL alters the table in place. SQLite cannot drop a column that a CHECK constraint names,
 * so it rebuilds the table and copies the rows.
 *
 * A key bound to a wallet reads that wallet's orders and operations whoever recorded them, so the
 * stock records get an index by wallet: without it every list of a bound key scans the table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, index] of WALLET_INDEXES) {
    await db.schema.createIndex(index).on(table).columns(['user_address', 'created_at']).execute();
  }
  if (isPostgres(db)) {
    await sql`alter table api_keys add column api text not null default 'stock'`.execute(db);
    await sql`alter table api_keys alter column api drop default`.execute(db);
    await sql`alter table api_keys add column permissions text`.execute(db);
    await sql`update api_keys set permissions = '["' || permission || '"]'`.execute(db);
    await sql`alter table api_keys alter column permissions set not null`.execute(db);
    await sql`alter table api_keys drop constraint api_keys_permission_ck`.execute(db);
    await sql`alter table api_keys drop column permission`.execute(db);
    await sql`alter table api_keys add constraint api_keys_api_ck check (api in ('stock', 'perp'))`.execute(db);
  } else {
    await createKeyTable(db, 'api_keys_next', 'permissions');
    await sql`insert into api_keys_next
      (api_key, api, secret_ciphertext, label, permissions, ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at)
      select api_key, 'stock', secret_ciphertext, label, '["' || permission || '"]', ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at
      from api_keys`.execute(db);
    await db.schema.dropTable('api_keys').execute();
    await db.schema.alterTable('api_keys_next').renameTo('api_keys').execute();
    await db.schema.createIndex('api_keys_user_address_idx').on('api_keys').column('user_address').execute();
  }
}

/**
 * Back to stock-only keys: perp keys cannot be expressed there and are deleted; a stock key keeps
 * its one permission.
 */
export async function down(db: Kysely<any>): Promise<void> {
  for (const [, index] of WALLET_INDEXES) await db.schema.dropIndex(index).execute();
  await sql`delete from api_keys where api <> 'stock'`.execute(db);
  const single = sql`replace(replace(permissions, '["', ''), '"]', '')`;
  if (isPostgres(db)) {
    await sql`alter table api_keys add column permission text`.execute(db);
    await sql`update api_keys set permission = ${single}`.execute(db);
    await sql`alter table api_keys alter column permission set not null`.execute(db);
    await sql`alter table api_keys add constraint api_keys_permission_ck check (permission in ('READ_ONLY', 'WRITABLE'))`.execute(db);
    await sql`alter table api_keys drop constraint api_keys_api_ck`.execute(db);
    await sql`alter table api_keys drop column api`.execute(db);
    await sql`alter table api_keys drop column permissions`.execute(db);
    return;
  }
  await createKeyTable(db, 'api_keys_prev', 'permission');
  await sql`insert into api_keys_prev
    (api_key, secret_ciphertext, label, permission, ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at)
    select api_key, secret_ciphertext, label, ${single}, ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at
    from api_keys`.execute(db);
  await db.schema.dropTable('api_keys').execute();
  await db.schema.alterTable('api_keys_prev').renameTo('api_keys').execute();
  await db.schema.createIndex('api_keys_user_address_idx').on('api_keys').column('user_address').execute();
}

/**
 * The key table on SQLite with the permission column(s) of one side of this migration: `permissions`
 * (JSON, with `api`) after it, the single checked `permission` before it.
 */
async function createKeyTable(db: Kysely<any>, name: string, layout: 'permissions' | 'permission'): Promise<void> {
  let t = db.schema.createTable(name).addColumn('api_key', 'text', (c) => c.primaryKey());
  if (layout === 'permissions') t = t.addColumn('api', 'text', (c) => c.notNull());
  t = t
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn(layout, 'text', (c) => c.notNull())
    .addColumn('ip_whitelist', 'text', (c) => c.notNull())
    .addColumn('chain_id', 'integer', (c) => c.notNull())
    .addColumn('product', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('api_keys_active_ck', sql`active in (0, 1)`);
  t =
    layout === 'permissions'
      ? t.addCheckConstraint('api_keys_api_ck', sql`api in ('stock', 'perp')`)
      : t.addCheckConstraint('api_keys_permission_ck', sql`permission in ('READ_ONLY', 'WRITABLE')`);
  await t.execute();
}

const WALLET_INDEXES = [
  ['orders', 'orders_user_created_idx'],
  ['cash_operations', 'cash_operations_user_created_idx'],
  ['stock_operations', 'stock_operations_user_created_idx'],
] as const;

function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
