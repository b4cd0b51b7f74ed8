import type { Kysely } from 'kysely';

/**
 * One-Click Trade on the perpetual API (docs/perp-api.md "One-Click Trade"): the session signer a
 * wallet authorised to sign its orders, one per account; for every address ever enabled by an
 * account, the latest expiry it was authorised until (an address disabled or replaced early cannot
 * be enabled again before then, so its old signed orders never revive); and the nonces of the
 * signed enablements already used.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The account's current (or last) session; read by primary key on every session-signed order.
  await db.schema
    .createTable('perp_sessions')
    .addColumn('account', 'text', (c) => c.primaryKey())
    .addColumn('session_address', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('enabled_at', 'bigint', (c) => c.notNull())
    // Set by a disable; a later enable clears it.
    .addColumn('disabled_at', 'bigint')
    .execute();

  await db.schema
    .createTable('perp_session_addresses')
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('session_address', 'text', (c) => c.notNull())
    .addColumn('authorised_until', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_session_addresses_pk', ['account', 'session_address'])
    .execute();
  await db.schema.createIndex('perp_session_addresses_until_idx').on('perp_session_addresses').column('authorised_until').execute();

  await db.schema
    .createTable('perp_session_nonces')
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_session_nonces_pk', ['account', 'nonce'])
    .execute();
  await db.schema.createIndex('perp_session_nonces_expires_idx').on('perp_session_nonces').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['perp_session_nonces', 'perp_session_addresses', 'perp_sessions']) await db.schema.dropTable(t).execute();
}
