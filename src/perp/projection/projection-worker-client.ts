/**
 * Where the projector's writes run (docs/perp-sequencer.md "The projector"): on the engine's own
 * thread (`threadProjectionWriter`), or on a worker thread with its own database connection
 * (`workerProjectionWriter`, the default), so that folding the events and the database's work for
 * the history tables leave the thread that takes orders, commits the journal and answers clients.
 *
 * The worker is started on the first write and started again on the write after it failed to open
 * or exited; a write in flight when it died fails, and the projector writes it again (from the
 * cursor the rows commit with, so nothing is written twice).
 *
 * SQLite: the worker's connection is a second writer of the same file. It passes the file's write
 * gate of this process (storage/sqlite-write-gate.ts) before each transaction, so the order
 * thread's writes go first and a write of the order thread that meets the worker's waits without
 * blocking its loop; and it writes at most PROJECTION_WORKER_CHUNK events a transaction, each read
 * and folded before it, which bounds such a wait.
 */
import { Worker } from 'node:worker_threads';
import { AppError } from '../../errors/app-error.ts';
import type { Logger } from '../../lib/logger.ts';
import { workerScript } from '../../lib/worker-script.ts';
import { DEFAULT_SQLITE_PATH, isInMemorySqlite, type DbExecutor, type OpenDatabaseOptions } from '../../storage/database.ts';
import { loopWriteGateOf, SQLITE_WRITER_SLOTS } from '../../storage/sqlite-write-gate.ts';
import type { EngineEvent } from '../engine/engine-types.ts';
import type { ProjectionWorkerData, ProjectionWorkerReply, ProjectionWorkerRequest } from './projection-worker.ts';
import { PROJECTION_WORKER_CHUNK, writeProjection } from './projection-write.ts';

export interface ProjectionWriter {
  readonly kind: 'thread' | 'worker';
  /** Writes the folded events and the cursor in one transaction; answers the last seq written. */
  write(events: readonly EngineEvent[]): Promise<number>;
  /** Ends the writer after the write in flight (if any). Idempotent. */
  close(): Promise<void>;
}

export function threadProjectionWriter(db: DbExecutor, feeAccount: string, onUnknownReason?: (reason: string) => void): ProjectionWriter {
  return {
    kind: 'thread',
    write: (events) => writeProjection(db, events, feeAccount, { onUnknownReason }),
    close: async () => {},
  };
}

/** Where `PERP_PROJECTOR` puts the writes for a database: `auto` on the worker, unless the database is an in-memory SQLite one. */
export function projectorOnWorker(setting: 'worker' | 'thread' | 'auto', database: OpenDatabaseOptions): boolean {
  return setting === 'auto' ? !isInMemorySqlite(database) : setting === 'worker';
}

/** A write the worker could not do (the message is its error's; no secret is in a database error of this path). */
export class ProjectionWriteError extends AppError {
  constructor(what: string, reply: { name: string; message: string; code?: string }) {
    super('STORAGE_UNAVAILABLE', `perp projection worker: ${what}: ${reply.message}`, { retryable: true, detail: { name: reply.name, code: reply.code } });
  }
}

export interface WorkerProjectionWriterOptions {
  /** How the worker opens the database: the options the process opened it with (a file or a server, not `:memory:`). */
  database: OpenDatabaseOptions;
  feeAccount: string;
  onUnknownReason?: (reason: string) => void;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** Most events the worker writes in one transaction. Default PROJECTION_WORKER_CHUNK. */
  chunkEvents?: number;
}

export function workerProjectionWriter(opts: WorkerProjectionWriterOptions): ProjectionWriter {
  if (isInMemorySqlite(opts.database)) {
    throw new AppError('VALIDATION', 'perp projection worker: an in-memory SQLite database cannot be shared with a worker thread');
  }
  // The gate of this thread's connections to the file: the worker takes its other side.
  const gate = opts.database.url === undefined ? loopWriteGateOf(opts.database.sqlitePath ?? DEFAULT_SQLITE_PATH) : undefined;
  let worker: Worker | undefined;
  let ready: Promise<Worker> | undefined;
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, { resolve(seq: number): void; reject(err: unknown): void }>();
  const failAll = (err: unknown) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };

  const start = (): Promise<Worker> => {
    const { url, argv } = workerScript('perp-projection-worker.js', new URL('./projection-worker.ts', import.meta.url));
    const data: ProjectionWorkerData = { database: { ...opts.database, ...(gate ? { sqliteWriteGate: gate.buffer, sqliteWriteGateSlot: SQLITE_WRITER_SLOTS.projection } : {}) }, feeAccount: opts.feeAccount, chunkEvents: opts.chunkEvents ?? PROJECTION_WORKER_CHUNK };
    const w = new Worker(url, { workerData: data, argv, execArgv: [], name: 'perp-projection' });
    worker = w;
    return new Promise<Worker>((resolve, reject) => {
      let opened = false;
      w.on('message', (m: ProjectionWorkerReply) => {
        switch (m.type) {
          case 'ready':
            opened = true;
            resolve(w);
            break;
          case 'written':
            pending.get(m.id)?.resolve(m.lastSeq);
            pending.delete(m.id);
            break;
          case 'failed':
            pending.get(m.id)?.reject(new ProjectionWriteError('write failed', m));
            pending.delete(m.id);
            break;
          case 'open-failed':
            reject(new ProjectionWriteError('could not open the database', m));
            break;
          case 'unknown-reason':
            opts.onUnknownReason?.(m.reason);
            break;
          case 'closed':
            break;
        }
      });
      w.on('error', (err) => {
        opts.logger?.warn({ err }, 'perp projection worker: failed; it is started again at the next write');
        if (!opened) reject(err);
      });
      w.on('exit', (code) => {
        // A worker that ended inside a write (terminated, or crashed) no longer holds the gate.
        gate?.releaseWorker(SQLITE_WRITER_SLOTS.projection);
        if (worker === w) {
          worker = undefined;
          ready = undefined;
        }
        failAll(new ProjectionWriteError('exited', { name: 'WorkerExit', message: `exit code ${code}` }));
        if (!opened) reject(new ProjectionWriteError('exited before it was ready', { name: 'WorkerExit', message: `exit code ${code}` }));
      });
    });
  };

  return {
    kind: 'worker',
    async write(events) {
      if (closed) throw new ProjectionWriteError('write after close', { name: 'Closed', message: 'the writer is closed' });
      const w = await (ready ??= start().catch((err: unknown) => {
        ready = undefined;
        throw err;
      }));
      const id = nextId++;
      return new Promise<number>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage({ type: 'write', id, events: events as EngineEvent[] } satisfies ProjectionWorkerRequest);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const w = worker;
      if (w === undefined) return;
      // Answered once its connection is closed ('closed'), not when the thread is gone: tearing the
      // thread down takes tens of ms more and holds nothing of the database (a sandbox revert
      // replaces the file right after).
      const exited = new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.on('message', (m: ProjectionWorkerReply) => {
          if (m.type === 'closed') resolve();
        });
      });
      // The projector awaits its last write before it closes the writer; the worker closes its
      // connection and exits. A worker that does not answer is terminated, but not before its busy
      // timeout has run out: a thread terminated inside a SQLite call (a write waiting for another
      // process's lock) takes the whole process down, as better-sqlite3 raises into it.
      w.postMessage({ type: 'close' } satisfies ProjectionWorkerRequest);
      const timer = setTimeout(() => void w.terminate(), (opts.database.connectTimeoutMs ?? 5_000) + 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
