import { PostgresAdapter, sql, type Transaction } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';
import type { DatabaseSchema } from './schema.ts';

export type Tx = Transaction<DatabaseSchema>;

export interface TransactionOptions {
  /**
   * `false`: atomic but not durable — for writes rebuilt from a durable source after a loss, such as
   * a projection of the journal that commits its cursor with its rows. The commit does not wait for
   * the disk (SQLite: `synchronous = NORMAL` for this commit, in WAL mode; PostgreSQL:
   * `synchronous_commit = off` for this transaction). A process crash loses nothing; a crash of
   * the machine can lose the last such commits, each whole, and none older than a later durable
   * commit (both databases write one log in order, and a durable commit syncs it up to itself).
   * Default true. Joining a caller's transaction, the caller's choice holds.
   */
  durable?: boolean;
}

/**
 * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (the error
 * is rethrown). Pass the `tx` to store functions. Called with a transaction already, it joins it
 * (no nesting), so a store can wrap its own work and still compose into a caller's transaction.
 *
 * SQLite: BEGIN IMMEDIATE on the single connection; other queries of this Db wait for it to finish.
 * PostgreSQL: one pooled connection, READ COMMITTED unless the caller asks otherwise.
 */
export async function withTransaction<T>(db: DbExecutor, fn: (tx: Tx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  const k = kyselyOf(db);
  if (k.isTransaction) return fn(k as Tx);
  if (opts.durable ?? true) return k.transaction().execute(fn);
  if (k.getExecutor().adapter instanceof PostgresAdapter) {
    return k.transaction().execute(async (tx) => {
      await sql`set local synchronous_commit = off`.execute(tx);
      return fn(tx);
    });
  }
  // SQLite reads the level when it commits, and it is the connection's: held here from before BEGIN
  // to after the level is back to FULL (what openDatabase sets), no other commit can run between.
  return k.connection().execute(async (conn) => {
    await sql`pragma synchronous = NORMAL`.execute(conn);
    try {
      return await conn.transaction().execute(fn);
    } finally {
      await sql`pragma synchronous = FULL`.execute(conn);
    }
  });
}
