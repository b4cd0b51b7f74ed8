import { sql } from 'kysely';
import { afterEach, expect, test } from 'vitest';
import { benchOrderEvents, PROJECTION_LAYOUTS, PROJECTION_SECONDARY_INDEXES, projectionIndexCostTable } from '../../bench/projection-index-cost-bench.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';

let db: Db | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

test('the bench names exactly the secondary indexes the migrations give the projection\'s tables', async () => {
  db = await openDatabase({ sqlitePath: ':memory:' });
  const rows = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('perp_orders', 'perp_trades', 'perp_transactions') AND sql IS NOT NULL ORDER BY name`.execute(db.kysely);
  expect(rows.rows.map((r) => r.name)).toEqual([...PROJECTION_SECONDARY_INDEXES].sort());
  // Every layout's drops run on the venue's schema, and the last leaves only the tables' keys.
  for (const index of PROJECTION_LAYOUTS.at(-1)!.drop) await sql`DROP INDEX ${sql.ref(index)}`.execute(db.kysely);
  const left = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('perp_orders', 'perp_trades', 'perp_transactions')`.execute(db.kysely);
  expect(Number(left.rows[0].n)).toBe(0);
});

test('the bench\'s orders are the perp-orders mix: every order accepted, buyers and sellers crossing about half the time', () => {
  const { perOrder } = benchOrderEvents(1_400);
  expect(perOrder.every((es) => es[0]?.type === 'orderAccepted')).toBe(true);
  const trades = perOrder.flat().filter((e) => e.type === 'trade').length;
  expect(trades).toBeGreaterThan(400);
  expect(trades).toBeLessThan(1_000);
});

test('the table gives each layout its rounds and its best round over production\'s best', () => {
  expect(projectionIndexCostTable([{ layout: 'production', rounds: [25, 20] }, { layout: 'no secondary index', rounds: [9, 8] }]).split('\n').slice(2)).toEqual([
    '| production | 25.0 / 20.0 | 1.00 |',
    '| no secondary index | 9.0 / 8.0 | 0.40 |',
  ]);
});
