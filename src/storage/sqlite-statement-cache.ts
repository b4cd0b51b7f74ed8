import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * The SQLite connection as Kysely's driver sees it, with each SQL text prepared once and kept.
 *
 * Kysely's SQLite driver calls `prepare` for every query it runs, and better-sqlite3's prepare
 * parses and plans the text anew each time. On the perpetual order path that was the largest single
 * piece of work in the projector and the journal: their multi-row inserts have a few dozen texts
 * (bulk-sql.ts sends full chunks and powers of two), each of hundreds of placeholders, prepared
 * again at every write (issue 40: 7.7 % of a single signed order's busy time, about 100 µs an
 * order, in the profiled run of 26 November). A prepared statement is reusable with fresh
 * parameters, so a text seen before gets its statement back.
 *
 * A statement that is still being iterated (a streamed select that has not finished) is `busy` and
 * cannot run again until it does: that caller gets a fresh statement, not the cached one. Texts
 * are kept most recently used first, at most `maxStatements` of them (a prepared statement holds
 * its compiled program, a few KiB), so texts built per call (an `in (…)` list of a new length)
 * cannot grow the cache without bound.
 */
export interface SqliteStatementSource {
  prepare(sql: string): SqliteStatement & { readonly busy?: boolean };
  close(): void;
}

export interface StatementCacheStats {
  /** Texts prepared (a miss, or a busy statement's text). */
  prepared: number;
  /** Queries that got a kept statement. */
  reused: number;
  /** Texts kept now. */
  size: number;
}

export function cachedStatements(db: SqliteStatementSource, maxStatements = 512): SqliteDatabase & { readonly stats: StatementCacheStats } {
  const kept = new Map<string, SqliteStatement & { readonly busy?: boolean }>();
  let prepared = 0;
  let reused = 0;
  return {
    prepare(sql: string): SqliteStatement {
      const stmt = kept.get(sql);
      if (stmt !== undefined && stmt.busy !== true) {
        // Most recently used last: the first key is the one to drop.
        kept.delete(sql);
        kept.set(sql, stmt);
        reused++;
        return stmt;
      }
      // Throws on a bad text, as before (nothing is kept then).
      const fresh = db.prepare(sql);
      prepared++;
      if (stmt === undefined) {
        kept.set(sql, fresh);
        if (kept.size > maxStatements) kept.delete(kept.keys().next().value as string);
      }
      return fresh;
    },
    close(): void {
      kept.clear();
      db.close();
    },
    get stats(): StatementCacheStats {
      return { prepared, reused, size: kept.size };
    },
  };
}
