import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach } from 'vitest';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { setMeta } from '../../src/storage/meta-store.ts';
import { withTransaction } from '../../src/storage/transaction.ts';

/**
 * The engines every repository suite runs on: SQLite always, PostgreSQL when DATABASE_URL is set.
 * Use with `describe.each(testDatabases)('... ($name)', ({ open }) => { ... })`.
 *
 * Each `open()` gives an empty, migrated database of its own: a fresh SQLite file in a temp folder,
 * or a fresh PostgreSQL schema; `close()` deletes it. Suites can therefore run in parallel on one
 * PostgreSQL database.
 */
export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  open(): Promise<Db>;
}

export function uniqueSchemaName(prefix = 't'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export async function openTestSqlite(): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'tokex-db-'));
  const db = await openDatabase({ sqlitePath: join(dir, 'test.sqlite') });
  const close = db.close;
  let done: Promise<void> | undefined;
  db.close = () =>
    (done ??= close().finally(() => rmSync(dir, { recursive: true, force: true })));
  return db;
}

export async function openTestPostgres(url: string): Promise<Db> {
  const schema = uniqueSchemaName();
  const db = await openDatabase({ url, schema });
  const close = db.close;
  let done: Promise<void> | undefined;
  db.close = () =>
    (done ??= (async () => {
      try {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely);
      } finally {
        await close();
      }
    })());
  return db;
}

export const testDatabases: TestDatabase[] = [
  { name: 'sqlite', open: openTestSqlite },
  ...(process.env.DATABASE_URL
    ? [{ name: 'postgres' as const, open: () => openTestPostgres(process.env.DATABASE_URL as string) }]
    : []),
];

/**
 * Gives each test of the enclosing suite a fresh database from `open` (handed to `set`) and closes
 * it after the test: `let db: Db; useFreshDatabase(open, (d) => (db = d));`.
 */
export function useFreshDatabase(open: () => Promise<Db>, set: (db: Db) => void): void {
  let current: Db | undefined;
  beforeEach(async () => {
    current = await open();
    set(current);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
}

/**
 * Holds `db`'s write lock: a transaction that has written meta `held` = 1 and waits for `release()`;
 * `committed` settles once it has committed after that.
 */
export async function holdWriteLock(db: Db): Promise<{ release: () => void; committed: Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const begun = new Promise<void>((r) => (started = r));
  const committed = withTransaction(db, async (t) => {
    await setMeta(t, 'held', '1');
    started();
    await held;
  });
  await begun;
  return { release, committed };
}
