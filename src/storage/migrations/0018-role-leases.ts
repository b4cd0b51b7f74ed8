import type { Kysely } from 'kysely';

/**
 * Leases of the singleton roles (src/storage/lease-store.ts, docs/deployment.md "Leases"): one row
 * per lease. `token` is the fencing token, raised by one at every change of holder; `beat` is raised
 * by the holder at every renewal, and a waiter takes over when it has seen the same (token, beat)
 * for a whole TTL on its own clock, so no two hosts' clocks are ever compared. An empty `holder`
 * is a lease released on a clean stop.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('token', 'bigint', (c) => c.notNull())
    .addColumn('beat', 'bigint', (c) => c.notNull())
    // Wall-clock ms of the holder, for operators reading the table; never used to decide.
    .addColumn('acquired_at', 'bigint', (c) => c.notNull())
    .addColumn('renewed_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('leases').execute();
}
