/**
 * Where the journal's group commits run (docs/perp-sequencer.md "The journal's writer"): on the
 * engine's own thread (`threadJournalWriter`), or on a worker thread with its own connection to the
 * SQLite file (`workerJournalWriter`, what `PERP_JOURNAL_WRITER=auto` picks for a file on a host with
 * more than two cores or a disk slower than a millisecond a sync: journalOnWorker).
 *
 * better-sqlite3 is synchronous: on the order thread a commit stops the loop for its statements and
 * its fsync (0.5–1 ms on these disks, more when a checkpoint falls into it). Below saturation every
 * order is a commit of its own, so at half of saturation a third of the loop's time went to waiting
 * for the disk (issue 40, docs/performance.md "The journal's commits off the loop"). On the worker
 * the loop goes on taking orders while a commit is in flight; they make the next group commit, and
 * their answers are released, as before, only when the commit that holds them is durable.
 *
 * The worker is started at the first append and started again at the append after it failed to
 * open or exited. An append in flight when it died fails; the sequencer then rebuilds the engine
 * from the journal (the commit happened or not, atomically), exactly as after a failed commit on the
 * thread. PostgreSQL's commits are asynchronous I/O already and stay on the thread.
 */
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../errors/app-error.ts';
import type { Logger } from '../../lib/logger.ts';
import { workerScript } from '../../lib/worker-script.ts';
import { DEFAULT_SQLITE_PATH, isInMemorySqlite, type DbExecutor, type OpenDatabaseOptions } from '../../storage/database.ts';
import { measureSyncLatencyMs } from '../../storage/disk-sync-probe.ts';
import { loopWriteGateOf, SQLITE_WRITER_SLOTS } from '../../storage/sqlite-write-gate.ts';
import { appendJournal, type JournalNonceClaim, type JournalRow } from '../store/engine-journal-store.ts';
import type { JournalWorkerData, JournalWorkerReply, JournalWorkerRequest } from './journal-writer-worker.ts';

export interface JournalWriter {
  readonly kind: 'thread' | 'worker';
  /** Makes the writer ready (the worker's thread started, its connection open); the first append does it otherwise. */
  start(): Promise<void>;
  /** Appends the rows and the nonces in one durable commit: all when this resolves, none or all when it rejects. */
  append(rows: readonly JournalRow[], nonces: readonly JournalNonceClaim[]): Promise<void>;
  /** Ends the writer after the append in flight (if any). Idempotent. */
  close(): Promise<void>;
}

export function threadJournalWriter(db: DbExecutor): JournalWriter {
  return { kind: 'thread', start: async () => {}, append: (rows, nonces) => appendJournal(db, rows, nonces), close: async () => {} };
}

/** What `auto` weighs (the process's cores, the data directory's disk); the defaults measure them. */
export interface JournalHost {
  cores(): number;
  /** Median ms of a durable write on the disk of the SQLite file (storage/disk-sync-probe.ts). */
  syncMs(sqlitePath: string): number;
}

/**
 * `auto` keeps a SQLite file's commits on the order thread when the process has at most this many
 * cores and the disk syncs in at most {@link THREAD_JOURNAL_MAX_SYNC_MS}.
 */
export const THREAD_JOURNAL_MAX_CORES = 2;
export const THREAD_JOURNAL_MAX_SYNC_MS = 1;

/** Measured once per folder and process: a sandbox's revert starts the engine again on the same disk. */
const syncMsByDir = new Map<string, number>();
const measuredHost: JournalHost = {
  cores: () => os.availableParallelism(),
  syncMs: (sqlitePath) => {
    const dir = path.dirname(path.resolve(sqlitePath));
    let ms = syncMsByDir.get(dir);
    if (ms === undefined) syncMsByDir.set(dir, (ms = measureSyncLatencyMs(dir)));
    return ms;
  },
};

/**
 * Where `PERP_JOURNAL_WRITER` puts the commits. `auto`: PostgreSQL and an in-memory file on the
 * thread; a SQLite file on the worker, except on a host of at most two cores whose disk syncs in a
 * millisecond or less, where it stays on the thread. There the worker's commit is a thread that
 * must wake on a core the order thread, V8's helpers and the clients' sockets already share: at
 * half of saturation it waited for one 150–186 ms of every second, and the p99 of single orders
 * was 12–47 ms against 9–18 with the commits on the thread, whose fsync stops the loop for a fifth
 * of a millisecond (docs/performance.md "The journal's commits back on the order thread, on two
 * cores"). With more cores the worker has one to itself; on a slow disk the loop must not wait for
 * the sync.
 */
export function journalOnWorker(setting: 'worker' | 'thread' | 'auto', database: OpenDatabaseOptions, host: JournalHost = measuredHost): boolean {
  if (setting === 'thread' || isInMemorySqlite(database)) return false;
  if (setting === 'worker') return true;
  if (database.url !== undefined) return false;
  if (host.cores() > THREAD_JOURNAL_MAX_CORES) return true;
  return !(host.syncMs(database.sqlitePath ?? DEFAULT_SQLITE_PATH) <= THREAD_JOURNAL_MAX_SYNC_MS);
}

