/**
 * The perpetual history in a SQLite file of its own (src/perp/store/perp-history-file.ts): a data
 * directory of an earlier release, its history written by the projector into `tokex.sqlite`, opens
 * with every row and the cursor moved to `perp-history.sqlite`, the main file's tables emptied; a
 * crash between the copy and the emptying copies nothing twice; two processes opening at once copy
 * once; and the projector then continues from the moved cursor without writing any event twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { historyPathOf, openHistoryDatabase, sqlitePathOf } from '../../src/app/storage-wiring.ts';
import type { AppConfig } from '../../src/config/app-config.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { createPerpProjector, PROJECTION_CURSOR_KEY } from '../../src/perp/projection/perp-projector.ts';
import { createInProcessGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { HISTORY_MOVED_KEY, moveHistoryToOwnFile, PERP_HISTORY_TABLES } from '../../src/perp/store/perp-history-file.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';

const USD = 1_000_000n;
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const H = 1_717_999_200_000;
const limit = (id: string, ts: number, account: string, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number): EngineCommand => ({
  kind: 'placeOrder', id, ts, account, symbol: 'AAPL-USD', side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC',
});
const BEFORE: EngineCommand[] = [
  { kind: 'deposit', id: 'dep-a', ts: H, account: A, amount: 100_000n * USD },
  { kind: 'deposit', id: 'dep-b', ts: H, account: B, amount: 100_000n * USD },
  { kind: 'setMarkPrice', id: 'mark-1', ts: H + 1_000, symbol: 'AAPL-USD', markPriceTicks: 20_000, indexPriceTicks: 19_990 },
  limit('a-sell', H + 2_000, A, 'SELL', 20_050, 10),
  limit('b-buy-1', H + 10_000, B, 'BUY', 20_100, 4),
  { kind: 'applyFunding', id: 'funding-1', ts: H + 3_600_000, symbol: 'AAPL-USD', rateE9: 123_457n },
];
const AFTER: EngineCommand[] = [limit('b-buy-2', H + 3_700_000, B, 'BUY', 20_100, 6)];

/** Every row of every history table, in a stable order, as text. */
async function historyRows(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of PERP_HISTORY_TABLES) {
    const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(db.kysely)).rows;
    out[table] = rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).sort();
  }
  return out;
}
const rowCount = (rows: Record<string, unknown[]>) => Object.values(rows).reduce((n, r) => n + r.length, 0);

/** The engine and the projector writing into `projectInto`, as a release before the history file did into the main file. */
async function runVenue(main: Db, projectInto: Db, commands: EngineCommand[]): Promise<number> {
  const sequencer = new EngineSequencer({ db: main });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  const projector = createPerpProjector({ db: projectInto, gateway, feeAccount: sequencer.engine.feeAccountAddress, minWriteIntervalMs: 0 });
  await projector.start();
  try {
    for (const cmd of commands) await gateway.submit(cmd);
    await projector.caughtUp(sequencer.engine.lastSeq);
    return sequencer.engine.lastSeq;
  } finally {
    await projector.stop();
    await sequencer.stop();
  }
}

