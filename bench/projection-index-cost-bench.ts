/**
 * What the history projection pays for each secondary index its rows land in (issue 40,
 * docs/performance.md "The budget of a batch order"): the projection thread's CPU an order, the
 * second largest thread of a batch order after the order thread.
 *
 * A real engine takes the perp-orders bench's orders (limit orders of one lot from 32 accounts,
 * buyers and sellers alternating around one price, so about half trade); their events are then
 * written as the projection worker writes them (`writeProjection`, reads outside the transaction)
 * in writes of BENCH_PROJ_PER_WRITE orders (default 400: a projector write every 100 ms at 4,000
 * orders a second) on a fresh SQLite history file migrated as the venue's, with the layouts:
 *
 * - `production`: every index of the migrations;
 * - one layout per secondary index of perp_orders and perp_trades, without that index;
 * - `no secondary index`: the tables' keys alone.
 *
 * Each layout's rounds alternate with the others', since this machine drifts between minutes; the
 * figure is the process's CPU (user + system) an order over the writes.
 *
 *   BENCH_ONLY=projection-indexes npm run bench   or   npx tsx bench/projection-index-cost-bench.ts
 *   (BENCH_PROJ_ORDERS, default 40 000; BENCH_PROJ_PER_WRITE; BENCH_PROJ_ROUNDS, default 2)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { PerpEngine } from '../src/perp/engine/perp-engine.ts';
import type { EngineCommand, EngineEvent } from '../src/perp/engine/engine-types.ts';
import type { InstrumentConfig } from '../src/perp/engine/instruments.ts';
import { writeProjection } from '../src/perp/projection/projection-write.ts';
import { openDatabase } from '../src/storage/database.ts';

/** The secondary indexes of the projection's order and fill tables (migrations 0010, 0016, 0022). */
export const PROJECTION_SECONDARY_INDEXES = [
  'perp_orders_account_idx',
  'perp_orders_status_idx',
  'perp_orders_client_idx',
  'perp_trades_account_idx',
  'perp_trades_order_idx',
  'perp_trades_symbol_idx',
  'perp_transactions_account_idx',
] as const;

export interface ProjectionLayout {
  name: string;
  drop: readonly string[];
}

export const PROJECTION_LAYOUTS: readonly ProjectionLayout[] = [
  { name: 'production', drop: [] },
  ...PROJECTION_SECONDARY_INDEXES.filter((i) => !i.startsWith('perp_transactions')).map((i) => ({ name: `no ${i}`, drop: [i] })),
  { name: 'no secondary index', drop: PROJECTION_SECONDARY_INDEXES },
];

export interface ProjectionIndexFigure {
  layout: string;
  /** CPU µs an order, one a round. */
  rounds: number[];
}

const X: InstrumentConfig = {
  symbol: 'X-USD', tickSize: '0.01', lotSize: '1', minSizeLots: 1, maxSizeLots: 1_000_000, maxPriceTicks: 100_000_000,
  maxLeverage: 20, initialMarginRatioPpm: 50_000, maintenanceMarginRatioPpm: 25_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 3_600_000, priceBandPpm: 0,
};

/** The set-up's events (a mark, deposits) and each order's events, from a real engine. */
export function benchOrderEvents(orders: number): { setup: EngineEvent[]; perOrder: EngineEvent[][] } {
  const accounts = Array.from({ length: 32 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, 'b')}`);
  const engine = new PerpEngine({ instruments: [X] });
  let n = 0;
  const run = (c: Record<string, unknown>): EngineEvent[] => {
    const r = engine.apply({ id: `c${++n}`, ts: 1_700_000_000_000 + n, ...c } as EngineCommand) as { events?: EngineEvent[] };
    return r.events ?? [];
  };
  const setup = [...run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 20_000, indexPriceTicks: 20_000 })];
  for (const a of accounts) setup.push(...run({ kind: 'deposit', account: a, amount: 1_000_000_000_000n }));
  const perOrder: EngineEvent[][] = [];
  for (let i = 0; i < orders; i++) {
    const sell = i % 2 === 1;
    perOrder.push(run({
      kind: 'placeOrder', account: accounts[i % accounts.length], symbol: 'X-USD', side: sell ? 'SELL' : 'BUY', type: 'LIMIT',
      priceTicks: 20_000 + (sell ? -1 : 1) * ((i % 7) - 3), sizeLots: 1, timeInForce: 'GTC',
    }));
  }
  return { setup, perOrder };
}

/** One layout's CPU µs an order: a fresh history file, the set-up, then the orders' events in writes of `perWrite` orders. */
async function layoutRound(layout: ProjectionLayout, events: ReturnType<typeof benchOrderEvents>, perWrite: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'tokex-proj-idx-'));
  const db = await openDatabase({ sqlitePath: join(dir, 'perp-history.sqlite') });
  try {
    for (const index of layout.drop) await sql`DROP INDEX ${sql.ref(index)}`.execute(db.kysely);
    const fee = '0x' + 'f'.repeat(40);
    await writeProjection(db, events.setup, fee);
    let cpu = 0;
    for (let i = 0; i < events.perOrder.length; i += perWrite) {
      const batch = events.perOrder.slice(i, i + perWrite).flat();
      const c0 = process.cpuUsage();
      await writeProjection(db, batch, fee, { readOutside: true });
      const c = process.cpuUsage(c0);
      cpu += c.user + c.system;
    }
    return cpu / events.perOrder.length;
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runProjectionIndexCost(opts: { orders?: number; perWrite?: number; rounds?: number } = {}): Promise<ProjectionIndexFigure[]> {
  const orders = opts.orders ?? Number(process.env.BENCH_PROJ_ORDERS ?? 40_000);
  const perWrite = opts.perWrite ?? Number(process.env.BENCH_PROJ_PER_WRITE ?? 400);
  const rounds = opts.rounds ?? Number(process.env.BENCH_PROJ_ROUNDS ?? 2);
  const events = benchOrderEvents(orders);
  const figures = PROJECTION_LAYOUTS.map((l) => ({ layout: l.name, rounds: [] as number[] }));
  for (let r = 0; r < rounds; r++) {
    // Each round in the other order, so no layout always runs first.
    const order = r % 2 === 0 ? PROJECTION_LAYOUTS.map((_, i) => i) : PROJECTION_LAYOUTS.map((_, i) => PROJECTION_LAYOUTS.length - 1 - i);
    for (const i of order) figures[i].rounds.push(await layoutRound(PROJECTION_LAYOUTS[i], events, perWrite));
  }
  return figures;
}

export function projectionIndexCostTable(figures: readonly ProjectionIndexFigure[]): string {
  const best = (f: ProjectionIndexFigure) => Math.min(...f.rounds);
  const production = figures.find((f) => f.layout === 'production');
  const lines = ['| layout | projection CPU an order, each round (µs) | best ÷ production best |', '| --- | ---: | ---: |'];
  for (const f of figures) lines.push(`| ${f.layout} | ${f.rounds.map((v) => v.toFixed(1)).join(' / ')} | ${production ? (best(f) / best(production)).toFixed(2) : '—'} |`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(projectionIndexCostTable(await runProjectionIndexCost()));
}
