/**
 * What the API reads: the key mapping (a join on recorded transactions), list filters and paging,
 * and the idempotent tx / calldata records. Indexed from real transactions on anvil, on SQLite and
 * (with DATABASE_URL) PostgreSQL.
 */
import { describe, expect, test } from 'vitest';
import type { Address } from 'viem';
import type { Db } from '../../src/storage/database.ts';
import {
  getCashOperation,
  listCashOperationsForApiKey,
  listStockOperationsForApiKey,
} from '../../src/stock/store/stock-operation-store.ts';
import { getOrder, getOrderOwner, listOrdersForApiKey } from '../../src/stock/store/stock-order-store.ts';
import { getCalldataRecord, getTxRecord, recordCalldata, recordTx } from '../../src/stock/store/tx-record-store.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { approveStock, contracts, DAY, deadlineEachTest, depositUsdc, OrderStatus, price, shares, Side, usdc } from '../chain/chain-test-helpers.ts';
import { blockTimeMs, cashierAdmin, newIndexer, routerCall, settle } from './indexer-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let AAPL: Address;
let TSLA: Address;
let deadline: number;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  ({ AAPL, TSLA } = contracts(f).stocks);
});
deadlineEachTest(f, (d) => (deadline = d));

describe.each(testDatabases)('indexer queries for the API ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  test('recordTx and recordCalldata are idempotent and keep the first owner', async () => {
    const tx = `0x${'AB'.repeat(32)}`;
    const first = await recordTx(db, { txHash: tx, apiKey: 'key-a', kind: 'order', recordedAt: 1_000 });
    expect(first).toEqual({ created: true, record: { txHash: tx.toLowerCase(), apiKey: 'key-a', kind: 'order', recordedAt: 1_000 } });
    expect(await recordTx(db, { txHash: tx, apiKey: 'key-a', kind: 'order', recordedAt: 2_000 })).toEqual({ created: false, record: first.record });
    expect(await recordTx(db, { txHash: tx.toLowerCase(), apiKey: 'key-b', kind: 'cash-deposit', recordedAt: 3_000 })).toEqual({ created: false, record: first.record });
    expect(await getTxRecord(db, tx)).toEqual(first.record);
    expect(await getTxRecord(db, `0x${'cd'.repeat(32)}`)).toBeUndefined();

    const hash = `0x${'12'.repeat(32)}`;
    const built = await recordCalldata(db, { calldataHash: hash, apiKey: 'key-a', kind: 'order', createdAt: 5 });
    expect(built.created).toBe(true);
    expect((await recordCalldata(db, { calldataHash: hash, apiKey: 'key-b', kind: 'order', createdAt: 6 })).record.apiKey).toBe('key-a');
    expect(await getCalldataRecord(db, hash.toUpperCase().replace('0X', '0x'))).toEqual({ calldataHash: hash, apiKey: 'key-a', kind: 'order', createdAt: 5 });
  });

  test('an unrecorded transaction is indexed anyway and belongs to a key once recorded', async () => {
    const indexer = newIndexer(f, db);
    const deposit = await depositUsdc(f, alice, usdc('5000'));
    const placed = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    await indexer.syncOnce();
    const orderId = placed.result.toString();
    expect(await getOrder(db, orderId)).toBeDefined();
    expect(await getOrderOwner(db, orderId)).toBeUndefined();
    const page = { offset: 0, limit: 10 };
    expect(await listOrdersForApiKey(db, { apiKey: 'key-a', ...page })).toEqual({ total: 0, rows: [] });
    expect(await listCashOperationsForApiKey(db, { apiKey: 'key-a', kind: 'deposit', ...page })).toEqual({ total: 0, rows: [] });

    await recordTx(db, { txHash: placed.receipt.transactionHash, apiKey: 'key-a', kind: 'order', recordedAt: Date.now() });
    await recordTx(db, { txHash: deposit.transactionHash, apiKey: 'key-a', kind: 'cash-deposit', recordedAt: Date.now() });
    expect(await getOrderOwner(db, orderId)).toBe('key-a');
    const orders = await listOrdersForApiKey(db, { apiKey: 'key-a', ...page });
    expect(orders.total).toBe(1);
    expect(orders.rows[0]).toEqual(await getOrder(db, orderId));
    const deposits = await listCashOperationsForApiKey(db, { apiKey: 'key-a', kind: 'deposit', ...page });
    expect(deposits.rows.map((r) => r.txHash)).toEqual([deposit.transactionHash]);
    expect(await getCashOperation(db, deposits.rows[0].operationId)).toEqual(deposits.rows[0]);
    expect(await listCashOperationsForApiKey(db, { apiKey: 'key-a', kind: 'withdrawal', ...page })).toEqual({ total: 0, rows: [] });
    expect(await listOrdersForApiKey(db, { apiKey: 'key-b', ...page })).toEqual({ total: 0, rows: [] });
  });

  test('order lists: newest first, open and history, status, stock, time range and paging', async () => {
    const indexer = newIndexer(f, db);
    await depositUsdc(f, alice, usdc('50000'));
    const ids: bigint[] = [];
    const times: number[] = [];
    for (const [stock, qty] of [
      [AAPL, '1'],
      [TSLA, '2'],
      [AAPL, '3'],
      [AAPL, '4'],
    ] as const) {
      // Blocks a few seconds apart, so that the time filter has something to separate.
      await f.testClient.increaseTime({ seconds: 5 });
      const placed = await routerCall<bigint>(f, alice, 'placeLimitOrder', [stock, Side.Buy, shares(qty), price('100'), DAY, deadline]);
      ids.push(placed.result);
      times.push(await blockTimeMs(f, placed.receipt.blockNumber));
      await recordTx(db, { txHash: placed.receipt.transactionHash, apiKey: 'key-a', kind: 'order', recordedAt: 0 });
    }
    // Another key's order, which key-a never sees.
    await depositUsdc(f, bob, usdc('1000'));
    const other = await routerCall<bigint>(f, bob, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    await recordTx(db, { txHash: other.receipt.transactionHash, apiKey: 'key-b', kind: 'order', recordedAt: 0 });
    await routerCall(f, alice, 'cancelLimitOrder', [ids[1]]);
    await settle(f, [{ orderId: ids[2], quantity: shares('3'), price: price('99') }], [{ orderId: ids[2], status: OrderStatus.Filled }, { orderId: ids[3], status: OrderStatus.Expired }]);
    await indexer.syncOnce();

    const q = { apiKey: 'key-a', offset: 0, limit: 10 };
    const ordered = (r: { rows: Array<{ orderId: string }> }) => r.rows.map((o) => o.orderId);
    const all = await listOrdersForApiKey(db, q);
    expect(all.total).toBe(4);
    expect(ordered(all)).toEqual(['4', '3', '2', '1']);
    expect(ordered(await listOrdersForApiKey(db, { ...q, state: 'open' }))).toEqual(['2', '1']);
    expect((await listOrdersForApiKey(db, { ...q, state: 'open' })).rows.map((o) => o.status)).toEqual(['Canceling', 'Open']);
    expect(ordered(await listOrdersForApiKey(db, { ...q, state: 'history' }))).toEqual(['4', '3']);
    expect(ordered(await listOrdersForApiKey(db, { ...q, status: 'Expired' }))).toEqual(['4']);
    expect(ordered(await listOrdersForApiKey(db, { ...q, stockAddress: TSLA.toUpperCase().replace('0X', '0x') }))).toEqual(['2']);
    expect(new Set(times).size).toBe(4);
    expect(ordered(await listOrdersForApiKey(db, { ...q, startTime: times[1], endTime: times[2] }))).toEqual(['3', '2']);
    expect(ordered(await listOrdersForApiKey(db, { ...q, startTime: times[3] }))).toEqual(['4']);
    const page2 = await listOrdersForApiKey(db, { ...q, offset: 1, limit: 2 });
    expect(page2.total).toBe(4);
    expect(ordered(page2)).toEqual(['3', '2']);
    expect(await getOrderOwner(db, other.result.toString())).toBe('key-b');
  });

  test('operation lists filter by kind, status and stock', async () => {
    const indexer = newIndexer(f, db);
    const c = contracts(f);
    const d1 = await depositUsdc(f, alice, usdc('100'));
    await cashierAdmin(f, 'setCreditBuffer', [0n]);
    const d2 = await depositUsdc(f, alice, usdc('200'));
    const w = await routerCall(f, alice, 'withdraw', [c.cashToken, usdc('50')]);
    await approveStock(f, alice, AAPL, shares('5'));
    const s1 = await routerCall(f, alice, 'depositStock', [AAPL, shares('5')]);
    await approveStock(f, alice, TSLA, shares('5'));
    const s2 = await routerCall(f, alice, 'depositStock', [TSLA, shares('5')]);
    const s3 = await routerCall(f, alice, 'withdrawStock', [TSLA, shares('1')]);
    for (const [tx, kind] of [
      [d1.transactionHash, 'cash-deposit'],
      [d2.transactionHash, 'cash-deposit'],
      [w.receipt.transactionHash, 'cash-withdrawal'],
      [s1.receipt.transactionHash, 'stock-deposit'],
      [s2.receipt.transactionHash, 'stock-deposit'],
      [s3.receipt.transactionHash, 'stock-withdrawal'],
    ] as const) {
      await recordTx(db, { txHash: tx, apiKey: 'key-a', kind, recordedAt: 0 });
    }
    await indexer.syncOnce();
    const q = { apiKey: 'key-a', offset: 0, limit: 10 };
    const deposits = await listCashOperationsForApiKey(db, { ...q, kind: 'deposit' });
    expect(deposits.rows.map((r) => [r.txHash, r.status])).toEqual([
      [d2.transactionHash, 'processing'],
      [d1.transactionHash, 'completed'],
    ]);
    expect((await listCashOperationsForApiKey(db, { ...q, kind: 'deposit', status: 'processing' })).rows.map((r) => r.txHash)).toEqual([d2.transactionHash]);
    expect((await listCashOperationsForApiKey(db, { ...q, kind: 'withdrawal' })).total).toBe(1);
    const stockDeposits = await listStockOperationsForApiKey(db, { ...q, kind: 'deposit' });
    expect(stockDeposits.rows.map((r) => r.txHash)).toEqual([s2.receipt.transactionHash, s1.receipt.transactionHash]);
    expect((await listStockOperationsForApiKey(db, { ...q, kind: 'deposit', stockAddress: AAPL })).rows.map((r) => r.txHash)).toEqual([s1.receipt.transactionHash]);
    expect((await listStockOperationsForApiKey(db, { ...q, kind: 'withdrawal', status: 'completed' })).rows.map((r) => r.amount)).toEqual([shares('1').toString()]);
    expect((await listStockOperationsForApiKey(db, { ...q, kind: 'deposit', offset: 1, limit: 1 })).rows.map((r) => r.txHash)).toEqual([s1.receipt.transactionHash]);
  });
});
