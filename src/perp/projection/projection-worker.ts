/**
 * The perpetual projection's worker thread (projection-worker-client.ts starts it): its own
 * database connection, one write of folded events at a time, answered by message. Everything the
 * projection costs — folding the events, building the statements, SQLite's or PostgreSQL's work —
 * runs here, off the thread that takes orders (docs/perp-sequencer.md "The projector").
 *
 * Bundled as dist/app/perp-projection-worker.js (scripts/build-app.mjs); from the sources it runs
 * through tsx.
 */
import { workerErrorFields } from '../../lib/worker-script.ts';
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type OpenDatabaseOptions } from '../../storage/database.ts';
import { getMeta } from '../../storage/meta-store.ts';
import type { EngineEvent } from '../engine/engine-types.ts';
import { PROJECTION_CURSOR_KEY, writeProjection } from './projection-write.ts';

export interface ProjectionWorkerData {
  database: OpenDatabaseOptions;
  feeAccount: string;
  /** Most events a transaction (PROJECTION_WORKER_CHUNK). */
  chunkEvents: number;
}

/** Parent → worker. */
export type ProjectionWorkerRequest = { type: 'write'; id: number; events: EngineEvent[] } | { type: 'close' };
/** Worker → parent. */
export type ProjectionWorkerReply =
  | { type: 'ready' }
  | { type: 'written'; id: number; lastSeq: number }
  | { type: 'failed'; id: number; name: string; message: string; code?: string }
  | { type: 'open-failed'; name: string; message: string; code?: string }
  | { type: 'unknown-reason'; reason: string }
  | { type: 'closed' };

const port = parentPort;
if (port === null) throw new Error('projection-worker: must run as a worker thread');
const data = workerData as ProjectionWorkerData;
const post = (m: ProjectionWorkerReply) => port.postMessage(m);

try {
  // The parent opened (and migrated) the database already; this connection only writes.
  const db = await openDatabase({ ...data.database, migrate: false, poolSize: 2 });
  const onUnknownReason = (reason: string) => post({ type: 'unknown-reason', reason });
  // The last seq committed: a write is split in transactions of its own, so a write that failed
  // part way is sent again with chunks that are already in (a candle's merge is not idempotent).
  let committed = Number((await getMeta(db, PROJECTION_CURSOR_KEY)) ?? '0');
  const write = async (events: readonly EngineEvent[]): Promise<number> => {
    const fresh = events[0] !== undefined && events[0].seq > committed ? events : events.filter((e) => e.seq > committed);
    for (let i = 0; i < fresh.length; i += data.chunkEvents) {
      committed = await writeProjection(db, fresh.slice(i, i + data.chunkEvents), data.feeAccount, { onUnknownReason, readOutside: true });
    }
    return committed;
  };
  port.on('message', (m: ProjectionWorkerRequest) => {
    if (m.type === 'close') {
      void db.close().finally(() => {
        post({ type: 'closed' });
        port.close();
      });
      return;
    }
    // The projector sends one write at a time and waits for its answer.
    write(m.events).then(
      (lastSeq) => post({ type: 'written', id: m.id, lastSeq }),
      (err: unknown) => post({ type: 'failed', id: m.id, ...workerErrorFields(err) }),
    );
  });
  post({ type: 'ready' });
} catch (err) {
  post({ type: 'open-failed', ...workerErrorFields(err) });
  port.close();
}
