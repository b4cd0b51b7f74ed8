import type { Kysely } from 'kysely';

/**
 * The nonces of wallet-signed perp API-key creations already used (docs/perp-api.md): a signed
 * `CreateApiKey` message creates one key, once. A row is kept until well after its message's
 * expiry, when the signature is refused as expired anyway.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_api_key_nonces')
    .addColumn('wallet', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expiry', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_api_key_nonces_pk', ['wallet', 'nonce'])
    .execute();
  await db.schema.createIndex('perp_api_key_nonces_expiry_idx').on('perp_api_key_nonces').column('expiry').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('perp_api_key_nonces').execute();
}
