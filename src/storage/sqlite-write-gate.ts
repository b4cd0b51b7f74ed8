/**
 * One SQLite file's write lock, shared between the threads of one process so that the thread that
 * serves requests never waits for it inside SQLite (issue 40; docs/perp-sequencer.md "The
 * projector").
 *
 * SQLite has one write lock a file. A connection that meets it held waits in SQLite's busy handler,
 * which sleeps the calling thread: on the thread that takes orders, renews leases and answers
 * clients that is a stalled event loop (5 s, every role's lease lost, when the perp projection's
 * worker thread wrote a catch-up batch). The gate puts a lock of the process's own in front of
 * SQLite's, in shared memory:
 *
 * - a worker's side (`'worker'`) says it waits (WORKER_WANTS), blocks its own thread (Atomics.wait)
 *   until no write of the loop runs, takes the gate, and gives it back at once if the loop began a
 *   write in between (Dekker's order: each side writes its own word and then reads the other's,
 *   sequentially consistent);
 * - the loop's side (`'loop'`) starts no new write while a worker waits or writes, and waits for
 *   it with `Atomics.waitAsync`: the loop keeps running, and its write starts when the worker's
 *   transaction ends. Without that turn, the loop's writes, one after the other, would starve the
 *   worker.
 *
 * The gate orders writers of this process only; another process on the same file still meets
 * SQLite's own lock and busy handler, as before. A worker must keep its transactions short: the loop
 * waits for the one it meets (the projection's worker writes at most PROJECTION_WORKER_CHUNK
 * events a transaction).
 */
import { resolve } from 'node:path';

/** Int32 words of the shared buffer. */
const LOOP_WRITES = 0; // writes of the loop running (its connections are serialised, but a thread may hold several)
const WORKER_HOLDS = 1; // 1 while a worker's write runs
const WORKER_WANTS = 2; // 1 while a worker waits for the loop's writes to end

export type SqliteWriteGateSide = 'loop' | 'worker';

export interface SqliteWriteGate {
  readonly side: SqliteWriteGateSide;
  /** The shared memory, for the worker that opens the same file (workerData). */
  readonly buffer: SharedArrayBuffer;
  /** Waits until this side may write; the loop's side without blocking its thread. */
  enter(): Promise<void>;
  /** Ends a write begun with `enter` (exactly once each). */
  leave(): void;
  /** The worker's side was lost (its thread exited): a write of it that never ended no longer holds the gate. */
  releaseWorker(): void;
}

export interface SqliteWriteGateOptions {
  /** Most milliseconds the loop's side waits for a worker's write; then it goes on to SQLite's own lock (and its busy timeout). Default 5 000. */
  maxWaitMs?: number;
}

// Node 20 has Atomics.waitAsync; the ES2023 lib this project compiles against does not declare it.
type WaitAsync = (typed: Int32Array, index: number, value: number, timeout?: number) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export function createSqliteWriteGate(side: SqliteWriteGateSide, buffer: SharedArrayBuffer = new SharedArrayBuffer(12), opts: SqliteWriteGateOptions = {}): SqliteWriteGate {
  const words = new Int32Array(buffer);
  const maxWaitMs = opts.maxWaitMs ?? 5_000;
  const releaseWorker = () => {
    Atomics.store(words, WORKER_WANTS, 0);
    Atomics.notify(words, WORKER_WANTS);
    Atomics.store(words, WORKER_HOLDS, 0);
    Atomics.notify(words, WORKER_HOLDS);
  };
  if (side === 'loop') {
    const leave = () => {
      Atomics.sub(words, LOOP_WRITES, 1);
      Atomics.notify(words, LOOP_WRITES);
    };
    return {
      side,
      buffer,
      async enter() {
        const deadline = performance.now() + maxWaitMs;
        for (;;) {
          if (Atomics.load(words, WORKER_WANTS) === 0 && Atomics.load(words, WORKER_HOLDS) === 0) {
            Atomics.add(words, LOOP_WRITES, 1);
            if (Atomics.load(words, WORKER_HOLDS) === 0) return;
            // The worker took the gate between the two reads: its write goes first.
            leave();
          }
          const left = deadline - performance.now();
          if (left <= 0) {
            // On to SQLite's own lock and its busy timeout, as without the gate.
            Atomics.add(words, LOOP_WRITES, 1);
            return;
          }
          const word = Atomics.load(words, WORKER_HOLDS) !== 0 ? WORKER_HOLDS : WORKER_WANTS;
          const r = waitAsync(words, word, 1, left);
          if (r.async) await r.value;
        }
      },
      leave,
      releaseWorker,
    };
  }
  return {
    side,
    buffer,
    async enter() {
      Atomics.store(words, WORKER_WANTS, 1);
      for (;;) {
        const running = Atomics.load(words, LOOP_WRITES);
        if (running !== 0) {
          // Woken when the loop's count changes; the timeout only reads it again.
          Atomics.wait(words, LOOP_WRITES, running, 100);
          continue;
        }
        Atomics.store(words, WORKER_HOLDS, 1);
        if (Atomics.load(words, LOOP_WRITES) === 0) break;
        // A write of the loop began between the two reads: it goes first.
        Atomics.store(words, WORKER_HOLDS, 0);
        Atomics.notify(words, WORKER_HOLDS);
      }
      Atomics.store(words, WORKER_WANTS, 0);
      Atomics.notify(words, WORKER_WANTS);
    },
    leave: releaseWorker,
    releaseWorker,
  };
}

// The loop's gates of this thread, one a file: every connection of this thread to the file shares it.
const loopGates = new Map<string, SqliteWriteGate>();

/** The loop's side of the gate of the SQLite file at `path` (created at first use; `:memory:` has none). */
export function loopWriteGateOf(path: string): SqliteWriteGate | undefined {
  if (path === ':memory:' || path === '') return undefined;
  const key = resolve(path);
  let gate = loopGates.get(key);
  if (gate === undefined) {
    gate = createSqliteWriteGate('loop');
    loopGates.set(key, gate);
  }
  return gate;
}
