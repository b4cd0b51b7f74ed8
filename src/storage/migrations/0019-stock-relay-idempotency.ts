import type { Kysely } from 'kysely';

/**
 * One Click sends under an `Idempotency-Key` (docs/one-click.md, "Retries"): the key the client
 * named and the fingerprint of its request (method, path and body), unique per API key, so a retry
 * finds the request the first attempt queued instead of queueing a second transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('stock_relay_requests').addColumn('idempotency_key', 'text').execute();
  await db.schema.alterTable('stock_relay_requests').addColumn('request_fingerprint', 'text').execute();
  // NULLs are distinct in a unique index on SQLite and PostgreSQL alike: sends without a key never collide.
  await db.schema.createIndex('stock_relay_requests_idempotency_idx').on('stock_relay_requests').columns(['api_key', 'idempotency_key']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('stock_relay_requests_idempotency_idx').execute();
  await db.schema.alterTable('stock_relay_requests').dropColumn('request_fingerprint').execute();
  await db.schema.alterTable('stock_relay_requests').dropColumn('idempotency_key').execute();
}
