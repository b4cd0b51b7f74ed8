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
 * cannot run again until it does: that caller gets a fresh statement, not the cached one.
 *
 * A prepared statement holds its compiled program, which grows with its placeholders: about 33 KiB
 * for a 16-row insert of 8 columns, 1.4 MiB for a 2,000-row one (measured with better-sqlite3 12).
 * So what is kept is bounded three ways, least recently used dropped first: at most
 * `maxStatements` texts, at most `maxTextBytes` of SQL text in all, and no text longer than
 * `maxStatementBytes` (a bulk load's statements of thousands of placeholders are prepared each time,
 * their parse a small part of their work). Texts built per call (an `in (…)` list of a new length)
 * cannot grow it without bound either.
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
  /** Their length in all. */
  textBytes: number;
}

export interface StatementCacheLimits {
  /** Default 256. */
  maxStatements?: number;
  /**
   * SQL text kept in all, in UTF-16 code units. Default 384 Ki: a program costs about 40 times its
   * text (an insert's placeholder about 2.3 characters of text and 88 bytes of program), so about
   * 15 MiB of programs at most.
   */
  maxTextBytes?: number;
  /**
   * The longest text kept. Default 32 Ki: an insert of about 14,000 placeholders (the projector's
   * orders in chunks of 512 rows of 23 columns under load are 25 Ki).
   */
  maxStatementBytes?: number;
}

export function cachedStatements(db: SqliteStatementSource, limits: StatementCacheLimits = {}): SqliteDatabase & { readonly stats: StatementCacheStats } {
  const maxStatements = limits.maxStatements ?? 256;
  const maxTextBytes = limits.maxTextBytes ?? 384 * 1024;
  const maxStatementBytes = Math.min(limits.maxStatementBytes ?? 32 * 1024, maxTextBytes);
  const kept = new Map<string, SqliteStatement & { readonly busy?: boolean }>();
  let textBytes = 0;
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
      if (stmt === undefined && sql.length <= maxStatementBytes) {
        kept.set(sql, fresh);
        textBytes += sql.length;
        while (kept.size > maxStatements || textBytes > maxTextBytes) {
          const oldest = kept.keys().next().value as string;
          kept.delete(oldest);
          textBytes -= oldest.length;
        }
      }
      return fresh;
    },
    close(): void {
      kept.clear();
      textBytes = 0;
      db.close();
    },
    get stats(): StatementCacheStats {
      return { prepared, reused, size: kept.size, textBytes };
    },
  };
}
