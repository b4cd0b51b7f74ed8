import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { APP_VERSION } from '../config/build-info.ts';
import { StorageUnavailableError, ValidationError } from '../errors/app-error.ts';
import { CurrentSchemaIntrospector } from './current-schema-introspector.ts';
import { assertDatabaseReadable, readDatabaseVersion, recordAppRelease } from './database-version.ts';
import { ErrorMappingDialect } from './error-mapping-dialect.ts';
import { SQLITE_PAGE_SIZE, isSqlitePageSize } from './sqlite-page-size.ts';
import { cachedStatements } from './sqlite-statement-cache.ts';
import { createSqliteWriteGate, loopWriteGateOf } from './sqlite-write-gate.ts';
import { MIGRATIONS, migrationProviderOf, type MigrationList } from './migrations/index.ts';
import type { DatabaseSchema } from './schema.ts';
import type { Db, OpenDatabaseOptions } from './database-handle.ts';
import { toStorageError } from './storage-errors.ts';

export type { DatabaseSchema } from './schema.ts';

export { kyselyOf } from './database-handle.ts';
export type { Db, DbExecutor, DialectName, OpenDatabaseOptions } from './database-handle.ts';

export const DEFAULT_SQLITE_PATH = './data/tokex.sqlite';

/** A SQLite database that lives in one connection's memory: no other connection, no worker thread, can open it. */
export function isInMemorySqlite(options: OpenDatabaseOptions): boolean {
  return options.url === undefined && (options.sqlitePath === ':memory:' || options.sqlitePath === '');
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export async function openDatabase(opts: OpenDatabaseOptions = {}): Promise<Db> {
  if (opts.schema !== undefined && !SCHEMA_NAME.test(opts.schema)) {
    throw new ValidationError('schema', 'must be an identifier of letters, digits and underscores');
  }
  const db = opts.url ? openPostgres(opts.url, opts) : openSqlite(opts.sqlitePath ?? DEFAULT_SQLITE_PATH, opts);
  try {
    // Open lazily connects; a probe turns "unreachable" into an error here rather than on first use.
    await sql`select 1`.execute(db.kysely);
    if (db.dialect === 'postgres' && opts.schema) await ensureSchema(db.kysely, opts.schema);
    if (opts.migrate ?? true) {
      // Before anything is written: a newer release's database is refused as it is.
      const facts = await assertDatabaseReadable(db, { schema: opts.schema });
      // A database that needs nothing is not written at all (no migration transaction, whose
      // BEGIN IMMEDIATE would wait on a running stack's writers for every CLI command's open).
      const applied = new Set(facts.appliedMigrations);
      if (!MIGRATIONS.every(([name]) => applied.has(name))) await migrateToLatest(db, opts.schema);
      if (!facts.releases?.some((r) => r.version === APP_VERSION)) await recordAppRelease(db);
    }
    return db;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw toStorageError(err);
  }
}

function openSqlite(path: string, opts: OpenDatabaseOptions): Db {
  const inMemory = path === ':memory:' || path === '';
  const pageSize = opts.pageSize ?? SQLITE_PAGE_SIZE;
  if (!isSqlitePageSize(pageSize)) throw new ValidationError('pageSize', 'must be a power of two from 512 to 65536');
  let raw: BetterSqlite3.Database;
  try {
    if (!inMemory) mkdirSync(dirname(resolve(path)), { recursive: true });
    raw = new BetterSqlite3(path, { timeout: opts.connectTimeoutMs ?? 5_000 });
    // The page size of a new file (an existing one keeps its own: sqlite-page-size.ts rewrites it).
    raw.pragma(`page_size = ${pageSize}`);
    // WAL lets readers in other processes run beside the single writer; FULL syncs the WAL on every
    // commit so an acknowledged write survives a power cut, not only a process crash.
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.pragma(`busy_timeout = ${Math.trunc(opts.connectTimeoutMs ?? 5_000)}`);
    raw.pragma('foreign_keys = ON');
    // A write that may fail halfway inside a transaction (a multi-row INSERT under a UNIQUE key: the
    // journal's group commit) keeps a statement journal of the pages it changes, and SQLite spills it
    // to a temporary file past 64 KiB: an open, dozens of writes and an unlink in every group commit
    // of a dozen orders (a fifth to a quarter of the commit's CPU, bench/sqlite-commit-bench.ts).
    // In memory it costs what it holds: at most the pages one statement changes. A query's temporary
    // B-trees (a sort or a grouping without an index) stay in memory too, so a query that sorts
    // millions of rows holds them there. VACUUM's copy is a temporary database as well: the page
    // rewrite (sqlite-page-size.ts) runs on a connection of its own with SQLite's default, a file.
    raw.pragma(`temp_store = ${(opts.tempStore ?? 'memory').toUpperCase()}`);
  } catch (err) {
    throw new StorageUnavailableError({ cause: err, detail: { sqlitePath: path } });
  }
  const writeGate = opts.sqliteWriteGate ? createSqliteWriteGate('worker', opts.sqliteWriteGate, { slot: opts.sqliteWriteGateSlot }) : loopWriteGateOf(path);
  const kysely = new Kysely<DatabaseSchema>({
    // SQLite's schema changes are transactional (Kysely's adapter says not): migrations all or nothing.
    // Each SQL text prepared once (sqlite-statement-cache.ts): Kysely prepares every query anew.
    dialect: new ErrorMappingDialect(new SqliteDialect({ database: opts.statementCache === false ? raw : cachedStatements(raw) }), {
      immediateTransactions: true,
      transactionalDdl: true,
      writeGate,
    }),
  });
  const prepareRead = <Row>(sqlText: string) => {
    let statement: BetterSqlite3.Statement;
    try {
      statement = raw.prepare(sqlText);
    } catch (err) {
      throw toStorageError(err);
    }
    if (!statement.reader) throw new Error(`prepareRead: not a read: ${sqlText}`);
    return (...params: Array<string | number | bigint | null>): Row | undefined => {
      try {
        return statement.get(...params) as Row | undefined;
      } catch (err) {
        throw toStorageError(err);
      }
    };
  };
  const prepareWrite = (sqlText: string) => {
    let statement: BetterSqlite3.Statement;
    try {
      statement = raw.prepare(sqlText);
    } catch (err) {
      throw toStorageError(err);
    }
    if (statement.reader) throw new Error(`prepareWrite: not a write: ${sqlText}`);
    return (...params: Array<string | number | bigint | null>): void => {
      if (!raw.inTransaction) throw new Error('prepareWrite: run outside a transaction of this database');
      try {
        statement.run(...params);
      } catch (err) {
        throw toStorageError(err);
      }
    };
  };
  const transactSync = <T>(fn: () => T): Promise<T> =>
    // Kysely's connection, so that none of its queries runs on this connection meanwhile; then the
    // write gate, as Kysely's own BEGIN takes it (error-mapping-dialect.ts); then one synchronous
    // BEGIN IMMEDIATE … COMMIT, rolled back if `fn` throws.
    kysely.connection().execute(async () => {
      await writeGate?.enter();
      try {
        return raw.transaction(fn).immediate();
      } catch (err) {
        throw toStorageError(err);
      } finally {
        writeGate?.leave();
      }
    });
  return located({ kysely, dialect: 'sqlite', prepareRead, prepareWrite, transactSync, close: onceClose(() => kysely.destroy()) }, { sqlitePath: path });
}

const INT8_OID = 20;

/**
 * Pool-local type parsers: BIGINT (times, counts) as JS numbers, everything else as pg's defaults
 * (so NUMERIC stays a string). pg.types.setTypeParser would change every pool in the process.
 */
const poolTypesOf = (driver: typeof pg): pg.CustomTypesConfig => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8_OID && (format ?? 'text') === 'text') return (value: string) => Number(value);
    return driver.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
});

