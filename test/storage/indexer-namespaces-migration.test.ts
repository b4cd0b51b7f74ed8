import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { countEvents, deleteBlocksAbove, insertBlocks, insertEvents, listBlocksDescending, listEventsAbove } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { getCashOperation, getStockOperation } from '../../src/stock/store/stock-operation-store.ts';
import { getOrder, getOrderOwner, listOrderFills } from '../../src/stock/store/stock-order-store.ts';
import { getPosition } from '../../src/stock/store/stock-position-store.ts';
import { getCalldataRecord, getTxRecord } from '../../src/stock/store/tx-record-store.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { eventRecord, hash, legacyEventRow, migrator, USER } from './migration-test-helpers.ts';

const STOCK = '0x00000000000000000000000000000000000000cc';


/** Rows in every table 0005 changes, written as the schema before it stores them. */
async function fillOldTables(k: Kysely<any>): Promise<void> {
  await k.insertInto('indexer_checkpoints').values({ name: 'stock', block_number: 9, block_hash: hash(1009), updated_at: 1 }).execute();
  await k
    .insertInto('chain_blocks')
    .values([5, 7, 9].map((n) => ({ hash: hash(1000 + n), number: n, parent_hash: n === 5 ? null : hash(1000 + n - 2), timestamp: n * 1000 })))
    .execute();
  await k
    .insertInto('chain_events')
    .values(
      [eventRecord(5, 0, 'o:5'), eventRecord(7, 1, null), eventRecord(9, 0, 'o:5')].map(legacyEventRow),
    )
    .execute();
  await k
    .insertInto('orders')
    .values({
      order_id: '5', user_address: USER, stock_address: STOCK, side: 'Buy', order_type: 'Limit', status: 'Open', time_in_force: 'DAY',
      deadline: 1_800_000_000, quantity: '2000000000000000000', notional: '0', price: '100000000000000000000', locked: '200000000000000000000',
      filled_quantity: '1000000000000000000', filled_notional: '100000000000000000000', fees: '0', place_tx_hash: hash(50),
      cancel_tx_hash: null, close_tx_hash: null, created_at: 10_000, updated_at: 18_000, closed_at: null, block_number: 5, place_log_index: 0,
    })
    .execute();
  await k
    .insertInto('order_fills')
    .values({ order_id: '5', tx_hash: hash(90), block_number: 9, log_index: 0, quantity: '1000000000000000000', price: '100000000000000000000', notional: '100000000000000000000', fee: '0', timestamp: 18_000 })
    .execute();
  await k
    .insertInto('positions')
    .values({ user_address: USER, stock_address: STOCK, wallet_balance: '1', exchange_balance: '2', locked_balance: '3', block_number: 9, updated_at: 18_000 })
    .execute();
  await k
    .insertInto('cash_operations')
    .values({
      operation_id: `${hash(70)}-0`, kind: 'deposit', user_address: USER, token_address: STOCK, token_amount: '50000000', musd_amount: '50000000000000000000',
      status: 'processing', instant: 0, queue_id: '1', tx_hash: hash(70), settle_tx_hash: null, block_number: 7, log_index: 1,
      created_at: 14_000, updated_at: 14_000, completed_at: null, steps: '[]',
    })
    .execute();
  await k
    .insertInto('stock_operations')
    .values({ operation_id: `${hash(71)}-1`, kind: 'deposit', user_address: USER, stock_address: STOCK, amount: '7', status: 'completed', tx_hash: hash(71), block_number: 7, log_index: 2, created_at: 14_000, updated_at: 14_000 })
    .execute();
  await k.insertInto('tx_records').values({ tx_hash: hash(50), api_key: 'key-1', kind: 'order', recorded_at: 9_000 }).execute();
  await k.insertInto('calldata_requests').values({ calldata_hash: hash(3), api_key: 'key-1', kind: 'order', created_at: 8_000 }).execute();
}

async function expectStockRows(db: Db): Promise<void> {
  expect(await getOrder(db, '5')).toMatchObject({ orderId: '5', userAddress: USER, filledQuantity: '1000000000000000000', locked: '200000000000000000000' });
  expect(await getOrderOwner(db, '5')).toBe('key-1');
  expect((await listOrderFills(db, '5')).map((f) => [f.txHash, f.notional])).toEqual([[hash(90), '100000000000000000000']]);
  expect(await getPosition(db, USER, STOCK)).toEqual({ userAddress: USER, stockAddress: STOCK, walletBalance: '1', exchangeBalance: '2', lockedBalance: '3', blockNumber: 9, updatedAt: 18_000 });
  expect(await getCashOperation(db, `${hash(70)}-0`)).toMatchObject({ status: 'processing', queueId: '1', musdAmount: '50000000000000000000' });
  expect(await getStockOperation(db, `${hash(71)}-1`)).toMatchObject({ amount: '7', kind: 'deposit' });
  expect(await getTxRecord(db, hash(50))).toEqual({ txHash: hash(50), apiKey: 'key-1', kind: 'order', recordedAt: 9_000 });
  expect(await getCalldataRecord(db, hash(3))).toEqual({ calldataHash: hash(3), apiKey: 'key-1', kind: 'order', createdAt: 8_000 });
}

