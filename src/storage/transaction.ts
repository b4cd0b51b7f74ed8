import type { Transaction } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';
import type { DatabaseSchema } from './schema.ts';

export type Tx = Transaction<DatabaseSchema>;

/**
 * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (the error
 * is rethrown). Pass the `tx` to store functions. Called with a transaction already, it joins it
 * (no nesting), so a store can wrap its own work and still compose into a caller's transaction.
 *
 * SQLite: BEGIN IMMEDIATE on the single connection; other queries of this Db wait for it to finish.
 * PostgreSQL: one pooled connection, READ COMMITTED unless the caller asks otherwise.
 */
export async function withTransaction<T>(db: DbExecutor, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const k = kyselyOf(db);
  if (k.isTransaction) return fn(k as Tx);
  return k.transaction().execute(fn);
}
