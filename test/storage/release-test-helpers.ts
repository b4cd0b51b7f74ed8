/**
 * What the release and migration-safety tests share: databases that start empty and unmigrated (on
 * SQLite always, on PostgreSQL when DATABASE_URL is set, each in a schema of its own), and a
 * snapshot of a database's shape to compare before and after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { uniqueSchemaName } from '../support/test-databases.ts';

export interface BareDatabase {
  name: 'sqlite' | 'postgres';
  /** An empty database: no migration has run. `reopen()` opens the same one again (migrating, by default). */
  open(): Promise<BareHandle>;
}

export interface BareHandle {
  db: Db;
  /** The PostgreSQL schema, for migrateToLatest and the checks; undefined on SQLite. */
  schema: string | undefined;
  /** Another connection to the same database, through openDatabase with `migrate`. */
  reopen(migrate?: boolean): Promise<Db>;
  /** Closes every connection and deletes the database. */
  dispose(): Promise<void>;
}

async function openBareSqlite(): Promise<BareHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'tokex-rel-'));
  const sqlitePath = join(dir, 'tokex.sqlite');
  const opened: Db[] = [];
  const open = async (migrate: boolean) => {
    const db = await openDatabase({ sqlitePath, migrate });
    opened.push(db);
    return db;
  };
  const db = await open(false);
  return {
    db,
    schema: undefined,
    reopen: (migrate = true) => open(migrate),
    async dispose() {
      for (const d of opened) await d.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openBarePostgres(url: string): Promise<BareHandle> {
  const schema = uniqueSchemaName('rel');
  const opened: Db[] = [];
  const open = async (migrate: boolean) => {
    const db = await openDatabase({ url, schema, migrate });
    opened.push(db);
    return db;
  };
  const db = await open(false);
  return {
    db,
    schema,
    reopen: (migrate = true) => open(migrate),
    async dispose() {
      try {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely);
      } finally {
        for (const d of opened) await d.close();
      }
    },
  };
}

export const bareDatabases: BareDatabase[] = [
  { name: 'sqlite', open: openBareSqlite },
  ...(process.env.DATABASE_URL ? [{ name: 'postgres' as const, open: () => openBarePostgres(process.env.DATABASE_URL as string) }] : []),
];

export interface SchemaSnapshot {
  /** `table.column type`, every column of every table (Kysely's own included), sorted. */
  columns: string[];
  /** Index names, sorted. */
  indexes: string[];
  /** kysely_migration's rows, as stored. */
  migrations: Array<{ name: string; timestamp: string }>;
}

/** The shape of the database: tables, columns, indexes and the applied migrations. */
export async function schemaSnapshot(db: Db): Promise<SchemaSnapshot> {
  let columns: string[];
  let indexes: string[];
  if (db.dialect === 'sqlite') {
    const cols = await sql<{ t: string; c: string; type: string }>`
      select m.name as t, p.name as c, p.type as type
      from sqlite_master m join pragma_table_info(m.name) p
      where m.type = 'table'`.execute(db.kysely);
    columns = cols.rows.map((r) => `${r.t}.${r.c} ${r.type}`);
    const idx = await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(db.kysely);
    indexes = idx.rows.map((r) => r.name);
  } else {
    const cols = await sql<{ t: string; c: string; type: string }>`
      select table_name as t, column_name as c, data_type as type
      from information_schema.columns where table_schema = current_schema()`.execute(db.kysely);
    columns = cols.rows.map((r) => `${r.t}.${r.c} ${r.type}`);
    const idx = await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(db.kysely);
    indexes = idx.rows.map((r) => r.name);
  }
  const hasMigrations = columns.some((c) => c.startsWith('kysely_migration.name '));
  const migrations = hasMigrations
    ? (await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration order by name`.execute(db.kysely)).rows
    : [];
  return { columns: columns.sort(), indexes: indexes.sort(), migrations };
}

/** The tables of a snapshot, sorted. */
export function tablesOf(s: SchemaSnapshot): string[] {
  return [...new Set(s.columns.map((c) => c.slice(0, c.indexOf('.'))))].sort();
}
