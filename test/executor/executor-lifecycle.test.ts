/**
 * Expiry (DAY session close on the NYSE calendar with a fake clock, and the deadline), and a
 * restart that resumes from the persisted low-water mark without settling anything twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { OrderStatus } from '../../src/stock/executor/fill-policy.ts';
import { loadCloseReasons } from '../../src/stock/store/order-reason-store.ts';
import { LOW_WATER_META_KEY } from '../../src/stock/executor/order-tracker.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deadlineIn, depositStock, depositUsdc, mUsdOf, musd, price, shares, stockOf, usdc } from '../chain/chain-test-helpers.ts';
import { fillEvents, fixedQuotes, makeExecutor, openDb, placeLimit, placeMarket, readOrders } from './executor-test-support.ts';

let alice: ChainUser;
let bob: ChainUser;
let AAPL: Address;
let db: Db;

const nyse = createMarketCalendar('nyse');

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  AAPL = f.deployment.contracts.stocks.AAPL;
  await depositUsdc(f, alice, usdc('20000'));
  await depositStock(f, bob, AAPL, shares('50'));
});
beforeEach(async () => {
  db = await openDb();
});
afterEach(async () => {
  await db.close();
});

/** The first NYSE instant (on a 15-minute step) after the chain's time with at least an hour of session left. */
async function nextSessionMoment(): Promise<number> {
  const block = await f.publicClient.getBlock();
  let t = (Math.floor(Number(block.timestamp) / 900) + 1) * 900 * 1000;
  while (!(nyse.isOpen(t) && nyse.sessionClose(t)! - t >= 3_600_000)) t += 900_000;
  return t;
}

describe('expiry', () => {
  it('expires DAY orders at the close of the NYSE session they were placed in', async () => {
    const placedAt = await nextSessionMoment();
    await f.testClient.setNextBlockTimestamp({ timestamp: BigInt(placedAt / 1000) });
    const deadline = placedAt / 1000 + 10 * 86_400;
    const aliceBefore = await mUsdOf(f, alice.address);
    const bobBefore = await stockOf(f, AAPL, bob.address);
    const buy = await placeLimit(f, alice, AAPL, 0, shares('2'), price('100'), deadline);
    const sell = await placeLimit(f, bob, AAPL, 1, shares('3'), price('200'), deadline);
    const [b] = await readOrders(f, [buy]);
    expect(Number(b.createdAt) * 1000).toBe(placedAt);
    const close = nyse.sessionClose(placedAt)!;

    const clock = { now: placedAt + 60_000 };
    const { executor, quotes } = makeExecutor(f, db, { clock, calendar: nyse });
    quotes.set('AAPL', '149.99', '150.01');
    expect(await executor.runOnce()).toMatchObject({ settled: 0, open: 2 });
    clock.now = close - 1;
    expect(await executor.runOnce()).toMatchObject({ settled: 0, open: 2 });
    expect((await mUsdOf(f, alice.address)).locked).toBeGreaterThan(aliceBefore.locked);

    clock.now = close;
    expect(await executor.runOnce()).toMatchObject({ settled: 2, closed: 2, filled: 0 });
    const orders = await readOrders(f, [buy, sell]);
    expect(orders.map((o) => o.status)).toEqual([OrderStatus.Expired, OrderStatus.Expired]);
    const why = `expired at the close of the trading day (${new Date(close).toISOString().replace('.000Z', 'Z')}): a DAY order lives until the session it was placed in ends`;
    const reasons = await loadCloseReasons(db, [buy, sell].map((id) => ({ orderId: String(id), status: 'Expired' })));
    expect(reasons).toEqual(new Map([[String(buy), why], [String(sell), why]]));
    expect(orders.map((o) => o.locked)).toEqual([0n, 0n]);
    expect(await mUsdOf(f, alice.address)).toEqual(aliceBefore);
    expect(await stockOf(f, AAPL, bob.address)).toEqual(bobBefore);
  });

  it('expires an order once its deadline has passed', async () => {
    const deadline = await deadlineIn(f, 120);
    const id = await placeLimit(f, alice, AAPL, 0, shares('1'), price('100'), deadline);
    const clock = { now: deadline * 1000 };
    const { executor, quotes } = makeExecutor(f, db, { clock });
    quotes.set('AAPL', '149.99', '150.01');
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    clock.now = deadline * 1000 + 1;
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1 });
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Expired);
    const reasons = await loadCloseReasons(db, [{ orderId: String(id), status: 'Expired' }]);
    expect(reasons.get(String(id))).toBe(`expired: its deadline ${new Date(deadline * 1000).toISOString().replace('.000Z', 'Z')} passed`);
  });
});

