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
 * - a worker's side (`'worker'`) says it waits (its word of WANTS), blocks its own thread
 *   (Atomics.wait) until no write of the loop runs, takes the gate, and gives it back at once if the
 *   loop began a write in between (Dekker's order: each side writes its own word and then reads the
 *   other's, sequentially consistent);
 * - the loop's side (`'loop'`) starts no new write while a worker waits or writes, and waits for
 *   it with `Atomics.waitAsync`: the loop keeps running, and its write starts when the worker's
 *   transaction ends. Without that turn, the loop's writes, one after the other, would starve the
 *   worker.
 *
 * Several workers may share a gate, each on a slot of its own (`SQLITE_WRITER_SLOTS`): one of them
 * writes at a time, and when several wait the lowest slot goes first. The journal's writer is slot
 * 0, so a group commit of orders waits at most for the one transaction of the projection's worker
 * that it meets, never for a queue of them.
 *
 * The gate orders writers of this process only; another process on the same file still meets
 * SQLite's own lock and busy handler, as before. A worker must keep its transactions short: the loop
 * waits for the one it meets (the projection's worker writes at most PROJECTION_WORKER_CHUNK
 * events a transaction).
 */
import { resolve } from 'node:path';

/**
 * The workers' slots, lowest first when several wait: the journal's group commits (acknowledged
 * orders wait for them) before the projection's history writes (nothing waits for them but reads).
 */
export const SQLITE_WRITER_SLOTS = { journal: 0, projection: 1 } as const;
/** How many worker slots a gate has. */
const SLOTS = 4;

/** Int32 words of the shared buffer. */
const CHANGES = 0; // bumped (and notified) on every change below: what every waiter waits on
const LOOP_WRITES = 1; // writes of the loop running (its connections are serialised, but a thread may hold several)
const HOLDER = 2; // 0, or 1 + the slot of the worker whose write runs
const WANTS = 3; // WANTS + slot: 1 while that worker waits for the gate
const WORDS = WANTS + SLOTS;

export type SqliteWriteGateSide = 'loop' | 'worker';

export interface SqliteWriteGate {
  readonly side: SqliteWriteGateSide;
  /** The shared memory, for the worker that opens the same file (workerData). */
  readonly buffer: SharedArrayBuffer;
  /** Waits until this side may write; the loop's side without blocking its thread. */
  enter(): Promise<void>;
  /** Ends a write begun with `enter` (exactly once each). */
  leave(): void;
  /** The worker of `slot` was lost (its thread exited): a write of it that never ended no longer holds the gate. */
  releaseWorker(slot?: number): void;
}

export interface SqliteWriteGateOptions {
  /** Most milliseconds the loop's side waits for a worker's write; then it goes on to SQLite's own lock (and its busy timeout). Default 5 000. */
  maxWaitMs?: number;
  /** The worker side's slot (SQLITE_WRITER_SLOTS). Default the projection's. */
  slot?: number;
}

// Node 20 has Atomics.waitAsync; the ES2023 lib this project compiles against does not declare it.
type WaitAsync = (typed: Int32Array, index: number, value: number, timeout?: number) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** A new gate's shared memory. */
export function sqliteWriteGateBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(WORDS * 4);
}

/** Who writes and who waits, read from a gate's shared memory (for tests and diagnostics). */
export function sqliteWriteGateState(buffer: SharedArrayBuffer): { loopWrites: number; holder: number | undefined; waiting: number[] } {
  const words = new Int32Array(buffer);
  const holder = Atomics.load(words, HOLDER);
  const waiting: number[] = [];
  for (let i = 0; i < SLOTS; i++) if (Atomics.load(words, WANTS + i) !== 0) waiting.push(i);
  return { loopWrites: Atomics.load(words, LOOP_WRITES), holder: holder === 0 ? undefined : holder - 1, waiting };
}

export function createSqliteWriteGate(side: SqliteWriteGateSide, buffer: SharedArrayBuffer = sqliteWriteGateBuffer(), opts: SqliteWriteGateOptions = {}): SqliteWriteGate {
  if (buffer.byteLength < WORDS * 4) throw new RangeError(`sqlite write gate: the shared buffer needs ${WORDS * 4} bytes`);
  const words = new Int32Array(buffer);
  const maxWaitMs = opts.maxWaitMs ?? 5_000;
  const changed = () => {
    Atomics.add(words, CHANGES, 1);
    Atomics.notify(words, CHANGES);
  };
  const wanted = (below: number) => {
    for (let i = 0; i < below; i++) if (Atomics.load(words, WANTS + i) !== 0) return true;
    return false;
  };
  const releaseWorker = (slot: number = SQLITE_WRITER_SLOTS.projection) => {
    Atomics.store(words, WANTS + slot, 0);
    Atomics.compareExchange(words, HOLDER, slot + 1, 0);
    changed();
  };
  if (side === 'loop') {
    const leave = () => {
      Atomics.sub(words, LOOP_WRITES, 1);
      changed();
    };
    return {
      side,
      buffer,
      async enter() {
        const deadline = performance.now() + maxWaitMs;
        for (;;) {
          const seen = Atomics.load(words, CHANGES);
          if (Atomics.load(words, HOLDER) === 0 && !wanted(SLOTS)) {
            Atomics.add(words, LOOP_WRITES, 1);
            // Dekker's order: the count is written before the holder is read, as a worker writes the
            // holder before it reads the count, so one of the two sees the other.
            if (Atomics.load(words, HOLDER) === 0) return;
            // A worker took the gate between the two reads: its write goes first.
            leave();
            continue;
          }
          const left = deadline - performance.now();
          if (left <= 0) {
            // On to SQLite's own lock and its busy timeout, as without the gate.
            Atomics.add(words, LOOP_WRITES, 1);
            return;
          }
          const r = waitAsync(words, CHANGES, seen, left);
          if (r.async) await r.value;
        }
      },
      leave,
      releaseWorker,
    };
  }
  const slot = opts.slot ?? SQLITE_WRITER_SLOTS.projection;
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`sqlite write gate: slot ${slot} is not one of 0..${SLOTS - 1}`);
  return {
    side,
    buffer,
    async enter() {
      Atomics.store(words, WANTS + slot, 1);
      changed();
      for (;;) {
        const seen = Atomics.load(words, CHANGES);
        // The loop's writes and the lower slots' waits go first; then the holder's word decides between workers.
        if (Atomics.load(words, LOOP_WRITES) === 0 && !wanted(slot) && Atomics.compareExchange(words, HOLDER, 0, slot + 1) === 0) {
          if (Atomics.load(words, LOOP_WRITES) === 0) break;
          // A write of the loop began between the two reads: it goes first.
          Atomics.store(words, HOLDER, 0);
          changed();
          continue;
        }
        // Woken by any change; the timeout only reads the words again.
        Atomics.wait(words, CHANGES, seen, 100);
      }
      Atomics.store(words, WANTS + slot, 0);
      changed();
    },
    leave: () => {
      Atomics.compareExchange(words, HOLDER, slot + 1, 0);
      changed();
    },
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
