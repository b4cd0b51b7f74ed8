import { sql, type Kysely } from 'kysely';

/**
 * Written only with the schema builder and portable SQL so the same migration runs on SQLite and
 * PostgreSQL. Column types: `text` for strings and decimal amounts, `integer` for small numbers and
 * 0/1 flags, `bigint` for millisecond times.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('api_key', 'text', (c) => c.primaryKey())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('permission', 'text', (c) => c.notNull())
    .addColumn('ip_whitelist', 'text', (c) => c.notNull())
    .addColumn('chain_id', 'integer', (c) => c.notNull())
    .addColumn('product', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('api_keys_permission_ck', sql`permission in ('READ_ONLY', 'WRITABLE')`)
    .addCheckConstraint('api_keys_active_ck', sql`active in (0, 1)`)
    .execute();
  await db.schema.createIndex('api_keys_user_address_idx').on('api_keys').column('user_address').execute();

  await db.schema
    .createTable('candles')
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('interval', 'text', (c) => c.notNull())
    .addColumn('open_time', 'bigint', (c) => c.notNull())
    .addColumn('open', 'text', (c) => c.notNull())
    .addColumn('high', 'text', (c) => c.notNull())
    .addColumn('low', 'text', (c) => c.notNull())
    .addColumn('close', 'text', (c) => c.notNull())
    .addColumn('volume', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('candles_pk', ['symbol', 'interval', 'open_time'])
    .execute();

  await db.schema
    .createTable('quotes')
    .addColumn('symbol', 'text', (c) => c.primaryKey())
    .addColumn('bid', 'text', (c) => c.notNull())
    .addColumn('ask', 'text', (c) => c.notNull())
    .addColumn('last', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('meta').execute();
  await db.schema.dropTable('quotes').execute();
  await db.schema.dropTable('candles').execute();
  await db.schema.dropTable('api_keys').execute();
}
