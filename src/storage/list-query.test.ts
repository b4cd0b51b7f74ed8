import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { testDatabases, useFreshDatabase } from '../../test/support/test-databases.ts';
import type { Db } from './database.ts';
import { listPage, newestFirst, withFilters, type PageQuery } from './list-query.ts';

interface ProbeTable {
  id: number;
  account: string;
  kind: string;
  ts: number;
}

type ProbeDb = { list_probe: ProbeTable };

interface Row {
  id: number;
  account: string;
  kind: string;
  ts: number;
}

// Drawn from a fixed seed: accounts, kinds and times independent of each other and of the id, and
// few distinct times, so that most rows tie on ts and only the id orders them.
let seed = 7;
const draw = (n: number): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), Math.floor(seed / 65_536) % n);
const ROWS: Row[] = Array.from({ length: 40 }, (_, i) => ({
  id: i + 1,
  account: ['alice', 'bob', 'bob'][draw(3)],
  kind: ['a', 'b', 'c'][draw(3)],
  ts: 1_000 + draw(6) * 10,
}));
const ALICE = 9;

async function probeTable(db: Db): Promise<Kysely<ProbeDb>> {
  // The same text on both engines; a table of the test's own, so the helper is tried on nothing else.
  await sql`create table list_probe (id integer primary key, account text not null, kind text not null, ts bigint not null)`.execute(db.kysely);
  const k = db.kysely.withTables<ProbeDb>() as unknown as Kysely<ProbeDb>;
  // Inserted in a shuffled order: the answer's order must come from the query, not the table.
  const shuffled = [...ROWS].sort((a, b) => ((a.id * 17) % 41) - ((b.id * 17) % 41));
  await k.insertInto('list_probe').values(shuffled).execute();
  return k;
}

function toRow(r: { id: number | string; account: string; kind: string; ts: number | string }): Row {
  return { id: Number(r.id), account: r.account, kind: r.kind, ts: Number(r.ts) };
}

/** What a list answers, written the obvious way over the rows in memory. */
function model(q: PageQuery & { account?: string; kinds?: string[] }): { total: number; rows: Row[] } {
  const all = ROWS.filter(
    (r) =>
      (q.account === undefined || r.account === q.account) &&
      (q.kinds === undefined || q.kinds.includes(r.kind)) &&
      (q.startTime === undefined || r.ts >= q.startTime) &&
      (q.endTime === undefined || r.ts <= q.endTime),
  ).sort((a, b) => b.ts - a.ts || b.id - a.id);
  return { total: all.length, rows: all.slice(q.offset, q.offset + q.limit) };
}

