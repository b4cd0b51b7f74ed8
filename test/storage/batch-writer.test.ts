import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors/app-error.ts';
import { createBatchWriter } from '../../src/storage/batch-writer.ts';
import { getCheckpoint, initCheckpoint, moveCheckpoint } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { getQuote, upsertQuotes } from '../../src/storage/quote-store.ts';
import { createWriteRecorder } from '../../src/storage/write-recorder.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

describe.each(testDatabases)('recorded writes and the batch writer ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('records what store functions would write, without writing, and replays it in one transaction', async () => {
    const recorder = createWriteRecorder(db);
    const statements = await recorder.record(async (r) => {
      await setMeta(r, 'a', '1');
      await upsertQuotes(r, [{ symbol: 'AAPL', bid: '1', ask: '2', last: '1.5', timestamp: 5 }]);
    });
    expect(statements).toHaveLength(2);
    expect(await getMeta(db, 'a')).toBeUndefined();

    await createBatchWriter(db).submit({ statements });
    expect(await getMeta(db, 'a')).toBe('1');
    expect((await getQuote(db, 'AAPL'))?.last).toBe('1.5');
  });

  it('refuses to record a read, which would otherwise see no rows', async () => {
    const recorder = createWriteRecorder(db);
    await expect(recorder.record((r) => getMeta(r, 'a'))).rejects.toThrow(/reads cannot be recorded/);
    // The recorder is usable again afterwards.
    expect(await recorder.record((r) => setMeta(r, 'b', '2'))).toHaveLength(1);
  });

  it('a batch whose guard changes no row is rolled back whole with a ConflictError', async () => {
    await initCheckpoint(db, 'test', { number: 1, hash: '0x01' }, 0);
    const recorder = createWriteRecorder(db);
    const statements = await recorder.record((r) => setMeta(r, 'x', 'written'));
    // The guard expects the checkpoint at block 7: it is at 1, so nothing may stay written.
    const [stale] = await recorder.record((r) => moveCheckpoint(r, 'test', { number: 7, hash: '0x07' }, { number: 8, hash: '0x08' }, 0));
    await expect(createBatchWriter(db).submit({ statements, guard: stale })).rejects.toBeInstanceOf(ConflictError);
    expect(await getMeta(db, 'x')).toBeUndefined();
    expect(await getCheckpoint(db, 'test')).toEqual({ number: 1, hash: '0x01' });

    const [fresh] = await recorder.record((r) => moveCheckpoint(r, 'test', { number: 1, hash: '0x01' }, { number: 2, hash: '0x02' }, 0));
    await createBatchWriter(db).submit({ statements, guard: fresh });
    expect(await getMeta(db, 'x')).toBe('written');
    expect(await getCheckpoint(db, 'test')).toEqual({ number: 2, hash: '0x02' });
  });

  it('runs batches in the order submitted; a failed one does not stop the next', async () => {
    const recorder = createWriteRecorder(db);
    const writer = createBatchWriter(db);
    const first = writer.submit({ statements: await recorder.record((r) => setMeta(r, 'k', 'first')) });
    const broken = await recorder.record((r) => setMeta(r, 'k', 'broken'));
    // Same statement with a parameter missing: the database refuses it.
    const failing = writer.submit({ statements: [{ ...broken[0], parameters: [] }] });
    const third = writer.submit({ statements: await recorder.record((r) => setMeta(r, 'k', 'third')) });
    await first;
    await expect(failing).rejects.toThrow();
    await third;
    expect(await getMeta(db, 'k')).toBe('third');
  });

  it('relaxed durability waits for no disk flush in its own transactions only, and leaves the connection as it was', async () => {
    // What the engine's commit-durability setting is inside a batch's transaction, written by the batch.
    const probe = (key: string) =>
      db.dialect === 'sqlite'
        ? sql`insert into meta (key, value) select ${key}, cast(synchronous as text) from pragma_synchronous`.compile(db.kysely)
        : sql`insert into meta (key, value) values (${key}, current_setting('synchronous_commit'))`.compile(db.kysely);
    const setting = async () =>
      db.dialect === 'sqlite'
        ? String((await sql<{ synchronous: number }>`pragma synchronous`.execute(db.kysely)).rows[0].synchronous)
        : (await sql<{ v: string }>`select current_setting('synchronous_commit') as v`.execute(db.kysely)).rows[0].v;
    // SQLite: 2 = FULL (what openDatabase sets), 1 = NORMAL. PostgreSQL: on / off.
    const [full, relaxed] = db.dialect === 'sqlite' ? ['2', '1'] : ['on', 'off'];
    expect(await setting()).toBe(full);

    await createBatchWriter(db, { durability: 'relaxed' }).submit({ statements: [probe('relaxed')] });
    await createBatchWriter(db).submit({ statements: [probe('full')] });
    expect(await getMeta(db, 'relaxed')).toBe(relaxed);
    expect(await getMeta(db, 'full')).toBe(full);
    expect(await setting()).toBe(full);

    // A relaxed batch that fails is rolled back and restores the setting too.
    await initCheckpoint(db, 'test', { number: 1, hash: '0x01' }, 0);
    const [stale] = await createWriteRecorder(db).record((r) => moveCheckpoint(r, 'test', { number: 7, hash: '0x07' }, { number: 8, hash: '0x08' }, 0));
    await expect(createBatchWriter(db, { durability: 'relaxed' }).submit({ statements: [probe('rolled back')], guard: stale })).rejects.toBeInstanceOf(ConflictError);
    expect(await getMeta(db, 'rolled back')).toBeUndefined();
    expect(await setting()).toBe(full);
  });
});