/** A commit the worker could not make, or could not report (the message is its error's; a database error of this path holds no secret). */
export class JournalWriteError extends AppError {
  constructor(what: string, reply: { name: string; message: string; code?: string }) {
    super('STORAGE_UNAVAILABLE', `perp journal writer: ${what}: ${reply.message}`, { retryable: true, detail: { name: reply.name, code: reply.code } });
  }
}

export interface WorkerJournalWriterOptions {
  /** How the worker opens the database: the options the process opened it with (a file, not `:memory:`). */
  database: OpenDatabaseOptions;
  logger?: Pick<Logger, 'warn'>;
}

/** The worker's writer, with a way to end its thread as a crash would. */
export interface WorkerJournalWriter extends JournalWriter {
  readonly kind: 'worker';
  /**
   * Ends the thread at once (tests and failure drills); the next append starts a new one. Only
   * between commits: a thread ended inside a SQLite call takes the whole process down (better-sqlite3
   * raises its error into the terminating thread, which Node treats as fatal).
   */
  terminate(): Promise<void>;
}

export function workerJournalWriter(opts: WorkerJournalWriterOptions): WorkerJournalWriter {
  if (isInMemorySqlite(opts.database)) {
    throw new AppError('VALIDATION', 'perp journal writer: an in-memory SQLite database cannot be shared with a worker thread');
  }
  // The gate of this thread's connections to the file: the worker takes its first slot, so a group
  // commit goes before the projection's writes that wait beside it.
  const gate = opts.database.url === undefined ? loopWriteGateOf(opts.database.sqlitePath ?? DEFAULT_SQLITE_PATH) : undefined;
  let worker: Worker | undefined;
  let ready: Promise<Worker> | undefined;
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, { resolve(): void; reject(err: unknown): void }>();
  const failAll = (err: unknown) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };

  const start = (): Promise<Worker> => {
    const { url, argv } = workerScript('perp-journal-worker.js', new URL('./journal-writer-worker.ts', import.meta.url));
    const data: JournalWorkerData = { database: { ...opts.database, ...(gate ? { sqliteWriteGate: gate.buffer, sqliteWriteGateSlot: SQLITE_WRITER_SLOTS.journal } : {}) } };
    const w = new Worker(url, { workerData: data, argv, execArgv: [], name: 'perp-journal' });
    worker = w;
    return new Promise<Worker>((resolve, reject) => {
      let opened = false;
      w.on('message', (m: JournalWorkerReply) => {
        switch (m.type) {
          case 'ready':
            opened = true;
            resolve(w);
            break;
          case 'appended':
            pending.get(m.id)?.resolve();
            pending.delete(m.id);
            break;
          case 'failed':
            pending.get(m.id)?.reject(new JournalWriteError('commit failed', m));
            pending.delete(m.id);
            break;
          case 'open-failed':
            reject(new JournalWriteError('could not open the database', m));
            break;
          case 'closed':
            break;
        }
      });
      w.on('error', (err) => {
        opts.logger?.warn({ err }, 'perp journal writer: failed; it is started again at the next commit');
        if (!opened) reject(err);
      });
      w.on('exit', (code) => {
        // A worker that ended inside a commit (terminated, or crashed) no longer holds the gate; the
        // commit itself happened or not as a whole, and the sequencer's rebuild reads which.
        gate?.releaseWorker(SQLITE_WRITER_SLOTS.journal);
        if (worker === w) {
          worker = undefined;
          ready = undefined;
        }
        failAll(new JournalWriteError('exited', { name: 'WorkerExit', message: `exit code ${code}` }));
        if (!opened) reject(new JournalWriteError('exited before it was ready', { name: 'WorkerExit', message: `exit code ${code}` }));
      });
    });
  };

  const running = (): Promise<Worker> => {
    if (closed) return Promise.reject(new JournalWriteError('closed', { name: 'Closed', message: 'the writer was closed' }));
    if (ready === undefined) {
      const starting = start();
      ready = starting;
      // A start that failed is tried again at the next append.
      starting.catch(() => {
        if (ready === starting) ready = undefined;
      });
    }
    return ready;
  };

  return {
    kind: 'worker',
    async start() {
      await running();
    },
    async append(rows, nonces) {
      const w = await running();
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage({ type: 'append', id, rows, nonces } satisfies JournalWorkerRequest);
      });
    },
    async terminate() {
      await worker?.terminate();
    },
    async close() {
      if (closed) return;
      closed = true;
      const w = worker;
      if (w === undefined) return;
      // The sequencer closes its writer after its last commit was answered; a worker that does not
      // answer its close in time is terminated. Not before its busy timeout has run out: a commit
      // waiting for another process's lock must end inside SQLite first (see terminate).
      // Answered once its connection is closed ('closed'), not when the thread is gone: tearing the
      // thread down takes tens of ms more and holds nothing of the database (a sandbox revert
      // replaces the file right after).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => void w.terminate().finally(resolve), (opts.database.connectTimeoutMs ?? 5_000) + 10_000);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        w.once('exit', done);
        w.on('message', (m: { type?: string }) => {
          if (m.type === 'closed') done();
        });
        w.postMessage({ type: 'close' } satisfies JournalWorkerRequest);
      });
    },
  };
}
