/**
 * The projection's worker thread on SQLite, a second writer of the order thread's file
 * (storage/sqlite-write-gate.ts, projection-worker-client.ts):
 * - the order thread's writes never wait inside SQLite for the worker's (they would sleep the loop
 *   in SQLite's busy handler): shown with the order thread's busy timeout at 0, where any write of
 *   it that met the worker's lock would fail with SQLITE_BUSY at once;
 * - a write is committed in transactions of at most CHUNK events, and a write
 *   sent again after part of it was committed writes each event once (a candle's merge would
 *   count it twice).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent } from '../../src/perp/engine/engine-types.ts';
import { FEE_ACCOUNT, PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import { workerProjectionWriter } from '../../src/perp/projection/projection-worker-client.ts';
import { PROJECTION_CURSOR_KEY, writeProjection } from '../../src/perp/projection/projection-write.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { withTransaction } from '../../src/storage/transaction.ts';

const USD = 1_000_000n;
const AAPL = 'AAPL-USD';
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const H = 1_717_999_200_000;
const CHUNK = 250;

/** `pairs` crossing orders on AAPL-USD, one a second: each a resting sell of A and a buy of B that takes it. */
function tradeEvents(pairs: number): EngineEvent[] {
  const engine = new PerpEngine();
  const events: EngineEvent[] = [];
  const apply = (c: EngineCommand) => {
    const r = engine.apply(c);
    if (!r.ok) throw new Error(`${c.id}: ${r.message}`);
    events.push(...r.events);
  };
  apply({ kind: 'deposit', id: 'dep-a', ts: H, account: A, amount: 10_000_000n * USD });
  apply({ kind: 'deposit', id: 'dep-b', ts: H, account: B, amount: 10_000_000n * USD });
  apply({ kind: 'setMarkPrice', id: 'mark', ts: H, symbol: AAPL, markPriceTicks: 20_000, indexPriceTicks: 20_000 });
  for (let i = 0; i < pairs; i++) {
    const ts = H + 1_000 * (i + 1);
    const priceTicks = 20_000 + (i % 7);
    apply({ kind: 'placeOrder', id: `s${i}`, ts, account: A, symbol: AAPL, side: 'SELL', type: 'LIMIT', priceTicks, sizeLots: 1, timeInForce: 'GTC' } as EngineCommand);
    apply({ kind: 'placeOrder', id: `b${i}`, ts, account: B, symbol: AAPL, side: 'BUY', type: 'LIMIT', priceTicks, sizeLots: 1, timeInForce: 'GTC' } as EngineCommand);
  }
  return events;
}

const tradeRows = async (db: Db) => Number((await db.kysely.selectFrom('perp_trades').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const candles = (db: Db) => db.kysely.selectFrom('perp_candles').selectAll().orderBy('kind').orderBy('interval').orderBy('open_time').execute();

describe('the projection worker beside the order thread on one SQLite file', () => {
  let dir: string;
  let loop: Db;
  const events = tradeEvents(500);
  const trades = events.filter((e) => e.type === 'trade').length;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tokex-write-gate-'));
  });
  afterAll(async () => {
    await loop?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the order thread writes throughout a large projection write and never meets its lock inside SQLite', async () => {
    expect(events.length).toBeGreaterThan(8 * CHUNK);
    const path = join(dir, 'gate.sqlite');
    // Created and migrated by a connection of its own, as the process opens it before the stack runs.
    await (await openDatabase({ sqlitePath: path })).close();
    // Busy timeout 0: a write of this connection that met the worker's transaction would fail
    // with SQLITE_BUSY at once instead of sleeping this thread.
    loop = await openDatabase({ sqlitePath: path, connectTimeoutMs: 0 });
    const w = workerProjectionWriter({ database: { sqlitePath: path }, feeAccount: FEE_ACCOUNT, chunkEvents: CHUNK });
    try {
      let done = false;
      const writing = w.write(events).finally(() => (done = true));
      const failures: unknown[] = [];
      let writes = 0;
      while (!done) {
        // A transaction (the journal's commits) and a statement on its own, as the loop's roles write.
        await withTransaction(loop, (tx) => setMeta(tx, 'test.loop.tx', String(writes))).then(() => writes++, (err: unknown) => failures.push(err));
        await setMeta(loop, 'test.loop.single', String(writes)).then(() => writes++, (err: unknown) => failures.push(err));
        // A turn of the loop, as between requests: the worker's answer arrives as a message.
        await new Promise((r) => setImmediate(r));
      }
      expect(await writing).toBe(events.at(-1)!.seq);
      expect(failures).toEqual([]);
      expect(writes).toBeGreaterThan(0);
      expect(await getMeta(loop, PROJECTION_CURSOR_KEY)).toBe(String(events.at(-1)!.seq));
      expect(await tradeRows(loop)).toBe(2 * trades);
    } finally {
      await w.close();
    }
  });

  it('a write sent again after part of it was committed writes each event once', async () => {
    const path = join(dir, 'resend.sqlite');
    const db = await openDatabase({ sqlitePath: path });
    const once = await openDatabase({ sqlitePath: join(dir, 'once.sqlite') });
    const w = workerProjectionWriter({ database: { sqlitePath: path }, feeAccount: FEE_ACCOUNT, chunkEvents: CHUNK });
    try {
      const part = events.slice(0, 2 * CHUNK + 17);
      expect(await w.write(part)).toBe(part.at(-1)!.seq);
      // What the projector sends when a write failed after its first transactions: all of it again, and more.
      expect(await w.write(events)).toBe(events.at(-1)!.seq);
      expect(await writeProjection(once, events, FEE_ACCOUNT)).toBe(events.at(-1)!.seq);
      expect(await tradeRows(db)).toBe(2 * trades);
      const written = await candles(db);
      expect(written.find((c) => c.kind === 'trade' && c.interval === '1d')?.trades).toBe(trades);
      expect(written).toEqual(await candles(once));
    } finally {
      await w.close();
      await db.close();
      await once.close();
    }
  });
});
