/**
 * Runs prepared batches of writes (see write-recorder.ts), each in one transaction, one after the
 * other in the order submitted, so that the caller can prepare the next batch while one is written.
 *
 * On PostgreSQL the statements run in the server while this process prepares the next batch. On
 * SQLite (synchronous, in this thread) there is no overlap, but the transaction now spans only the
 * writes themselves, not the fetching and decoding that prepared them: the connection, which the
 * API shares in a single process, is held for the writes alone.
 */
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { ConflictError } from '../errors/app-error.ts';
import type { Db } from './database.ts';
import type { DatabaseSchema } from './schema.ts';

export interface WriteBatch {
  statements: readonly CompiledQuery[];
  /** Runs last and must change exactly one row, or the batch is rolled back with a ConflictError. */
  guard?: CompiledQuery;
}

export interface BatchWriter {
  /** Runs `batch` in one transaction after every batch submitted before it has finished. */
  submit(batch: WriteBatch): Promise<void>;
}

export interface BatchWriterOptions {
  /**
   * `full` (default): a batch is on disk when its commit returns, like every other write.
   * `relaxed`: the commit does not wait for the disk to confirm (SQLite `synchronous = NORMAL` for
   * the batch's transaction, PostgreSQL `synchronous_commit = off`). A power cut or an OS crash
   * (not a process crash) may then lose the last batches, never part of one. Only for writes that
   * can be made again: the indexer's batches are derived from the chain and move their own
   * checkpoint, so what a lost batch held is indexed again from the checkpoint that survived.
   */
  durability?: 'full' | 'relaxed';
}

export function createBatchWriter(db: Db, opts: BatchWriterOptions = {}): BatchWriter {
  const relaxed = opts.durability === 'relaxed';
  let tail: Promise<unknown> = Promise.resolve();

  async function write(k: Kysely<DatabaseSchema>, batch: WriteBatch): Promise<void> {
    await k.transaction().execute(async (tx) => {
      if (relaxed && db.dialect === 'postgres') await sql`set local synchronous_commit = off`.execute(tx);
      for (const q of batch.statements) await tx.executeQuery(q);
      if (batch.guard) {
        const res = await tx.executeQuery(batch.guard);
        if (Number(res.numAffectedRows ?? 0) !== 1) throw new ConflictError('batch writer: the guard changed no row');
      }
    });
  }

  async function run(batch: WriteBatch): Promise<void> {
    if (!relaxed || db.dialect !== 'sqlite') return write(db.kysely, batch);
    // SQLite refuses to change the level inside a transaction, and it is the connection's: it is
    // lowered around this one transaction on the connection held throughout, so no other write of
    // the (shared) connection commits at the lower level.
    await db.kysely.connection().execute(async (conn) => {
      const [{ synchronous }] = (await sql<{ synchronous: number }>`pragma synchronous`.execute(conn)).rows;
      await sql`pragma synchronous = normal`.execute(conn);
      try {
        await write(conn, batch);
      } finally {
        await sql.raw(`pragma synchronous = ${Number(synchronous)}`).execute(conn);
      }
    });
  }

  return {
    submit(batch) {
      // A failed batch does not stop the next from running; a guard on the state the failed one
      // should have produced makes the next fail too.
      const done = tail.then(() => run(batch));
      tail = done.catch(() => undefined);
      return done;
    },
  };
}