/** pg, loaded at the first PostgreSQL database: an embedded stack (SQLite) does not load it. */
const requirePg = (): typeof pg => createRequire(import.meta.url)('pg') as typeof pg;

function openPostgres(url: string, opts: OpenDatabaseOptions): Db {
  const driver = requirePg();
  const pool = new driver.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    application_name: 'tokex',
    types: poolTypesOf(driver),
    // Set at connection start-up so every pooled connection sees it, including after reconnects.
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  // A server restart kills idle and checked-out clients with an 'error' event; without listeners
  // that would crash the process. The failed query (or the next one) reports it instead.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const kysely = new Kysely<DatabaseSchema>({
    dialect: new ErrorMappingDialect(new PostgresDialect({ pool }), { introspector: (db) => new CurrentSchemaIntrospector(db) }),
  });
  return located({ kysely, dialect: 'postgres', close: onceClose(() => kysely.destroy()) }, { url, ...(opts.schema ? { schema: opts.schema } : {}) });
}

/** `location` is not enumerable: a Db spread or serialised somewhere never carries the URL's password along. */
function located(db: Omit<Db, 'location'>, location: Db['location']): Db {
  return Object.defineProperty(db, 'location', { value: location, enumerable: false }) as Db;
}

function onceClose(fn: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= fn());
}

