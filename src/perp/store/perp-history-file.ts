/**
 * The perpetual venue's history in a SQLite file of its own (issue 40; docs/perp-sequencer.md "The
 * history's own file"): the projection's tables and its cursor live in `perp-history.sqlite` beside
 * `tokex.sqlite`, so that the projection's writes hold that file's write lock and WAL, and the
 * journal's group commits of acknowledged orders never wait behind them (`BEGIN IMMEDIATE` locks
 * every attached file, so `ATTACH` would not have separated them: a second file, a second
 * connection).
 *
 * The history file has the whole schema (the same migrations run on it, so a migration of a history
 * table reaches it without a list of its own); only the tables below and the cursor are used there,
 * and in the main file they stay empty.
 *
 * A data directory of an earlier release holds its history in the main file. The first open moves
 * it, in two steps that each commit whole:
 *   1. in one transaction of the history file: every row of the tables, the cursor, and a marker;
 *   2. in one transaction of the main file: the tables emptied and the cursor removed.
 * A crash before 1 commits leaves the history in the main file (the next open moves it again); after
 * it, the marker says the copy is done and the next open only repeats 2. Nothing is read from either
 * file before both steps are done: the stack opens the file before any role starts (stack.ts), so
 * the move's synchronous statements never stall a loop that holds a lease.
 */
import Database from 'better-sqlite3';
import type { Logger } from '../../lib/logger.ts';
import type { Db } from '../../storage/database.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { sql } from 'kysely';

/** The projection's tables: in the history file only. */
export const PERP_HISTORY_TABLES = [
  'perp_orders',
  'perp_trades',
  'perp_transactions',
  'perp_funding_rates',
  'perp_candles',
  'perp_liquidity_moves',
  'perp_insurance_moves',
] as const;

/** The projection's cursor (projection-write.ts PROJECTION_CURSOR_KEY), moved with the rows. */
const CURSOR_KEY = 'perp.projection.seq';
/** In the history file's meta: the main file's history was copied here (step 1 committed). */
export const HISTORY_MOVED_KEY = 'perp.history.moved';

export interface HistoryMove {
  /** Rows copied by this open (0 when the copy was done before or there was nothing). */
  rows: number;
  /** Whether this open emptied the main file's tables (step 2). */
  emptied: boolean;
}

/**
 * Moves an earlier release's history from `main` (at `mainPath`) into the history file (at
 * `historyPath`, `history` open and migrated on it). Idempotent; a no-op on a data directory whose
 * history is already in its own file.
 */
export async function moveHistoryToOwnFile(opts: {
  main: Db;
  history: Db;
  mainPath: string;
  historyPath: string;
  logger?: Pick<Logger, 'info'>;
  /** Tests: stops after step 1, as a crash there would. */
  stopAfterCopy?: boolean;
}): Promise<HistoryMove> {
  const { main, history, logger } = opts;
  const started = performance.now();
  let rows = 0;
  const moved = await history.kysely.selectFrom('meta').select('value').where('key', '=', HISTORY_MOVED_KEY).executeTakeFirst();
  if (!moved) {
    // A connection of its own, so that the attached main file is never seen by the history Db's
    // connection (which the projection's writes use with the file's write gate).
    const conn = new Database(opts.historyPath);
    try {
      conn.pragma('busy_timeout = 5000');
      conn.prepare('ATTACH DATABASE ? AS old').run(opts.mainPath);
      try {
        rows = conn.transaction(() => {
          // Asked again under the write lock: another process on this data directory may have moved
          // it since (a copy made twice would fail on the rows' keys).
          if (conn.prepare('SELECT 1 FROM main.meta WHERE key = ?').get(HISTORY_MOVED_KEY)) return 0;
          let copied = 0;
          for (const table of PERP_HISTORY_TABLES) {
            // By name, not position: the two files ran the same migrations, but a column list says so.
            const cols = (conn.pragma(`main.table_info(${table})`) as Array<{ name: string }>).map((c) => `"${c.name}"`).join(', ');
            copied += conn.prepare(`INSERT INTO main.${table} (${cols}) SELECT ${cols} FROM old.${table}`).run().changes;
          }
          conn.prepare('INSERT INTO main.meta (key, value) SELECT key, value FROM old.meta WHERE key = ? ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(CURSOR_KEY);
          conn.prepare('INSERT INTO main.meta (key, value) VALUES (?, ?)').run(HISTORY_MOVED_KEY, String(Date.now()));
          return copied;
        }).immediate();
      } finally {
        conn.exec('DETACH DATABASE old');
      }
    } finally {
      conn.close();
    }
    if (rows > 0) logger?.info({ rows, ms: Math.round(performance.now() - started) }, 'perp history copied to its own file (perp-history.sqlite)');
  }
  if (opts.stopAfterCopy) return { rows, emptied: false };
  if (!(await hasHistory(main))) return { rows, emptied: false };
  const emptying = performance.now();
  await withTransaction(main, async (tx) => {
    for (const table of PERP_HISTORY_TABLES) await sql`DELETE FROM ${sql.table(table)}`.execute(tx);
    await tx.deleteFrom('meta').where('key', '=', CURSOR_KEY).execute();
  });
  logger?.info({ ms: Math.round(performance.now() - emptying) }, 'perp history: the copy in tokex.sqlite emptied');
  return { rows, emptied: true };
}

/** Whether `db` holds any projection row or the projection's cursor. */
async function hasHistory(db: Db): Promise<boolean> {
  if (await db.kysely.selectFrom('meta').select('key').where('key', '=', CURSOR_KEY).executeTakeFirst()) return true;
  for (const table of PERP_HISTORY_TABLES) {
    if ((await sql<{ one: number }>`SELECT 1 AS one FROM ${sql.table(table)} LIMIT 1`.execute(db.kysely)).rows.length > 0) return true;
  }
  return false;
}
