/**
 * The stock streams publish the rows the indexer hands over with each committed batch, not rows
 * read back from the store (issue 28, part 3): on a real anvil with the stack deployed and real
 * SQLite (PostgreSQL too with DATABASE_URL), each order and operation update is the REST body of
 * the row as the batch wrote it (`GET orders/{orderId}` with all its fills and the executor's
 * close reason, the cash and stock operation details), although the stream task's own database
 * holds none of those rows, or they were deleted between the commit and the hand-over. A reorg's
 * rollback still starts a new epoch, seeded from the store.
 */
import type { Address } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { StockIndexChange } from '../../src/stock/indexer/stock-indexer.ts';
import { cashOperationView, stockOperationView } from '../../src/stock/operation-views.ts';
import { orderView } from '../../src/stock/order-view.ts';
import { createStockChainReader, type StockChainReaderHandle } from '../../src/stock/stock-chain-reader.ts';
import { createStockDirectory } from '../../src/stock/stock-directory.ts';
import { loadCloseReasons, recordCloseReasons } from '../../src/stock/store/order-reason-store.ts';
import { getCashOperation, getStockOperation } from '../../src/stock/store/stock-operation-store.ts';
import { getOrder, listOrderFills } from '../../src/stock/store/stock-order-store.ts';
import { stockChannels } from '../../src/stock/streams/stock-stream-channels.ts';
import { createStockStreamTask, type StockStreamTask } from '../../src/stock/streams/stock-stream-task.ts';
import type { Db } from '../../src/storage/database.ts';
import { createMemoryStreamBroker, type BrokerMessage } from '../../src/streams/stream-broker.ts';
import { createStreamPublisher } from '../../src/streams/stream-publisher.ts';
import { approveStock, approveUsdc, contracts, DAY, deadlineIn, depositUsdc, musd, OrderStatus, price, shares, Side, usdc, ANY_BUY_PRICE } from '../chain/chain-test-helpers.ts';
import { cashierAdmin, newIndexer, routerCall, settle } from '../indexer/indexer-test-helpers.ts';
import { revertEachTest, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

let f: ChainFixture;
let alice: ChainUser;
let bob: ChainUser;
let carol: ChainUser;
let AAPL: Address;
let TSLA: Address;
let chain: StockChainReaderHandle;
const stocks = () => createStockDirectory(DEMO_SYMBOLS, f.deployment.contracts.stocks);
const lc = (a: string) => a.toLowerCase();

beforeAll(async () => {
  f = await startChainFixture();
  [alice, bob, carol] = f.users;
  ({ AAPL, TSLA } = contracts(f).stocks);
  chain = createStockChainReader({ publicClient: f.publicClient as never, deployment: f.deployment, refreshMs: 60_000, logger: createLogger({ level: 'silent' }) });
});
afterAll(async () => {
  chain?.stop();
  await f?.stop();
});
revertEachTest(() => f);

describe.each(testDatabases)('stock streams publish what the indexer wrote ($name)', ({ open }) => {
  /** The indexer's database. */
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  let task: StockStreamTask | undefined;
  let taskDb: Db | undefined;
  afterEach(async () => {
    await task?.stop();
    task = undefined;
    await taskDb?.close();
    taskDb = undefined;
  });

  /** A stream task on `on` (its store) with the real publisher and memory broker; every broker message recorded. */
  async function startTask(on: Db) {
    const broker = createMemoryStreamBroker();
    const messages: BrokerMessage[] = [];
    await broker.tail((m) => messages.push(m));
    task = createStockStreamTask({
      db: on,
      publisher: createStreamPublisher({ broker, catalog: stockChannels() }),
      quotes: { getQuote: () => undefined },
      chain,
      stocks: stocks(),
      calendar: createMarketCalendar('always-open'),
      quoteMs: 60_000,
      candleMs: 60_000,
      retryMs: 50,
    });
    await task.start();
    const updates = (channel: string) =>
      messages.flatMap((m) => (m.type === 'updates' ? m.updates.filter((u) => u.key.startsWith(`${channel} `)) : []));
    return { messages, updates };
  }

  /** Waits until `check` passes (the task publishes after its own chain reads); as long as test/support/poll.ts waits, for a busy machine. */
  async function eventually(check: () => void, ms = 20_000): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      try {
        check();
        return;
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  /** The REST bodies of what `change` says the batch wrote, read from the indexer's store right after the commit. */
  async function restBodies(change: StockIndexChange) {
    const cfg = await chain.marketConfig();
    const orders = [];
    for (const u of change.updates.orders) {
      const o = (await getOrder(db, u.order.orderId))!;
      const reasons = await loadCloseReasons(db, [o]);
      orders.push({ key: `orders ${lc(o.userAddress)}`, data: orderView(o, await listOrderFills(db, o.orderId), stocks(), reasons.get(o.orderId) ?? null) });
    }
    const operations = [];
    for (const c of change.updates.cash) {
      const r = (await getCashOperation(db, c.operationId))!;
      const token = cfg.cashierTokenConfig.find((t) => lc(t.tokenAddress) === lc(r.tokenAddress));
      operations.push({ key: `operations ${lc(r.userAddress)}`, data: cashOperationView(r, token) });
    }
    for (const s of change.updates.stock) {
      const r = (await getStockOperation(db, s.operationId))!;
      operations.push({ key: `operations ${lc(r.userAddress)}`, data: stockOperationView(r, stocks().byAddress(r.stockAddress)) });
    }
    return { orders, operations };
  }

  const data = (us: ReadonlyArray<{ key: string; data: unknown }>) => us.map((u) => ({ key: u.key, data: u.data }));

  test('with no row in its own store, the task publishes every order and operation as REST shows it after each batch: all fills, close reasons, settlements', async () => {
    // The task's store is another, empty database: anything it published for a row had to come
    // with the batch (the design before read the rows back and published nothing here).
    taskDb = await open();
    const t = await startTask(taskDb);
    const changes: StockIndexChange[] = [];
    const listen = (c: StockIndexChange) => {
      changes.push(c);
      task!.changed(c);
    };
    const c = contracts(f);
    const deadline = await deadlineIn(f, 3600);

    // Batch 1: an instant deposit, a limit buy, two market buys, an exchange deposit of stock, a queued deposit.
    await depositUsdc(f, alice, usdc('10000'));
    const limit = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('10'), price('200'), DAY, deadline]);
    await depositUsdc(f, carol, usdc('5000'));
    const expires = await routerCall<bigint>(f, carol, 'placeMarketOrder', [TSLA, Side.Buy, 0n, musd('1000'), ANY_BUY_PRICE, deadline]);
    const rejects = await routerCall<bigint>(f, carol, 'placeMarketOrder', [TSLA, Side.Buy, 0n, musd('500'), ANY_BUY_PRICE, deadline]);
    await approveStock(f, bob, TSLA, shares('10'));
    await routerCall(f, bob, 'depositStock', [TSLA, shares('10')]);
    await cashierAdmin(f, 'setCreditBuffer', [musd('500')]);
    await approveUsdc(f, bob, usdc('1000'));
    await routerCall(f, bob, 'deposit', [c.cashToken, usdc('1000')]);
    const first = newIndexer(f, db, { onCommitted: listen });
    await first.syncOnce();
    expect(changes).toHaveLength(1);
    const b1 = await restBodies(changes[0]);
    expect(b1.orders.map((o) => o.data.orderId).sort()).toEqual([limit.result, expires.result, rejects.result].map(String).sort());
    expect(b1.operations.map((o) => o.data.operationStatus).sort()).toEqual(['completed', 'completed', 'completed', 'processing']);
    await eventually(() => {
      expect(data(t.updates('orders'))).toEqual(expect.arrayContaining(b1.orders));
      expect(data(t.updates('operations'))).toEqual(expect.arrayContaining(b1.operations));
    });
    expect(t.updates('orders')).toHaveLength(3);
    expect(t.updates('operations')).toHaveLength(4);

    // Batch 2: a partial fill (the order folded from the indexer's cache), an expiry and a rejection
    // the executor gave reasons for, the queued deposit settled.
    await recordCloseReasons(db, [
      { orderId: String(expires.result), status: 'Expired', reason: 'no fresh quote for TSLA within 60 s', decidedAt: Date.now() },
      { orderId: String(rejects.result), status: 'Rejected', reason: 'not enough liquidity for TSLA', decidedAt: Date.now() },
    ]);
    await settle(
      f,
      [{ orderId: limit.result, quantity: shares('4'), price: price('199.5') }],
      [
        { orderId: expires.result, status: OrderStatus.Expired },
        { orderId: rejects.result, status: OrderStatus.Rejected },
      ],
    );
    await cashierAdmin(f, 'settleDeposit', [1n]);
    await first.syncOnce();
    expect(changes).toHaveLength(2);
    const b2 = await restBodies(changes[1]);
    const reasons = Object.fromEntries(b2.orders.map((o) => [o.data.orderId, ('history' in o.data ? o.data.history?.reason ?? null : null)]));
    expect(reasons).toEqual({
      [String(limit.result)]: null,
      [String(expires.result)]: 'no fresh quote for TSLA within 60 s',
      [String(rejects.result)]: 'not enough liquidity for TSLA',
    });
    expect(b2.operations.map((o) => [o.data.operationStatus, 'steps' in o.data ? o.data.steps : null])).toEqual([['completed', [expect.objectContaining({ step: 'queued' }), expect.objectContaining({ step: 'settled' })]]]);
    await eventually(() => {
      expect(data(t.updates('orders'))).toEqual(expect.arrayContaining(b2.orders));
      expect(data(t.updates('operations'))).toEqual(expect.arrayContaining(b2.operations));
    });

    // Batch 3, by a new indexer (an empty cache: the order's state and its earlier fill come from
    // its stored rows): the last fill and the close. The update carries both fills.
    await settle(f, [{ orderId: limit.result, quantity: shares('6'), price: price('199') }], [{ orderId: limit.result, status: OrderStatus.Filled }]);
    await newIndexer(f, db, { onCommitted: listen }).syncOnce();
    expect(changes).toHaveLength(3);
    const b3 = await restBodies(changes[2]);
    expect(b3.orders).toHaveLength(1);
    expect(b3.orders[0].data).toMatchObject({ state: 'history', history: { status: 'FILLED', filledQuantity: '10' } });
    expect(b3.orders[0].data.fills.map((x) => x.quantity)).toEqual(['4', '6']);
    await eventually(() => expect(data(t.updates('orders'))).toEqual(expect.arrayContaining(b3.orders)));

    // Each order update once per batch that changed it, in seq order per stream; none of the rows
    // is in the task's store.
    const aliceOrders = t.updates('orders').filter((u) => u.key === `orders ${lc(alice.address)}`);
    expect(aliceOrders.map((u) => (u.data as { state: string }).state)).toEqual(['open', 'open', 'history']);
    expect(aliceOrders.map((u) => u.seq - aliceOrders[0].seq)).toEqual([0, 1, 2]);
    expect(await getOrder(taskDb, String(limit.result))).toBeUndefined();
    // Balances are still read from the chain, for every wallet a batch touched.
    await eventually(() => {
      const walletsWithBalances = new Set(t.updates('balances').map((u) => u.key.slice('balances '.length)));
      for (const w of [alice, bob, carol]) expect(walletsWithBalances.has(lc(w.address))).toBe(true);
    });
  });

  test('rows deleted from the store between the commit and the hand-over are still published as written; a rollback starts a new epoch from the store', async () => {
    const t = await startTask(db);
    const changes: StockIndexChange[] = [];
    const indexer = newIndexer(f, db, { onCommitted: (c) => changes.push(c) });
    await depositUsdc(f, alice, usdc('1000'));
    await indexer.syncOnce();
    const placed = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('10'), DAY, await deadlineIn(f, 3600)]);
    await indexer.syncOnce();
    expect(changes).toHaveLength(2);
    const bodies = [await restBodies(changes[0]), await restBodies(changes[1])];

    // Committed, then gone from the store before the task hears of it.
    await db.kysely.deleteFrom('stock_orders').execute();
    await db.kysely.deleteFrom('stock_cash_operations').execute();
    for (const c of changes) task!.changed(c);
    await eventually(() => {
      expect(data(t.updates('operations'))).toEqual(bodies[0].operations);
      expect(data(t.updates('orders'))).toEqual(bodies[1].orders);
    });
    expect(bodies[1].orders[0].data).toMatchObject({ orderId: String(placed.result), state: 'open', openOrder: { lockedAmount: '10.005' } });
    expect(t.updates('balances').map((u) => u.key)).toContain(`balances ${lc(alice.address)}`);

    // The order's block is replaced: the rollback re-derives the projections, and the task starts a
    // new epoch (its seed read from the store), not an update.
    const epochs = () => t.messages.filter((m) => m.type === 'epoch').length;
    expect(epochs()).toBe(1);
    await f.testClient.request({ method: 'anvil_reorg', params: [1, []] } as never);
    await indexer.syncOnce();
    const rollback = changes.find((c) => c.rolledBack);
    expect(rollback).toEqual({ updates: { orders: [], cash: [], stock: [] }, wallets: [], rolledBack: true });
    task!.changed(rollback!);
    await eventually(() => expect(epochs()).toBe(2));
  });
});