async function ensureSchema(kysely: Kysely<DatabaseSchema>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(kysely);
  } catch (err) {
    // Two processes creating the same schema at once: IF NOT EXISTS can still lose the race.
    const code = (err as { cause?: { code?: string }; code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw err;
  }
}

/**
 * Applies every pending migration of `migrations` (default: all of this build's) in one transaction,
 * on SQLite as on PostgreSQL: either all of them are applied or none is, and a failure leaves the
 * database as it was. Throws naming the migration that failed; NewerDatabaseError when the database
 * holds a migration `migrations` does not know (a newer release migrated it meanwhile).
 */
export async function migrateToLatest(db: Db, schema?: string, migrations: MigrationList = MIGRATIONS): Promise<void> {
  const migrationTableSchema =
    db.dialect === 'postgres' ? (schema ?? (await currentSchema(db.kysely))) : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: migrationProviderOf(migrations),
    // Explicit on PostgreSQL: Kysely otherwise looks for its bookkeeping table in *any* schema and
    // would take another schema's (a test's) table for ours.
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error === undefined) return;
  if (error instanceof StorageUnavailableError) throw error;
  // Kysely refuses applied migrations it does not know ("corrupted migrations"): say whose they are.
  await assertDatabaseReadable(db, { schema: migrationTableSchema, migrations });
  const failed = results?.find((r) => r.status === 'Error')?.migrationName;
  const reason = error instanceof Error ? error.message : String(error);
  if (failed === undefined) throw new Error(`storage: migrations could not run: ${reason}`, { cause: error });
  throw new Error(`storage: migration ${failed} failed: ${reason}; no migration of this start was kept, the database is as it was`, { cause: error });
}

/**
 * The check of {@link assertDatabaseReadable} on the database `opts` names, opened for it and closed
 * again, so that `tokex start` refuses a newer release's database before it starts anything else. A
 * SQLite file that does not exist yet passes (and is not created).
 */
export async function checkDatabaseReadable(opts: OpenDatabaseOptions = {}): Promise<void> {
  const path = opts.sqlitePath ?? DEFAULT_SQLITE_PATH;
  if (!opts.url && (path === ':memory:' || path === '' || !existsSync(path))) return;
  const db = await openDatabase({ ...opts, migrate: false });
  try {
    await assertDatabaseReadable(db, { schema: opts.schema });
  } finally {
    await db.close();
  }
}

/**
 * The migrations of this build that the database `opts` names has not applied, in the order a start
 * would apply them (all of them for a SQLite file that does not exist yet, which is not created).
 * Reads only; throws NewerDatabaseError for a database a newer release wrote. `tokex upgrade` shows it.
 */
export async function pendingMigrations(opts: OpenDatabaseOptions = {}, migrations: MigrationList = MIGRATIONS): Promise<string[]> {
  const path = opts.sqlitePath ?? DEFAULT_SQLITE_PATH;
  if (!opts.url && (path === ':memory:' || path === '' || !existsSync(path))) return migrations.map(([name]) => name);
  const db = await openDatabase({ ...opts, migrate: false });
  try {
    await assertDatabaseReadable(db, { schema: opts.schema, migrations });
    const applied = new Set((await readDatabaseVersion(db, { schema: opts.schema })).appliedMigrations);
    return migrations.map(([name]) => name).filter((name) => !applied.has(name));
  } finally {
    await db.close();
  }
}

async function currentSchema(kysely: Kysely<DatabaseSchema>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(kysely);
  return rows[0]?.schema ?? 'public';
}
