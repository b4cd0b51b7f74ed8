/**
 * Runs prepared batches of writes (see write-recorder.ts), each in one transaction, one after the
 * other in the order submitted, so that the caller can prepare the next batch while one is written.
 *
 * On PostgreSQL the statements run in the server while this process prepares the next batch. On
 * SQLite (synchronous, in this thread) there is no overlap, but the transaction now spans only the
 * writes themselves, not the fetching and decoding that prepared them: the connection, which the
 * API shares in a single process, is held for the writes alone.
 */
import type { CompiledQuery } from 'kysely';
import { ConflictError } from '../errors/app-error.ts';
import type { DbExecutor } from './database.ts';
import { withTransaction } from './transaction.ts';

export interface WriteBatch {
  statements: readonly CompiledQuery[];
  /** Runs last and must change exactly one row, or the batch is rolled back with a ConflictError. */
  guard?: CompiledQuery;
}

export interface BatchWriter {
  /** Runs `batch` in one transaction after every batch submitted before it has finished. */
  submit(batch: WriteBatch): Promise<void>;
}

export function createBatchWriter(db: DbExecutor): BatchWriter {
  let tail: Promise<unknown> = Promise.resolve();

  async function run(batch: WriteBatch): Promise<void> {
    await withTransaction(db, async (tx) => {
      for (const q of batch.statements) await tx.executeQuery(q);
      if (batch.guard) {
        const res = await tx.executeQuery(batch.guard);
        if (Number(res.numAffectedRows ?? 0) !== 1) throw new ConflictError('batch writer: the guard changed no row');
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
