/**
 * The page size of the SQLite file (issue 40; docs/performance.md "Pages of 4 KiB on the order
 * path").
 *
 * A commit writes every page it changed to the WAL, whole. The order path's commits change a few
 * rows each in many places (the journal's last page, and a page of each index the rows land in:
 * command ids and order nonces land anywhere in theirs), so their cost is the number of pages times
 * the page size. With 64 KiB pages (this project's size until 0.2.0) a group commit of a dozen
 * orders wrote megabytes to the WAL, and the checkpoints that copy them back ran in the commits of
 * the order thread; at 4 KiB the same commits write a sixteenth of that. Measured at half of
 * saturation (single REST orders, one process): server CPU per order about 15 % lower, p50 and p99
 * about halved. The price is the indexer's catch-up, whose large transactions preferred the large
 * pages (about 12 % slower on the means of alternated runs).
 *
 * SQLite sets the size when it creates a file, and in WAL mode never changes it: an existing file
 * keeps its own, so an upgraded data directory starts exactly as it was. `rewriteSqlitePages` (run
 * by `tokex upgrade --apply`, the stack stopped) rewrites a file to the current size with VACUUM,
 * which copies every row into a new file image and replaces the old one atomically (through a
 * rollback journal: a crash in the middle leaves the file as it was).
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { AppError, StorageUnavailableError } from '../errors/app-error.ts';

/** The page size of a new SQLite file, in bytes. */
export const SQLITE_PAGE_SIZE = 4096;

/** SQLite's page sizes: a power of two from 512 to 65 536. */
export function isSqlitePageSize(n: number): boolean {
  return Number.isInteger(n) && n >= 512 && n <= 65_536 && (n & (n - 1)) === 0;
}

export interface SqlitePages {
  /** Bytes a page. */
  pageSize: number;
  /** Pages in the file (without its WAL). */
  pageCount: number;
}

/** The page size and count of the SQLite file at `path`; undefined when there is no such file (or it is in memory). */
export function readSqlitePages(path: string): SqlitePages | undefined {
  if (path === ':memory:' || path === '' || !existsSync(path)) return undefined;
  const raw = new BetterSqlite3(path, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    return { pageSize: Number(raw.pragma('page_size', { simple: true })), pageCount: Number(raw.pragma('page_count', { simple: true })) };
  } finally {
    raw.close();
  }
}

/** The database's file is open elsewhere (a running stack, a CLI command): its pages cannot be rewritten now. */
export class SqliteFileInUseError extends AppError {
  constructor(path: string, cause?: unknown) {
    super('CONFLICT', `SQLite file ${path} is open in another process: stop the stack (and any tokex command using it) first`, { retryable: true, cause });
  }
}

/**
 * Rewrites the SQLite file at `path` with pages of `pageSize` bytes (default SQLITE_PAGE_SIZE):
 * every row, index and the schema as they were, the WAL mode back on. Nothing to do when the file
 * already has that size. Needs the only connection to the file: SqliteFileInUseError otherwise,
 * with the file untouched.
 */
export function rewriteSqlitePages(path: string, pageSize = SQLITE_PAGE_SIZE): { before: number; after: number } {
  if (!isSqlitePageSize(pageSize)) throw new AppError('VALIDATION', `page size: ${pageSize} is not a power of two from 512 to 65536`);
  let raw: BetterSqlite3.Database;
  try {
    // No busy timeout: a file in use is reported at once, not waited for.
    raw = new BetterSqlite3(path, { fileMustExist: true, timeout: 0 });
  } catch (err) {
    throw new StorageUnavailableError({ cause: err, detail: { sqlitePath: path } });
  }
  try {
    const before = Number(raw.pragma('page_size', { simple: true }));
    if (before === pageSize) return { before, after: before };
    // Out of WAL mode first: SQLite changes a page size only then. That needs the only connection
    // (the WAL is checkpointed into the file and removed); with another one open it fails or stays 'wal'.
    let mode: unknown;
    try {
      mode = raw.pragma('journal_mode = DELETE', { simple: true });
    } catch (err) {
      throw new SqliteFileInUseError(path, err);
    }
    if (mode !== 'delete') throw new SqliteFileInUseError(path);
    try {
      raw.pragma(`page_size = ${pageSize}`);
      raw.exec('VACUUM');
    } finally {
      // Back to WAL whether or not the VACUUM ran (openDatabase would set it again on the next open).
      raw.pragma('journal_mode = WAL');
    }
    return { before, after: Number(raw.pragma('page_size', { simple: true })) };
  } finally {
    raw.close();
  }
}
