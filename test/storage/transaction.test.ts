import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kyselyOf, type Db, type DbExecutor } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { getQuote, upsertQuotes } from '../../src/storage/quote-store.ts';
import { withTransaction } from '../../src/storage/transaction.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

describe.each(testDatabases)('withTransaction ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('commits every write together and returns the result', async () => {
    const out = await withTransaction(db, async (tx) => {
      await setMeta(tx, 'a', '1');
      await upsertQuotes(tx, [{ symbol: 'AAPL', bid: '1', ask: '2', last: '1.5', timestamp: 5 }]);
      return 'done';
    });
    expect(out).toBe('done');
    expect(await getMeta(db, 'a')).toBe('1');
    expect((await getQuote(db, 'AAPL'))?.last).toBe('1.5');
  });

  it('rolls back every write when the function throws, and rethrows', async () => {
    await setMeta(db, 'a', 'before');
    const boom = new Error('boom');
    await expect(
      withTransaction(db, async (tx) => {
        await setMeta(tx, 'a', 'inside');
        // A store that opens its own transaction joins the caller's instead.
        await upsertQuotes(tx, [{ symbol: 'AAPL', bid: '1', ask: '2', last: '1.5', timestamp: 5 }]);
        expect(await getMeta(tx, 'a')).toBe('inside');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await getMeta(db, 'a')).toBe('before');
    expect(await getQuote(db, 'AAPL')).toBeUndefined();
  });

  it('joins an enclosing transaction when given one', async () => {
    await expect(
      withTransaction(db, async (outer) => {
        await withTransaction(outer, async (inner) => {
          expect(inner).toBe(outer);
          await setMeta(inner, 'nested', 'x');
        });
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await getMeta(db, 'nested')).toBeUndefined();
  });

  /** The commit level the connection running `k` would use now: 'full' or 'relaxed'. */
  const commitLevel = async (k: DbExecutor): Promise<'full' | 'relaxed'> => {
    if (db.dialect === 'postgres') {
      const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(kyselyOf(k));
      return rows[0].synchronous_commit === 'on' ? 'full' : 'relaxed';
    }
    const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(kyselyOf(k));
    return rows[0].synchronous === 2 ? 'full' : 'relaxed';
  };

  it('durable: false commits atomically without waiting for the disk, then every commit is durable again', async () => {
    expect(await commitLevel(db)).toBe('full');
    let other: Promise<string> | undefined;
    await withTransaction(
      db,
      async (tx) => {
        expect(await commitLevel(tx)).toBe('relaxed');
        await setMeta(tx, 'projected', '7');
        // A durable transaction asked for meanwhile commits at the durable level.
        other = withTransaction(db, async (t2) => {
          await setMeta(t2, 'journal', '1');
          return commitLevel(t2);
        });
      },
      { durable: false },
    );
    expect(await other).toBe('full');
    expect(await getMeta(db, 'projected')).toBe('7');
    expect(await commitLevel(db)).toBe('full');

    await expect(
      withTransaction(
        db,
        async (tx) => {
          await setMeta(tx, 'projected', '8');
          throw new Error('write failed');
        },
        { durable: false },
      ),
    ).rejects.toThrow('write failed');
    expect(await getMeta(db, 'projected')).toBe('7');
    expect(await commitLevel(db)).toBe('full');
  });
});
