/**
 * A worker thread that takes one side of a SQLite write gate (storage/sqlite-write-gate.ts) without
 * any SQLite: it enters on its slot, writes its slot into the shared log, holds the gate for
 * `holdMs`, leaves and says `done`. For test/storage/sqlite-write-gate-slots.test.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createSqliteWriteGate } from '../../src/storage/sqlite-write-gate.ts';

const data = workerData as { gate: SharedArrayBuffer; slot: number; log: SharedArrayBuffer; holdMs: number };
const log = new Int32Array(data.log);
const gate = createSqliteWriteGate('worker', data.gate, { slot: data.slot });
await gate.enter();
// log[0] is the count; the slots follow in the order they entered.
const at = Atomics.add(log, 0, 1) + 1;
Atomics.store(log, at, data.slot);
const until = performance.now() + data.holdMs;
while (performance.now() < until) Atomics.wait(log, log.length - 1, 0, 1);
gate.leave();
parentPort?.postMessage('done');
