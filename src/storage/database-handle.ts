/**
 * What a store holds of an open database: the handle (`Db`), what a store takes (`DbExecutor`) and
 * the options it was opened with. Apart from database.ts, which opens one, so that modules database.ts
 * itself imports (database-version.ts) can name the handle without importing it back.
 */
import { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.ts';
export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<DatabaseSchema>;
  dialect: DialectName;
  /** Where it was opened (for a worker thread that opens the same database; holds the URL's credentials: never log it). */
  readonly location: Pick<OpenDatabaseOptions, 'url' | 'sqlitePath' | 'schema'>;
  /**
   * SQLite only: a read prepared once on this connection and run synchronously, for a hot path's
   * point lookups (the order nonce ledger's, one a signed order). A read through Kysely builds,
   * compiles and awaits its query: about 40 µs of the order thread against a few for the statement
   * itself (docs/performance.md, "The nonce read"). Reads only: a write goes through `kysely`, behind
   * the file's write gate. Errors are the storage errors Kysely's would be.
   */
  readonly prepareRead?: <Row>(sqlText: string) => (...params: Array<string | number | bigint | null>) => Row | undefined;
  /**
   * SQLite only: a write prepared once on this connection, run synchronously, for a hot path's
   * statements inside a transaction of this Db (`transactSync`, or `withTransaction(db, …)`): the transaction holds the
   * connection, the file's write gate and SQLite's write lock, and the statements run in it. Called
   * outside one it would write behind the gate's back: it refuses to (a plain Error, a bug of the
   * caller). The journal's group commit writes its rows with it (about a third of the commit's CPU
   * went to building and compiling its queries, docs/performance.md "The journal's writer"). Errors
   * are the storage errors Kysely's would be.
   */
  readonly prepareWrite?: (sqlText: string) => (...params: Array<string | number | bigint | null>) => void;
  /**
   * SQLite only: `fn` in one durable transaction run synchronously (BEGIN IMMEDIATE, `fn`, COMMIT;
   * ROLLBACK and the error if it throws), behind the file's write gate and Kysely's hold on the
   * connection, as `withTransaction` would run it, without its builder and its awaits between
   * statements: about 50 µs less CPU a commit (bench/journal-index-cost-bench.ts with
   * BENCH_INDEX_GROUP=1). For `prepareWrite` statements on a hot path (the journal's group commit).
   * `fn` must not await: what it does after its first await is outside the transaction.
   */
  readonly transactSync?: <T>(fn: () => T) => Promise<T>;
  /** Closes the pool or file handle. Idempotent. */
  close(): Promise<void>;
}

/**
 * What every store takes as its first argument: an open database, or a Kysely instance — in
 * particular the transaction handed out by `withTransaction`, so several store calls commit together.
 */
export type DbExecutor = Db | Kysely<DatabaseSchema>;

export function kyselyOf(db: DbExecutor): Kysely<DatabaseSchema> {
  return db instanceof Kysely ? db : db.kysely;
}

export interface OpenDatabaseOptions {
  /** `postgres://…` (or `postgresql://…`). Absent: SQLite. */
  url?: string;
  /** SQLite file path (its folder is created) or `:memory:`. Default `./data/tokex.sqlite`. */
  sqlitePath?: string;
  /** PostgreSQL schema to use instead of the default search_path; created if missing. */
  schema?: string;
  /**
   * Check that no newer release wrote the database, run pending migrations (all or none) and record
   * this release in `app_releases`, on open. Default true. False opens the database as it is.
   */
  migrate?: boolean;
  /** PostgreSQL pool size. Default 10. */
  poolSize?: number;
  /** Milliseconds to wait for a PostgreSQL connection, or for a locked SQLite file. Default 10 000 / 5 000. */
  connectTimeoutMs?: number;
  /**
   * SQLite: keep each SQL text's prepared statement for the next query of that text
   * (sqlite-statement-cache.ts). Default true; false prepares every query anew, as Kysely does
   * (for the bench's A/B, bench/sqlite-statements-bench.ts).
   */
  statementCache?: boolean;
  /**
   * SQLite, in a worker thread: the shared memory of the file's write gate of the thread that
   * started it (sqlite-write-gate.ts), so that this connection's writes wait for the loop's instead
   * of the loop waiting inside SQLite for them. Absent, the connection takes the gate's loop side
   * of this thread.
   */
  sqliteWriteGate?: SharedArrayBuffer;
  /** The worker's slot on that gate (SQLITE_WRITER_SLOTS: the lowest writes first). Default the projection's. */
  sqliteWriteGateSlot?: number;
  /** SQLite: the page size of a new file (an existing file keeps its own). Default SQLITE_PAGE_SIZE. */
  pageSize?: number;
  /**
   * SQLite: where this connection keeps its statement journals and temporary tables. Default
   * 'memory'; 'file' is SQLite's own default, kept for the bench's A/B (docs/performance.md,
   * "Statement journals in memory").
   */
  tempStore?: 'memory' | 'file';
}
