import { describe, expect, it } from 'vitest';
import { bulkInsertRecords, chunkRows } from '../../src/storage/bulk-sql.ts';
import type { Db } from '../../src/storage/database.ts';
import { getCalldataRecord, recordCalldata, recordCalldataBatch } from '../../src/stock/store/tx-record-store.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** The row counts of the statements `bulkInsertWith` issues for `total` rows. */
function plan(total: number, perChunk: number): number[] {
  const out: number[] = [];
  for (let left = total; left > 0; left -= out[out.length - 1]) out.push(chunkRows(left, perChunk));
  return out;
}

describe('chunkRows', () => {
  it('takes full chunks, then the remainder as descending powers of two', () => {
    expect(plan(4321, 2000)).toEqual([2000, 2000, 256, 64, 1]);
    expect(plan(1304, 1304)).toEqual([1304]);
    expect(plan(1, 2000)).toEqual([1]);
    expect(plan(1023, 2000)).toEqual([512, 256, 128, 64, 32, 16, 8, 4, 2, 1]);
  });

  it('covers every total exactly with at most a dozen distinct statement sizes per chunk size', () => {
    for (const perChunk of [1, 7, 1304, 2000]) {
      const sizes = new Set<number>();
      const wrong: string[] = [];
      for (let total = 1; total <= 5000; total += 1 + (total % 13)) {
        const p = plan(total, perChunk);
        if (p.reduce((a, b) => a + b, 0) !== total) wrong.push(`${total}/${perChunk}: sums to ${p.join('+')}`);
        for (const n of p) {
          if (!(n === perChunk || (n < perChunk && Number.isInteger(Math.log2(n))))) wrong.push(`${total}/${perChunk}: ${n}`);
          sizes.add(n);
        }
      }
      expect(wrong).toEqual([]);
      expect(sizes.size).toBeLessThanOrEqual(12);
    }
  });
});

describe.each(testDatabases)('bulk inserts ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('writes every row of a batch that needs full chunks and a split remainder, values exact', async () => {
    const records = Array.from({ length: 4321 }, (_, i) => ({ calldataHash: hash(i), apiKey: `key-${i % 7}`, kind: 'order', createdAt: 1_700_000_000_000 + i }));
    await recordCalldataBatch(db, records);
    const count = await db.kysely.selectFrom('stock_calldata_requests').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(4321);
    for (const i of [0, 1999, 2000, 3999, 4000, 4255, 4256, 4319, 4320]) {
      expect(await getCalldataRecord(db, hash(i))).toEqual(records[i]);
    }
  });

  it('reads each column of a record batch from the field of its camelCase name', async () => {
    const spec = { table: 'stock_calldata_requests', columns: ['calldata_hash', 'api_key', 'kind', 'created_at'] };
    const records = Array.from({ length: 5 }, (_, i) => ({ calldataHash: hash(100 + i), apiKey: `rec-${i}`, kind: 'cash-deposit', createdAt: 1_700_000_000_000 + i, ignored: 'not a column' }));
    await bulkInsertRecords(db, spec, records);
    for (const [i, r] of records.entries()) {
      expect(await getCalldataRecord(db, hash(100 + i))).toEqual({ calldataHash: r.calldataHash, apiKey: r.apiKey, kind: r.kind, createdAt: r.createdAt });
    }
  });

  it('keeps the first writer of a hash, within a batch and against what is stored', async () => {
    await recordCalldata(db, { calldataHash: hash(1), apiKey: 'stored', kind: 'order', createdAt: 1 });
    await recordCalldataBatch(db, [
      { calldataHash: hash(1).toUpperCase().replace('0X', '0x'), apiKey: 'late', kind: 'order', createdAt: 2 },
      { calldataHash: hash(2), apiKey: 'first', kind: 'cash-deposit', createdAt: 3 },
      { calldataHash: hash(2), apiKey: 'second', kind: 'cash-deposit', createdAt: 4 },
    ]);
    expect((await getCalldataRecord(db, hash(1)))?.apiKey).toBe('stored');
    expect(await getCalldataRecord(db, hash(2))).toEqual({ calldataHash: hash(2), apiKey: 'first', kind: 'cash-deposit', createdAt: 3 });
  });
});
