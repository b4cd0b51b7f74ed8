/**
 * The journal's writer thread (journal-writer.ts starts it): its own connection to the SQLite file,
 * one group commit at a time, each answered by message once it is durable. The statements and the
 * fsync run here, so the order thread's loop goes on while the disk works (docs/perp-sequencer.md
 * "The journal's writer").
 *
 * Bundled as dist/app/perp-journal-worker.js (scripts/build-app.mjs); from the sources it runs
 * through tsx.
 */
import { workerErrorFields } from '../../lib/worker-script.ts';
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type OpenDatabaseOptions } from '../../storage/database.ts';
import { appendJournal, type JournalNonceClaim, type JournalRow } from '../store/engine-journal-store.ts';

export interface JournalWorkerData {
  database: OpenDatabaseOptions;
}

/** Parent → worker. */
export type JournalWorkerRequest = { type: 'append'; id: number; rows: readonly JournalRow[]; nonces: readonly JournalNonceClaim[] } | { type: 'close' };
/** Worker → parent. */
export type JournalWorkerReply =
  | { type: 'ready' }
  | { type: 'appended'; id: number }
  | { type: 'failed'; id: number; name: string; message: string; code?: string }
  | { type: 'open-failed'; name: string; message: string; code?: string }
  | { type: 'closed' };

const port = parentPort;
if (port === null) throw new Error('journal-writer-worker: must run as a worker thread');
const data = workerData as JournalWorkerData;
const post = (m: JournalWorkerReply) => port.postMessage(m);

try {
  // The parent opened (and migrated) the database already; this connection only appends.
  const db = await openDatabase({ ...data.database, migrate: false, poolSize: 1 });
  // Requests in their order: a close that arrives while a commit runs waits for it (the statements
  // are synchronous, but the transaction's steps are promises, between which a message can land).
  let last: Promise<void> = Promise.resolve();
  port.on('message', (m: JournalWorkerRequest) => {
    if (m.type === 'close') {
      last = last.then(() => db.close()).finally(() => {
        post({ type: 'closed' });
        port.close();
      });
      return;
    }
    last = last.then(() =>
      appendJournal(db, m.rows, m.nonces).then(
        () => post({ type: 'appended', id: m.id }),
        (err: unknown) => post({ type: 'failed', id: m.id, ...workerErrorFields(err) }),
      ),
    );
  });
  post({ type: 'ready' });
} catch (err) {
  post({ type: 'open-failed', ...workerErrorFields(err) });
  port.close();
}
