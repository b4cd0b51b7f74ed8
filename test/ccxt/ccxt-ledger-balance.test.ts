/**
 * The balance the ledger's `before`/`after` come from (`balanceAfter` of `GET account/transactions`,
 * transactionBalancesAfter): the sum of the account's movements up to each listed row, in the
 * list's order, whatever page or filter listed it; exact beyond 2^53; on SQLite and, when
 * DATABASE_URL is set, PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { insertTransactions, listTransactions, transactionBalancesAfter, type PerpTransactionRecord } from '../../src/perp/store/perp-history-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const C = '0x00000000000000000000000000000000000000c3';
const USD = 1_000_000n;

const tx = (txId: string, account: string, type: PerpTransactionRecord['type'], amount: bigint, ts: number, symbol: string | null = null): PerpTransactionRecord => ({
  txId, account, type, symbol, amount, ref: null, ts,
});

const ROWS: PerpTransactionRecord[] = [
  tx('5:DEPOSIT', A, 'DEPOSIT', 10_000n * USD, 1_000),
  tx('6:DEPOSIT', B, 'DEPOSIT', 5n * USD, 1_500),
  // Two fees in one millisecond: the list orders them by id as the database compares text.
  tx('9:FEE:T', A, 'FEE', -4_010n, 2_000, 'BTC-USD'),
  tx('12:FEE:T', A, 'FEE', -2_000n, 2_000, 'BTC-USD'),
  tx('20:WITHDRAWAL', A, 'WITHDRAWAL', -1n * USD, 3_000),
  tx('21:FUNDING', A, 'FUNDING', 1_985n, 4_000, 'BTC-USD'),
  // Past 2^53 micro-USD: a double would round these.
  tx('30:DEPOSIT', C, 'DEPOSIT', 9_007_199_254_740_993n, 5_000),
  tx('31:REALISED_PNL:T', C, 'REALISED_PNL', 1n, 6_000, 'BTC-USD'),
];

describe.each(testDatabases)('ledger balances after each movement ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  const list = (q: Partial<Parameters<typeof listTransactions>[1]> & { account: string }) => listTransactions(db, { offset: 0, limit: 100, ...q });
  const balances = async (q: Partial<Parameters<typeof listTransactions>[1]> & { account: string }): Promise<Array<[string, bigint | undefined]>> => {
    const { rows } = await list(q);
    const after = await transactionBalancesAfter(db, q.account, rows);
    return rows.map((r) => [r.txId, after.get(r.txId)]);
  };

  it('every row: the running sum of the account alone, newest first; each = the previous (older) + its amount', async () => {
    await insertTransactions(db, ROWS);
    const { rows } = await list({ account: A });
    const after = await transactionBalancesAfter(db, A, rows);
    expect(rows.map((r) => r.txId).slice(0, 2)).toEqual(['21:FUNDING', '20:WITHDRAWAL']);
    expect(rows.at(-1)!.txId).toBe('5:DEPOSIT');
    // The chain, in the list's own order (the two fees of one ms in whichever order it gives them).
    for (let i = 0; i < rows.length - 1; i++) expect(after.get(rows[i].txId), rows[i].txId).toBe(after.get(rows[i + 1].txId)! + rows[i].amount);
    expect(after.get('5:DEPOSIT')).toBe(10_000_000_000n);
    const [newer, older] = rows.slice(2, 4);
    expect(after.get(older.txId)).toBe(10_000_000_000n + older.amount);
    expect(after.get(newer.txId)).toBe(9_999_993_990n);
    expect(after.get('20:WITHDRAWAL')).toBe(9_998_993_990n);
    expect(after.get('21:FUNDING')).toBe(9_998_995_975n);
    expect(await balances({ account: B })).toEqual([['6:DEPOSIT', 5_000_000n]]);
    expect(await balances({ account: C })).toEqual([
      ['31:REALISED_PNL:T', 9_007_199_254_740_994n],
      ['30:DEPOSIT', 9_007_199_254_740_993n],
    ]);
  });

  it('a later page, a type or symbol filter, a time range: the same balance as in the whole list', async () => {
    await insertTransactions(db, ROWS);
    const whole = new Map(await balances({ account: A }));
    for (const q of [
      { account: A, offset: 2, limit: 2 },
      { account: A, offset: 4, limit: 1 },
      { account: A, types: ['FEE'] as const },
      { account: A, symbol: 'BTC-USD' },
      { account: A, startTime: 3_000 },
      { account: A, endTime: 2_000, offset: 1, limit: 1 },
    ]) {
      const got = await balances(q);
      expect(got.length, JSON.stringify(q)).toBeGreaterThan(0);
      for (const [id, value] of got) expect(value, `${JSON.stringify(q)} ${id}`).toBe(whole.get(id));
    }
  });

  it('an empty page reads nothing', async () => {
    expect(await transactionBalancesAfter(db, A, [])).toEqual(new Map());
  });
});