describe.each(testDatabases)('list query ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  const spec = (q: { account?: string; kinds?: string[] }) =>
    ({ filters: [['account', q.account], ['kind', q.kinds]], time: 'ts', newestFirst: ['ts', 'id'] }) as const;

  it('answers a page newest first, ties broken by the last key, with the total of all matching rows', async () => {
    const k = await probeTable(db);
    const page = await listPage(k.selectFrom('list_probe'), spec({}), { offset: 5, limit: 4 }, toRow);
    expect(page.total).toBe(40);
    expect(page.rows).toEqual(model({ offset: 5, limit: 4 }).rows);
    // The newest time, 1050, is that of ids 4, 22, 23, 26 and 31.
    const first = await listPage(k.selectFrom('list_probe'), spec({}), { offset: 0, limit: 3 }, toRow);
    expect(first.rows.map((r) => [r.ts, r.id])).toEqual([[1050, 31], [1050, 26], [1050, 23]]);
  });

  it('walks all pages without repeating or skipping a row, though most rows tie on time', async () => {
    const k = await probeTable(db);
    const seen: number[] = [];
    for (let offset = 0; offset < 40; offset += 3) {
      const page = await listPage(k.selectFrom('list_probe'), spec({ account: 'bob' }), { offset, limit: 3 }, toRow);
      expect(page.total).toBe(40 - ALICE);
      seen.push(...page.rows.map((r) => r.id));
    }
    expect(seen).toEqual(model({ account: 'bob', offset: 0, limit: 40 }).rows.map((r) => r.id));
    expect(new Set(seen).size).toBe(40 - ALICE);
  });

  it('applies a value as =, a list as in, leaves out undefined ones, and bounds time inclusively', async () => {
    const k = await probeTable(db);
    const q = { account: 'alice', kinds: ['a', 'c'], startTime: 1_010, endTime: 1_040, offset: 0, limit: 100 };
    const page = await listPage(k.selectFrom('list_probe'), spec(q), q, toRow);
    const expected = model(q);
    expect(expected.total).toBeGreaterThan(0);
    expect(page).toEqual(expected);
    expect(page.rows.some((r) => r.ts === 1_010) && page.rows.some((r) => r.ts === 1_040)).toBe(true);
    // Two conditions on one column both hold.
    const both = await listPage(
      k.selectFrom('list_probe'),
      { filters: [['kind', ['a', 'b']], ['kind', 'b']], newestFirst: ['id'] },
      { offset: 0, limit: 100 },
      toRow,
    );
    expect(both.rows.every((r) => r.kind === 'b')).toBe(true);
    expect(both.total).toBe(ROWS.filter((r) => r.kind === 'b').length);
  });

  it('keeps the base query conditions and ignores a time range when the spec names no time column', async () => {
    const k = await probeTable(db);
    const base = k.selectFrom('list_probe').where('account', '=', 'alice');
    const page = await listPage(base, { newestFirst: ['id'] }, { offset: 0, limit: 100, startTime: 99_999 }, toRow);
    expect(page.total).toBe(ALICE);
    expect(page.rows.map((r) => r.id)).toEqual(ROWS.filter((r) => r.account === 'alice').map((r) => r.id).reverse());
  });

  it('counts the rows past the last page and answers none of them', async () => {
    const k = await probeTable(db);
    const page = await listPage(k.selectFrom('list_probe'), spec({ kinds: ['a'] }), { offset: 500, limit: 10 }, toRow);
    expect(page).toEqual({ total: ROWS.filter((r) => r.kind === 'a').length, rows: [] });
  });

  it('works on an aliased table, and newestFirst / withFilters serve lists without a count', async () => {
    const k = await probeTable(db);
    const aliased = await listPage(
      k.selectFrom('list_probe as p'),
      { filters: [['p.kind', 'c']], time: 'p.ts', newestFirst: ['p.ts', 'p.id'] },
      { offset: 1, limit: 2, endTime: 1_030 },
      toRow,
    );
    expect(aliased).toEqual(model({ kinds: ['c'], endTime: 1_030, offset: 1, limit: 2 }));

    const newest = await newestFirst(k.selectFrom('list_probe'), spec({ account: 'bob' }), { startTime: 1_020 }).limit(5).execute();
    expect(newest.map(toRow)).toEqual(model({ account: 'bob', startTime: 1_020, offset: 0, limit: 5 }).rows);

    const counted = await withFilters(k.selectFrom('list_probe'), spec({ kinds: ['b'] }), { endTime: 1_000 })
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(counted.n)).toBe(ROWS.filter((r) => r.kind === 'b' && r.ts <= 1_000).length);
  });

  it('answers what the in-memory model answers for any filters, range and page', async () => {
    const k = await probeTable(db);
    const query = fc.record(
      {
        account: fc.constantFrom('alice', 'bob', 'carol'),
        kinds: fc.subarray(['a', 'b', 'c', 'd'], { minLength: 1 }),
        startTime: fc.integer({ min: 990, max: 1_060 }),
        endTime: fc.integer({ min: 990, max: 1_060 }),
        offset: fc.integer({ min: 0, max: 45 }),
        limit: fc.integer({ min: 0, max: 15 }),
      },
      { requiredKeys: ['offset', 'limit'] },
    );
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const page = await listPage(k.selectFrom('list_probe'), spec(q), q, toRow);
        expect(page).toEqual(model(q));
      }),
      { numRuns: 60 },
    );
  });
});
