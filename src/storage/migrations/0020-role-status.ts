import type { Kysely } from 'kysely';

/**
 * What each singleton role last reported about its progress (src/storage/role-status-store.ts),
 * written by the process that runs it and read by every API's `/readyz` and by `tokex status`
 * (docs/operations.md). One row per role; `detail` is a small JSON object of figures (no secrets,
 * keys or addresses). Times are the writer's wall clock in ms: readiness compares them with the
 * reader's, so hosts keep their clocks in sync (NTP), as every operator's does.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('role_status')
    .addColumn('role', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('lease_state', 'text', (c) => c.notNull())
    // Null until the role has made progress once.
    .addColumn('progress_at', 'bigint')
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('role_status').execute();
}
