/**
 * The write gate with two workers on their own threads (the journal's writer and the projection's),
 * as a SQLite file has them in the perp engine's process: one writes at a time, the loop's writes
 * keep their turn, and when both wait the journal's slot goes first, so a group commit of orders
 * never queues behind the projection's writes.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createSqliteWriteGate, sqliteWriteGateState, SQLITE_WRITER_SLOTS } from '../../src/storage/sqlite-write-gate.ts';
import { until } from '../support/poll.ts';

const BOOT = new URL('../../src/lib/ts-worker-boot.mjs', import.meta.url);
const ENTRY = new URL('../support/write-gate-worker.ts', import.meta.url).href;

function startWorker(gate: SharedArrayBuffer, log: SharedArrayBuffer, slot: number, holdMs: number): { done: Promise<void>; worker: Worker } {
  const worker = new Worker(BOOT, { argv: [ENTRY], workerData: { gate, slot, log, holdMs }, execArgv: [] });
  const done = new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`gate worker exited with ${code}`))));
  });
  return { done, worker };
}

const entered = (log: Int32Array) => Array.from(log.subarray(1, 1 + Atomics.load(log, 0)));

describe('the SQLite write gate with several workers', () => {
  it("when the journal's writer and the projection's both wait, the journal's slot writes first, and neither while the loop writes", { timeout: 30_000 }, async () => {
    const loop = createSqliteWriteGate('loop');
    const log = new Int32Array(new SharedArrayBuffer(4 * 8));
    await loop.enter();
    // The projection's worker asks first; the journal's after it.
    const projection = startWorker(loop.buffer, log.buffer as SharedArrayBuffer, SQLITE_WRITER_SLOTS.projection, 20);
    await until(async () => sqliteWriteGateState(loop.buffer).waiting.includes(SQLITE_WRITER_SLOTS.projection), (ok) => ok);
    const journal = startWorker(loop.buffer, log.buffer as SharedArrayBuffer, SQLITE_WRITER_SLOTS.journal, 20);
    await until(async () => sqliteWriteGateState(loop.buffer).waiting.includes(SQLITE_WRITER_SLOTS.journal), (ok) => ok);
    expect(entered(log), 'no worker writes while the loop does').toEqual([]);
    expect(sqliteWriteGateState(loop.buffer)).toEqual({ loopWrites: 1, holder: undefined, waiting: [SQLITE_WRITER_SLOTS.journal, SQLITE_WRITER_SLOTS.projection] });
    loop.leave();
    await Promise.all([projection.done, journal.done]);
    expect(entered(log)).toEqual([SQLITE_WRITER_SLOTS.journal, SQLITE_WRITER_SLOTS.projection]);
    expect(sqliteWriteGateState(loop.buffer)).toEqual({ loopWrites: 0, holder: undefined, waiting: [] });
    await Promise.all([projection.worker.terminate(), journal.worker.terminate()]);
  });

  it('a loop write waits, its loop turning, for the worker that holds the gate; a worker that asks while the loop writes waits for it', { timeout: 30_000 }, async () => {
    const loop = createSqliteWriteGate('loop');
    const log = new Int32Array(new SharedArrayBuffer(4 * 8));
    const journal = startWorker(loop.buffer, log.buffer as SharedArrayBuffer, SQLITE_WRITER_SLOTS.journal, 2_000);
    await until(async () => sqliteWriteGateState(loop.buffer).holder === SQLITE_WRITER_SLOTS.journal, (ok) => ok);
    let loopIn = false;
    const loopEnter = loop.enter().then(() => (loopIn = true));
    // The loop's write is waiting (its loop turning) while the journal's worker holds the gate (2 s).
    await new Promise((r) => setTimeout(r, 20));
    expect(loopIn).toBe(false);
    await loopEnter;
    await journal.done;
    expect(sqliteWriteGateState(loop.buffer).holder).toBeUndefined();
    // The loop now writes; a worker that asks waits for it.
    const projection = startWorker(loop.buffer, log.buffer as SharedArrayBuffer, SQLITE_WRITER_SLOTS.projection, 0);
    await until(async () => sqliteWriteGateState(loop.buffer).waiting.includes(SQLITE_WRITER_SLOTS.projection), (ok) => ok);
    expect(entered(log)).toEqual([SQLITE_WRITER_SLOTS.journal]);
    loop.leave();
    await projection.done;
    expect(entered(log)).toEqual([SQLITE_WRITER_SLOTS.journal, SQLITE_WRITER_SLOTS.projection]);
    await Promise.all([projection.worker.terminate(), journal.worker.terminate()]);
  });

  it('the slot of a lost worker is given back: its wait and its hold', () => {
    const loop = createSqliteWriteGate('loop');
    const worker = createSqliteWriteGate('worker', loop.buffer, { slot: SQLITE_WRITER_SLOTS.journal });
    void worker.enter();
    expect(sqliteWriteGateState(loop.buffer).holder).toBe(SQLITE_WRITER_SLOTS.journal);
    // Releasing another slot leaves the holder as it is.
    loop.releaseWorker(SQLITE_WRITER_SLOTS.projection);
    expect(sqliteWriteGateState(loop.buffer).holder).toBe(SQLITE_WRITER_SLOTS.journal);
    loop.releaseWorker(SQLITE_WRITER_SLOTS.journal);
    expect(sqliteWriteGateState(loop.buffer)).toEqual({ loopWrites: 0, holder: undefined, waiting: [] });
    expect(() => createSqliteWriteGate('worker', loop.buffer, { slot: 4 })).toThrow(RangeError);
    expect(() => createSqliteWriteGate('worker', new SharedArrayBuffer(12))).toThrow(RangeError);
  });
});