describe('the perpetual history in a file of its own', () => {
  let dir: string;
  let config: AppConfig;
  let main: Db;
  const opened: Db[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tokex-history-'));
    config = { dataDir: dir, databaseUrl: undefined } as AppConfig;
    main = await openDatabase({ sqlitePath: sqlitePathOf(config) });
    opened.push(main);
  });
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const openHistory = async () => {
    const h = await openHistoryDatabase(config, main);
    opened.push(h);
    return h;
  };

  it("an earlier release's history moves whole: the same rows and cursor in perp-history.sqlite, none left in tokex.sqlite", async () => {
    const lastSeq = await runVenue(main, main, BEFORE);
    const before = await historyRows(main);
    // Orders, trades, both sides' transactions (deposits, fees, funding), a funding rate, candles.
    expect(before.perp_orders).toHaveLength(2);
    expect(before.perp_trades).toHaveLength(2); // a row for each side
    expect(before.perp_transactions).toHaveLength(6); // two deposits, two fees, two funding payments
    expect(before.perp_funding_rates).toHaveLength(1);
    expect(before.perp_candles.length).toBeGreaterThan(0);
    expect(await getMeta(main, PROJECTION_CURSOR_KEY)).toBe(String(lastSeq));

    const history = await openHistory();
    expect(history).not.toBe(main);
    expect(history.location.sqlitePath).toBe(historyPathOf(config));
    expect(await historyRows(history)).toEqual(before);
    expect(await getMeta(history, PROJECTION_CURSOR_KEY)).toBe(String(lastSeq));
    expect(rowCount(await historyRows(main))).toBe(0);
    expect(await getMeta(main, PROJECTION_CURSOR_KEY)).toBeUndefined();

    // The projector goes on from the moved cursor: the new order and its fill, nothing twice (an
    // event applied again would add its fill to order 1's filled size and its volume to the candle).
    await runVenue(main, history, AFTER);
    const after = await historyRows(history);
    expect(after.perp_orders).toHaveLength(3);
    expect(after.perp_trades).toHaveLength(4);
    const sell = await history.kysely.selectFrom('perp_orders').selectAll().where('account', '=', A).executeTakeFirstOrThrow();
    expect([sell.status, sell.filled_lots]).toEqual(['FILLED', 10]);
    expect(rowCount(await historyRows(main))).toBe(0);
  });

  it('a crash between the copy and the emptying: the next open empties tokex.sqlite and copies nothing twice', async () => {
    await runVenue(main, main, BEFORE);
    const before = await historyRows(main);
    const historyPath = historyPathOf(config);
    const first = await openDatabase({ sqlitePath: historyPath });
    opened.push(first);
    expect(await moveHistoryToOwnFile({ main, history: first, mainPath: sqlitePathOf(config), historyPath, stopAfterCopy: true })).toEqual({ rows: rowCount(before), emptied: false });
    expect(await historyRows(main)).toEqual(before);

    const history = await openHistory();
    expect(await historyRows(history)).toEqual(before);
    expect(rowCount(await historyRows(main))).toBe(0);
    // And a later open has nothing left to do.
    expect(await moveHistoryToOwnFile({ main, history, mainPath: sqlitePathOf(config), historyPath })).toEqual({ rows: 0, emptied: false });
  });

  it('two processes opening the data directory at once copy the history once', async () => {
    await runVenue(main, main, BEFORE);
    const before = await historyRows(main);
    const historyPath = historyPathOf(config);
    const other = await openDatabase({ sqlitePath: sqlitePathOf(config) });
    opened.push(other);
    // Opened one after the other (two migrations at once in one thread would wait for each other
    // inside SQLite's busy handler); the two moves then interleave at their reads, and the second
    // finds the marker under the write lock.
    const h1 = await openDatabase({ sqlitePath: historyPath });
    opened.push(h1);
    const h2 = await openDatabase({ sqlitePath: historyPath });
    opened.push(h2);
    // The copies only: two emptying transactions of one thread's two connections would wait for
    // each other inside SQLite, which two processes do not.
    const moves = await Promise.all([
      moveHistoryToOwnFile({ main, history: h1, mainPath: sqlitePathOf(config), historyPath, stopAfterCopy: true }),
      moveHistoryToOwnFile({ main: other, history: h2, mainPath: sqlitePathOf(config), historyPath, stopAfterCopy: true }),
    ]);
    expect(moves.map((m) => m.rows).sort((a, b) => a - b)).toEqual([0, rowCount(before)]);
    expect(await moveHistoryToOwnFile({ main: other, history: h2, mainPath: sqlitePathOf(config), historyPath })).toEqual({ rows: 0, emptied: true });
    expect(await historyRows(h1)).toEqual(before);
    expect(rowCount(await historyRows(main))).toBe(0);
    expect(await getMeta(h1, HISTORY_MOVED_KEY)).toMatch(/^\d+$/);
  });

  it('a new data directory starts with an empty history file and the marker', async () => {
    const history = await openHistory();
    expect(rowCount(await historyRows(history))).toBe(0);
    expect(await getMeta(history, PROJECTION_CURSOR_KEY)).toBeUndefined();
    expect(await getMeta(history, HISTORY_MOVED_KEY)).toMatch(/^\d+$/);
  });

  it('PostgreSQL and an in-memory SQLite database keep the history in the database itself', async () => {
    const memory = await openDatabase({ sqlitePath: ':memory:' });
    opened.push(memory);
    expect(await openHistoryDatabase(config, memory)).toBe(memory);
    expect(await openHistoryDatabase({ ...config, databaseUrl: 'postgres://u@127.0.0.1:1/x' } as AppConfig, main)).toBe(main);
  });
});
