/**
 * The projection's worker thread (projection-worker-client.ts) on its own: it writes what the
 * engine's thread would write, a database it cannot open fails the write with a retryable error and
 * the next write starts it again, and `close()` ends the thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/perp/engine/engine-types.ts';
import { FEE_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';
import { projectorOnWorker, ProjectionWriteError, workerProjectionWriter, type ProjectionWriter } from '../../src/perp/projection/projection-worker-client.ts';
import { PROJECTION_CURSOR_KEY } from '../../src/perp/projection/projection-write.ts';
import { listTransactions } from '../../src/perp/store/perp-history-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const A = '0x00000000000000000000000000000000000000a1';
const deposit = (seq: number, amount: bigint): EngineEvent =>
  ({ type: 'balanceChanged', seq, ts: 1_717_999_200_000 + seq, commandId: `dep:0x${seq.toString(16)}-0`, account: A, collateral: amount * BigInt(seq), delta: amount, reason: 'deposit' }) as unknown as EngineEvent;

describe.each(testDatabases)('the projection worker thread ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const writers: ProjectionWriter[] = [];
  afterEach(async () => {
    for (const w of writers.splice(0)) await w.close();
  });

  it('writes the rows and the cursor in the shared database, one write after the other', async () => {
    const w = workerProjectionWriter({ database: db.location, feeAccount: FEE_ACCOUNT });
    writers.push(w);
    expect(w.kind).toBe('worker');
    expect(await w.write([deposit(1, 5_000_000n), deposit(2, 5_000_000n)])).toBe(2);
    expect(await w.write([deposit(3, 7_000_000n)])).toBe(3);
    expect(await getMeta(db, PROJECTION_CURSOR_KEY)).toBe('3');
    const { rows } = await listTransactions(db, { account: A, offset: 0, limit: 10 });
    expect(rows.map((t) => [t.type, t.amount]).sort()).toEqual([['DEPOSIT', 5_000_000n], ['DEPOSIT', 5_000_000n], ['DEPOSIT', 7_000_000n]]);
    await w.close();
    await expect(w.write([deposit(4, 1n)])).rejects.toBeInstanceOf(ProjectionWriteError);
  });
});

describe('the projection worker thread on a database it cannot open', () => {
  it('fails the write with a retryable error and tries again at the next write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokex-projection-'));
    try {
      // A path under a file, not a folder: the worker cannot create it.
      const blocked = join(dir, 'file');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(blocked, 'not a folder');
      const w = workerProjectionWriter({ database: { sqlitePath: join(blocked, 'tokex.sqlite') }, feeAccount: FEE_ACCOUNT });
      for (let i = 0; i < 2; i++) {
        const err = await w.write([deposit(1, 1n)]).then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(ProjectionWriteError);
        expect((err as ProjectionWriteError).retryable).toBe(true);
        expect((err as Error).message).toMatch(/^perp projection worker: could not open the database: /);
      }
      await w.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an in-memory SQLite database, which a worker cannot share', () => {
    expect(() => workerProjectionWriter({ database: { sqlitePath: ':memory:' }, feeAccount: FEE_ACCOUNT })).toThrow(/in-memory SQLite/);
  });
});

describe('where PERP_PROJECTOR puts the writes', () => {
  it('auto: the worker on PostgreSQL and on a SQLite file, the thread on an in-memory SQLite database', () => {
    expect(projectorOnWorker('auto', { url: 'postgres://postgres@127.0.0.1:5432/test' })).toBe(true);
    expect(projectorOnWorker('auto', { sqlitePath: './data/tokex.sqlite' })).toBe(true);
    expect(projectorOnWorker('auto', {})).toBe(true);
    expect(projectorOnWorker('auto', { sqlitePath: ':memory:' })).toBe(false);
    expect(projectorOnWorker('thread', { sqlitePath: './data/tokex.sqlite' })).toBe(false);
    expect(projectorOnWorker('worker', { url: 'postgres://postgres@127.0.0.1:5432/test' })).toBe(true);
  });
});
