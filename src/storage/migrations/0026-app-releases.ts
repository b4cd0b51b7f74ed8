import type { Kysely } from 'kysely';

/**
 * Every tokex release that has started on this database (docs/upgrades.md "Versions and the
 * database"): `openDatabase` adds its own version once its migrations are applied, and refuses to
 * start when the highest version here is newer than itself, so an older release never writes into
 * data it cannot read. Releases before 0.2.0 do not know this table; they refuse the database for
 * this migration's name instead (Kysely's "corrupted migrations").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('app_releases')
    // package.json's semantic version (src/config/build-info.ts); compared as versions, not text.
    .addColumn('version', 'text', (c) => c.primaryKey())
    .addColumn('first_started_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('app_releases').execute();
}
