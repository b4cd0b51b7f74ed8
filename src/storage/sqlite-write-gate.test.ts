/**
 * The write gate's loop side against a worker side on the same shared memory, in one thread (a
 * worker side that has to wait blocks its thread, so the cases here are the ones where it does not;
 * test/perp/projection-worker-write-gate.test.ts runs both sides on their threads over SQLite).
 */
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createSqliteWriteGate, loopWriteGateOf } from './sqlite-write-gate.ts';

const settled = (p: Promise<unknown>) => {
  const state = { done: false };
  void p.then(() => (state.done = true));
  return state;
};

describe('the SQLite write gate', () => {
  it("a loop write waits, without blocking the loop, for the worker's write it meets and starts when that ends", async () => {
    const worker = createSqliteWriteGate('worker');
    const loop = createSqliteWriteGate('loop', worker.buffer);
    await worker.enter();
    const entering = loop.enter();
    const entered = settled(entering);
    // The loop turns while the write waits, and the write does not start.
    for (let i = 0; i < 5; i++) await turn();
    expect(entered.done).toBe(false);
    worker.leave();
    await entering;
    expect(entered.done).toBe(true);
    loop.leave();
  });

  it('loop writes do not wait for one another (the connection orders them)', async () => {
    const loop = createSqliteWriteGate('loop');
    await loop.enter();
    await loop.enter();
    loop.leave();
    loop.leave();
    // With none running, a worker passes at once.
    const worker = createSqliteWriteGate('worker', loop.buffer);
    await worker.enter();
    worker.leave();
  });

  it('a worker that was lost inside its write no longer holds the gate', async () => {
    const worker = createSqliteWriteGate('worker');
    const loop = createSqliteWriteGate('loop', worker.buffer);
    await worker.enter();
    const entered = loop.enter();
    loop.releaseWorker();
    await entered;
    loop.leave();
  });

  it("a loop write goes on to SQLite's own lock after its longest wait", async () => {
    const worker = createSqliteWriteGate('worker');
    const loop = createSqliteWriteGate('loop', worker.buffer, { maxWaitMs: 20 });
    await worker.enter();
    await loop.enter();
    loop.leave();
    worker.leave();
  });

  it('one gate a file in a thread; none for an in-memory database', () => {
    expect(loopWriteGateOf('/tmp/tokex-gate/a.sqlite')).toBe(loopWriteGateOf('/tmp/tokex-gate/../tokex-gate/a.sqlite'));
    expect(loopWriteGateOf('/tmp/tokex-gate/a.sqlite')).not.toBe(loopWriteGateOf('/tmp/tokex-gate/b.sqlite'));
    expect(loopWriteGateOf('/tmp/tokex-gate/a.sqlite')?.side).toBe('loop');
    expect(loopWriteGateOf(':memory:')).toBeUndefined();
  });
});