async function tableNames(db: Db): Promise<string[]> {
  return (await db.kysely.introspection.getTables()).map((t) => t.name).sort();
}

describe.each(testDatabases)('migration 0005: indexer namespaces and stock_ tables ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('moves every row into the stock namespace and the stock_ tables, and back down and up again', async () => {
    const m = await migrator(db);
    expect((await m.migrateTo('0003-events-by-position')).error).toBeUndefined();
    await fillOldTables(db.kysely as Kysely<any>);

    expect((await m.migrateToLatest()).error).toBeUndefined();
    const tables = await tableNames(db);
    for (const gone of ['orders', 'order_fills', 'positions', 'cash_operations', 'tx_records', 'calldata_requests']) expect(tables).not.toContain(gone);
    await expectStockRows(db);
    expect(await listEventsAbove(db, 'stock', 0)).toEqual([eventRecord(5, 0, 'o:5'), eventRecord(7, 1, null), eventRecord(9, 0, 'o:5')]);
    expect((await listBlocksDescending(db, 'stock', 100, 10)).map((b) => b.number)).toEqual([9, 7, 5]);
    expect(await listEventsAbove(db, 'perp', 0)).toEqual([]);

    // The names are free for the perpetual venue, constraints and index names included.
    const k = db.kysely as Kysely<any>;
    await k.schema.createTable('orders').addColumn('id', 'text', (c) => c.primaryKey()).execute();
    await k.schema.createIndex('orders_place_tx_idx').on('orders').column('id').execute();
    await k.schema.createTable('positions').addColumn('id', 'text').addPrimaryKeyConstraint('positions_pk', ['id']).execute();
    await k.schema.dropTable('orders').execute();
    await k.schema.dropTable('positions').execute();

    expect((await m.migrateTo('0003-events-by-position')).error).toBeUndefined();
    const old = (await sql<{ n: number | string }>`select count(*) as n from orders o join tx_records t on t.tx_hash = o.place_tx_hash`.execute(db.kysely)).rows;
    expect(Number(old[0].n)).toBe(1);
    expect(Number((await sql<{ n: number | string }>`select count(*) as n from chain_events`.execute(db.kysely)).rows[0].n)).toBe(3);

    expect((await m.migrateToLatest()).error).toBeUndefined();
    await expectStockRows(db);
    expect(await countEvents(db, 'stock')).toBe(3);
  });

  it('gives two indexers their own blocks and events: same positions, separate rollbacks', async () => {
    const a = [eventRecord(5, 0, 'o:5'), eventRecord(7, 0, null)];
    const b = [eventRecord(5, 0, null), eventRecord(6, 2, 'd:1')];
    await insertEvents(db, 'stock', a);
    await insertEvents(db, 'perp', b);
    await insertBlocks(db, 'stock', [{ hash: hash(1005), number: 5, parentHash: null, timestamp: 1 }, { hash: hash(1007), number: 7, parentHash: null, timestamp: 2 }]);
    await insertBlocks(db, 'perp', [{ hash: hash(1005), number: 5, parentHash: null, timestamp: 1 }, { hash: hash(1006), number: 6, parentHash: null, timestamp: 3 }]);
    // The same event again is a no-op for its own indexer only.
    await insertEvents(db, 'perp', b);
    expect(await listEventsAbove(db, 'stock', 0)).toEqual(a);
    expect(await listEventsAbove(db, 'perp', 0)).toEqual(b);

    await deleteBlocksAbove(db, 'perp', 5);
    expect(await listEventsAbove(db, 'stock', 0)).toEqual(a);
    expect((await listBlocksDescending(db, 'stock', 100, 10)).map((x) => x.number)).toEqual([7, 5]);
    expect(await listEventsAbove(db, 'perp', 0)).toEqual([b[0]]);
    expect((await listBlocksDescending(db, 'perp', 100, 10)).map((x) => x.number)).toEqual([5]);
  });

  it('refuses an indexer name that could not be written into SQL text', async () => {
    await expect(insertEvents(db, "x'; drop table meta; --", [eventRecord(1, 0, null)])).rejects.toThrow(/indexer name/);
    await expect(insertEvents(db, 'Stock', [eventRecord(1, 0, null)])).rejects.toThrow(/indexer name/);
  });
});
