/**
 * Migration 0030: the clientOrderId look-up indexes only the orders that have a clientOrderId. The
 * orders stored before it are all found again by their client id, through the index (each engine's
 * own query plan says so), an order without one takes no entry, and down gives back the full index.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { getOrderByClientId, upsertOrders, type PerpOrderRecord } from '../../src/perp/store/perp-history-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { migrator } from './migration-test-helpers.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const BEFORE = '0029-stock-key-scopes';
const ALICE = '0x00000000000000000000000000000000000000a1';

function order(orderId: number, clientOrderId: string | null): PerpOrderRecord {
  return {
    orderId, account: ALICE, symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', priceTicks: 100 + orderId, sizeLots: 1, requestedSizeLots: 1,
    filledLots: 0, filledNotional: 0n, fee: 0n, status: 'NEW', reason: null, reduceOnly: false, clientOrderId, createdAt: 1_000 + orderId, updatedAt: 1_000 + orderId,
    liquidation: false, triggerPriceTicks: null, triggerBy: null, closePosition: false, triggeredAt: null,
  };
}

/** The plan of the client-id look-up, as text: SQLite's EXPLAIN QUERY PLAN or PostgreSQL's EXPLAIN with sequential scans off. */
async function lookUpPlan(db: Db, clientOrderId: string): Promise<string> {
  if (db.dialect === 'sqlite') {
    const r = await sql<{ detail: string }>`explain query plan select * from perp_orders where account = ${ALICE} and client_order_id = ${clientOrderId}`.execute(db.kysely);
    return r.rows.map((x) => x.detail).join('\n');
  }
  return db.kysely.transaction().execute(async (tx) => {
    // A table of a few rows is read whole by choice; the question is whether the index can serve the query.
    await sql`set local enable_seqscan = off`.execute(tx);
    const r = await sql<{ 'QUERY PLAN': string }>`explain select * from perp_orders where account = ${ALICE} and client_order_id = ${clientOrderId}`.execute(tx);
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
}

/** Entries of perp_orders_client_idx (SQLite: counted through the index itself). */
async function indexEntries(db: Db): Promise<number> {
  const r = await sql<{ n: number }>`select count(*) as n from perp_orders indexed by perp_orders_client_idx where client_order_id is not null`.execute(db.kysely);
  return Number(r.rows[0].n);
}

describe.each(testDatabases)('migration 0030: the clientOrderId index holds only orders with one ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('finds every earlier order by its client id through the index, and down restores the full index', async () => {
    const m = await migrator(db);
    expect((await m.migrateTo(BEFORE)).error).toBeUndefined();
    await upsertOrders(db, [order(1, 'c-1'), order(2, null), order(3, 'c-3'), order(4, null)]);

    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect((await getOrderByClientId(db, ALICE, 'c-1'))?.orderId).toBe(1);
    expect((await getOrderByClientId(db, ALICE, 'c-3'))?.orderId).toBe(3);
    expect(await getOrderByClientId(db, ALICE, 'c-2')).toBeUndefined();
    // Orders written after it, with and without a client id.
    await upsertOrders(db, [order(5, 'c-5'), order(6, null)]);
    expect((await getOrderByClientId(db, ALICE, 'c-5'))?.orderId).toBe(5);
    expect(await lookUpPlan(db, 'c-5')).toContain('perp_orders_client_idx');

    if (db.dialect === 'sqlite') {
      const ddl = await sql<{ sql: string }>`select sql from sqlite_master where name = 'perp_orders_client_idx'`.execute(db.kysely);
      expect(ddl.rows[0].sql).toMatch(/where "client_order_id" is not null$/i);
      expect(await indexEntries(db)).toBe(3);
    } else {
      const def = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'perp_orders_client_idx' and schemaname = current_schema()`.execute(db.kysely);
      expect(def.rows[0].indexdef).toMatch(/WHERE \(client_order_id IS NOT NULL\)$/);
    }

    expect((await m.migrateTo(BEFORE)).error).toBeUndefined();
    expect((await getOrderByClientId(db, ALICE, 'c-5'))?.orderId).toBe(5);
    expect(await lookUpPlan(db, 'c-1')).toContain('perp_orders_client_idx');
    if (db.dialect === 'sqlite') {
      const ddl = await sql<{ sql: string }>`select sql from sqlite_master where name = 'perp_orders_client_idx'`.execute(db.kysely);
      expect(ddl.rows[0].sql).not.toMatch(/where/i);
    }
    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect((await getOrderByClientId(db, ALICE, 'c-3'))?.orderId).toBe(3);
  });
});