describe('restart', () => {
  it('resumes from the low-water mark and never settles an order twice', async () => {
    const deadline = await deadlineIn(f, 3600);
    const quotes = fixedQuotes();
    quotes.set('AAPL', '149.99', '150.01');
    const maxFill = { AAPL: shares('1') };

    const first = makeExecutor(f, db, { quotes, maxFill });
    // Ids 1.. : an early filled order, then a resting limit buy that keeps the low-water mark down.
    const early = await placeMarket(f, alice, AAPL, 0, musd('100'), deadline);
    await first.executor.runOnce();
    expect(await getMeta(db, LOW_WATER_META_KEY)).toBe((early + 1n).toString());
    const resting = await placeLimit(f, alice, AAPL, 0, shares('0.5'), price('140'), deadline);
    const market = [
      await placeMarket(f, alice, AAPL, 0, musd('100'), deadline),
      await placeMarket(f, bob, AAPL, 1, shares('0.5'), deadline),
    ];
    const partial = await placeMarket(f, bob, AAPL, 1, shares('3'), deadline); // 3 fills of 1 under maxFill

    expect(await first.executor.runOnce()).toMatchObject({ settled: 3, closed: 2 });
    expect((await readOrders(f, [partial]))[0].filledQuantity).toBe(shares('1'));
    expect(await getMeta(db, LOW_WATER_META_KEY)).toBe(resting.toString());
    // The first executor dies here without stop(): nothing of its memory survives.

    const second = makeExecutor(f, db, { quotes, maxFill });
    // Its first scan starts at the mark: the resting order and the three after it, not the early one.
    expect(await second.executor.runOnce()).toMatchObject({ settled: 1, closed: 0, scanned: 4 });
    expect(await second.executor.runOnce()).toMatchObject({ settled: 1, closed: 1 });
    quotes.set('AAPL', '139.00', '139.50');
    expect(await second.executor.runOnce()).toMatchObject({ settled: 1, closed: 1 });
    expect(await second.executor.runOnce()).toMatchObject({ settled: 0 });

    const orders = await readOrders(f, [early, resting, ...market, partial]);
    expect(orders.every((o) => o.status === OrderStatus.Filled)).toBe(true);
    expect(orders.at(-1)!.filledQuantity).toBe(shares('3'));
    const fills = await fillEvents(f);
    const count = (id: bigint) => fills.filter((e) => e.args.orderId === id).length;
    expect([early, resting, ...market].map(count)).toEqual([1, 1, 1, 1]);
    expect(count(partial)).toBe(3);
    const next = partial + 1n;
    expect(await getMeta(db, LOW_WATER_META_KEY)).toBe(next.toString());
  });
});

describe('start and stop', () => {
  it('stop waits for the work in flight and nothing is sent afterwards', async () => {
    const deadline = await deadlineIn(f, 3600);
    const quotes = fixedQuotes();
    quotes.set('AAPL', '149.99', '150.01');
    const running = makeExecutor(f, db, { quotes, tickMs: 5 });
    await running.executor.start();
    const ids: bigint[] = [];
    for (let i = 0; i < 20; i++) ids.push(await placeMarket(f, i % 2 ? bob : alice, AAPL, i % 2 ? 1 : 0, i % 2 ? shares('0.2') : musd('30'), deadline));
    await running.executor.stop();

    const operator = f.operator.account.address;
    expect(await f.publicClient.getTransactionCount({ address: operator, blockTag: 'pending' })).toBe(
      await f.publicClient.getTransactionCount({ address: operator, blockTag: 'latest' }),
    );
    const block = await f.publicClient.getBlockNumber({ cacheTime: 0 });
    const nonce = await f.publicClient.getTransactionCount({ address: operator, blockTag: 'pending' });
    // A fixed wait on purpose: it shows nothing is sent after stop() (nothing to poll for); forty
    // tick periods (tickMs 5), the sender's nonce and the chain's head both checked after it.
    await new Promise((r) => setTimeout(r, 200));
    expect(await f.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(block);
    expect(await f.publicClient.getTransactionCount({ address: operator, blockTag: 'pending' })).toBe(nonce);
    expect(running.log.messages('executor: tick').length).toBeGreaterThan(0);

    // A later executor finishes whatever was left; every order is filled exactly once.
    const later = makeExecutor(f, db, { quotes });
    await later.executor.runOnce();
    expect((await readOrders(f, ids)).every((o) => o.status === OrderStatus.Filled)).toBe(true);
    const fills = await fillEvents(f);
    for (const id of ids) expect(fills.filter((e) => e.args.orderId === id)).toHaveLength(1);
  });
});
