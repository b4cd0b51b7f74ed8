/**
 * The executor on a real anvil with the real contracts: fills at the ask / bid with the exact
 * contract rounding, limit orders that wait for the quote to cross, cancels, rejections, and a
 * batch with an order whose settlement reverts (bisected; the rest settle).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { OrderStatus } from '../../src/stock/executor/fill-policy.ts';
import { loadCloseReasons } from '../../src/stock/store/order-reason-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { ceilDiv, confirm, deadlineIn, depositStock, depositUsdc, mUsdOf, musd, price, shares, stockOf, usdc } from '../chain/chain-test-helpers.ts';
import {
  cancelLimit,
  closeEvents,
  fillEvents,
  makeExecutor,
  openDb,
  placeLimit,
  orderIdOf,
  placeMarket,
  readOrders,
  sendAndConfirm,
} from './executor-test-support.ts';

let alice: ChainUser;
let bob: ChainUser;
let AAPL: Address;
let TSLA: Address;
let treasury: Address;
let db: Db;
let deadline: number;

const E18 = 10n ** 18n;
const MARKET_BPS = 10n;
const LIMIT_BPS = 5n;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  AAPL = f.deployment.contracts.stocks.AAPL;
  TSLA = f.deployment.contracts.stocks.TSLA;
  treasury = f.operator.account.address;
  await depositUsdc(f, alice, usdc('20000'));
  await depositUsdc(f, bob, usdc('20000'));
  await depositStock(f, alice, AAPL, shares('50'));
  await depositStock(f, bob, AAPL, shares('50'));
  await depositStock(f, bob, TSLA, shares('10'));
});
beforeEach(async () => {
  db = await openDb();
  deadline = await deadlineIn(f, 3600);
});
afterEach(async () => {
  await db.close();
});

const feeBalance = () => f.publicClient.readContract({ address: f.deployment.contracts.cashier, abi: cashierAbi, functionName: 'feeBalance' });
const cost = (q: bigint, p: bigint) => ceilDiv(q * p, E18);
const feeOn = (notional: bigint, bps: bigint) => ceilDiv(notional * bps, 10_000n);

describe('market orders', () => {
  it('fills a market buy at the ask for the most its notional pays, with exact balances and fees', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const ask = price('150.01');
    const before = { alice: await mUsdOf(f, alice.address), treasury: await mUsdOf(f, treasury), fees: await feeBalance(), stock: await stockOf(f, AAPL, alice.address) };

    const id = await placeMarket(f, alice, AAPL, 0, musd('1000'), deadline);
    const result = await executor.runOnce();
    expect(result).toMatchObject({ settled: 1, closed: 1, filled: 1, transactions: 1 });

    const [o] = await readOrders(f, [id]);
    expect(o.status).toBe(OrderStatus.Filled);
    const q = o.filledQuantity;
    // The largest quantity whose cost + fee (both rounded up) fits in 1000 mUSD.
    expect(cost(q, ask) + feeOn(cost(q, ask), MARKET_BPS)).toBeLessThanOrEqual(musd('1000'));
    expect(cost(q + 1n, ask) + feeOn(cost(q + 1n, ask), MARKET_BPS)).toBeGreaterThan(musd('1000'));
    expect(o.filledNotional).toBe(cost(q, ask));
    expect(o.fees).toBe(feeOn(cost(q, ask), MARKET_BPS));
    expect(o.locked).toBe(0n);

    const [fill] = (await fillEvents(f)).filter((e) => e.args.orderId === id);
    expect(fill.args.price).toBe(ask);
    expect(fill.args.quantity).toBe(q);

    const after = { alice: await mUsdOf(f, alice.address), treasury: await mUsdOf(f, treasury), fees: await feeBalance(), stock: await stockOf(f, AAPL, alice.address) };
    expect(after.alice.free).toBe(before.alice.free - o.filledNotional - o.fees);
    expect(after.alice.locked).toBe(before.alice.locked);
    expect(after.treasury.free).toBe(before.treasury.free + o.filledNotional);
    expect(after.fees).toBe(before.fees + o.fees);
    expect(after.stock.exchange).toBe(before.stock.exchange + q);
  });

  it('fills a market sell whole at the bid', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const before = { bob: await mUsdOf(f, bob.address), treasury: await mUsdOf(f, treasury), fees: await feeBalance(), stock: await stockOf(f, AAPL, bob.address) };

    const id = await placeMarket(f, bob, AAPL, 1, shares('2'), deadline);
    expect((await stockOf(f, AAPL, bob.address)).locked).toBe(shares('2'));
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1, filled: 1 });

    const [o] = await readOrders(f, [id]);
    const proceeds = musd('299.98'); // 2 × 149.99, rounded down (exact here)
    const fee = feeOn(proceeds, MARKET_BPS);
    expect(o).toMatchObject({ status: OrderStatus.Filled, filledQuantity: shares('2'), filledNotional: proceeds, fees: fee, locked: 0n });
    const after = { bob: await mUsdOf(f, bob.address), treasury: await mUsdOf(f, treasury), fees: await feeBalance(), stock: await stockOf(f, AAPL, bob.address) };
    expect(after.bob.free).toBe(before.bob.free + proceeds - fee);
    expect(after.treasury.free).toBe(before.treasury.free - proceeds);
    expect(after.fees).toBe(before.fees + fee);
    expect(after.stock).toEqual({ ...before.stock, exchange: before.stock.exchange - shares('2'), locked: 0n });
  });

  it('rejects a market buy whose notional cannot buy one unit, releasing it', async () => {
    const { executor, quotes, log } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const before = await mUsdOf(f, alice.address);
    const id = await placeMarket(f, alice, AAPL, 0, 151n, deadline); // one unit costs 151 wei + 1 wei fee
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1, filled: 0 });
    const [o] = await readOrders(f, [id]);
    expect(o.status).toBe(OrderStatus.Rejected);
    expect(o.filledQuantity).toBe(0n);
    expect(await mUsdOf(f, alice.address)).toEqual(before);
    // Why, for the API and the log: the rule and its figures.
    const reason = 'notional too small: 0.000000000000000151 mUSD does not buy the smallest unit of AAPL at the ask 150.01 plus the 10 bps fee';
    expect(await loadCloseReasons(db, [{ orderId: String(id), status: 'Rejected' }])).toEqual(new Map([[String(id), reason]]));
    expect(log.messages('executor: order rejected')).toEqual([expect.objectContaining({ level: 40, orderId: String(id), symbol: 'AAPL', status: 'REJECTED', reason })]);
  });

  it('rejects orders of a stock without a quote once the timeout has passed, saying so', async () => {
    const clock = { now: 0 };
    const { executor, log } = makeExecutor(f, db, { clock, noQuoteTimeoutMs: 10_000 });
    const before = await stockOf(f, AAPL, bob.address);
    const id = await placeMarket(f, bob, AAPL, 1, shares('1'), deadline);
    // anvil's clock runs ahead of the wall clock when it mines many blocks a second: count from the order.
    clock.now = Number((await readOrders(f, [id]))[0].createdAt) * 1000;
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    clock.now += 9_000;
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Open);
    clock.now += 1_000;
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1 });
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Rejected);
    expect(await stockOf(f, AAPL, bob.address)).toEqual(before);
    const reason = 'no fresh quote for AAPL within 10 s (a quote older than 30 s is not used)';
    expect(await loadCloseReasons(db, [{ orderId: String(id), status: 'Rejected' }])).toEqual(new Map([[String(id), reason]]));
    // Only for the status it was written for: the same order read as Filled has none.
    expect(await loadCloseReasons(db, [{ orderId: String(id), status: 'Filled' }])).toEqual(new Map());
    expect(log.messages('executor: order rejected').map((l) => [l.orderId, l.reason])).toEqual([[String(id), reason]]);
  });
});

describe('limit orders', () => {
  it('fill only when the quote crosses, at the ask for a buy and the bid for a sell', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const buy = await placeLimit(f, alice, AAPL, 0, shares('3'), price('149'), deadline);
    const sell = await placeLimit(f, bob, AAPL, 1, shares('4'), price('151'), deadline);
    const aliceBefore = await mUsdOf(f, alice.address);
    const bobBefore = await mUsdOf(f, bob.address);

    expect(await executor.runOnce()).toMatchObject({ settled: 0, open: 2 });
    quotes.set('AAPL', '149.50', '149.60'); // still above the buy limit, below the sell limit
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });

    quotes.set('AAPL', '148.50', '148.75'); // ask 148.75 ≤ 149: the buy fills, the sell does not
    expect(await executor.runOnce()).toMatchObject({ settled: 1, filled: 1, closed: 1 });
    const [b] = await readOrders(f, [buy]);
    const notional = cost(shares('3'), price('148.75'));
    const fee = feeOn(notional, LIMIT_BPS);
    expect(b).toMatchObject({ status: OrderStatus.Filled, filledQuantity: shares('3'), filledNotional: notional, fees: fee, locked: 0n });
    // The lock at the 149 limit is released down to what the fill at 148.75 took.
    const lockAtLimit = cost(shares('3'), price('149')) + feeOn(cost(shares('3'), price('149')), LIMIT_BPS);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: aliceBefore.free + lockAtLimit - notional - fee, locked: aliceBefore.locked - lockAtLimit });

    quotes.set('AAPL', '151.25', '151.40'); // bid 151.25 ≥ 151: the sell fills at the bid
    expect(await executor.runOnce()).toMatchObject({ settled: 1 });
    const [s] = await readOrders(f, [sell]);
    const proceeds = (shares('4') * price('151.25')) / E18;
    expect(s).toMatchObject({ status: OrderStatus.Filled, filledQuantity: shares('4'), filledNotional: proceeds, fees: feeOn(proceeds, LIMIT_BPS) });
    expect((await mUsdOf(f, bob.address)).free).toBe(bobBefore.free + proceeds - feeOn(proceeds, LIMIT_BPS));
  });

  it('charges an open order the fee rate of its placement after setFeeConfig, filling a limit buy whole from its lock', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const buy = await placeLimit(f, alice, AAPL, 0, shares('3'), price('150.01'), deadline);
    const lock = cost(shares('3'), price('150.01')) + feeOn(cost(shares('3'), price('150.01')), LIMIT_BPS);
    // 10 % from now on: at that rate the lock would pay for less than the 3 shares.
    await confirm(f, f.operator.writeContract({ address: f.deployment.contracts.stockRouter, abi: stockRouterAbi, functionName: 'setFeeConfig', args: [{ marketFeeBps: 1000, limitFeeBps: 1000 }] }));
    expect(await executor.runOnce()).toMatchObject({ settled: 1, filled: 1, closed: 1, dropped: 0 });
    const [b] = await readOrders(f, [buy]);
    const notional = cost(shares('3'), price('150.01'));
    expect(b).toMatchObject({ status: OrderStatus.Filled, filledQuantity: shares('3'), filledNotional: notional, fees: feeOn(notional, LIMIT_BPS), locked: 0n });
    expect(notional + feeOn(notional, LIMIT_BPS)).toBe(lock);
  });

  it('closes a canceled limit order as Canceled and releases its lock', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const before = await mUsdOf(f, alice.address);
    const id = await placeLimit(f, alice, AAPL, 0, shares('2'), price('100'), deadline);
    expect((await mUsdOf(f, alice.address)).locked).toBe(before.locked + musd('200') + musd('0.1'));
    await executor.runOnce();
    await cancelLimit(f, alice, id);
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Canceling);
    // Canceled even though the quote now crosses the limit.
    quotes.set('AAPL', '98', '99');
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1, filled: 0 });
    const [o] = await readOrders(f, [id]);
    expect(o).toMatchObject({ status: OrderStatus.Canceled, filledQuantity: 0n, locked: 0n });
    expect(await mUsdOf(f, alice.address)).toEqual(before);
    const [closed] = (await closeEvents(f)).filter((e) => e.args.orderId === id);
    expect(closed.args.released).toBe(musd('200.1'));
  });

  it('fills in steps under a max fill quantity and completes exactly', async () => {
    const { executor, quotes } = makeExecutor(f, db, { maxFill: { AAPL: shares('1.5') } });
    quotes.set('AAPL', '99.99', '100.01');
    const id = await placeLimit(f, alice, AAPL, 0, shares('4'), price('101'), deadline);
    const steps: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      await executor.runOnce();
      steps.push((await readOrders(f, [id]))[0].filledQuantity);
      quotes.set('AAPL', '99.98', `100.0${i + 2}`); // a new ask each step
    }
    expect(steps).toEqual([shares('1.5'), shares('3'), shares('4')]);
    const [o] = await readOrders(f, [id]);
    expect(o.status).toBe(OrderStatus.Filled);
    const fills = (await fillEvents(f)).filter((e) => e.args.orderId === id);
    expect(fills.map((e) => e.args.price)).toEqual([price('100.01'), price('100.02'), price('100.03')]);
    const value = fills.reduce((s, e) => s + e.args.quantity! * e.args.price!, 0n);
    expect(o.filledNotional).toBe(ceilDiv(value, E18));
    expect(o.fees).toBe(feeOn(o.filledNotional, LIMIT_BPS));
    expect(o.locked).toBe(0n);
  });
});

describe('batches', () => {
  it('bisects a batch with an order whose settlement reverts; the others settle in the same tick', async () => {
    const clock = { now: Date.now() };
    const { executor, quotes, log } = makeExecutor(f, db, { clock, poisonRetryMs: 60_000 });
    quotes.set('AAPL', '149.99', '150.01');
    // A bid no treasury can pay: this sell's settlement reverts (TreasuryInsufficient).
    quotes.set('TSLA', '1000000000000', '1000000000001');
    const good: bigint[] = [];
    for (let i = 0; i < 6; i++) good.push(await placeMarket(f, i % 2 ? bob : alice, AAPL, i % 2 ? 1 : 0, i % 2 ? shares('1') : musd('500'), deadline));
    const bad = await placeMarket(f, bob, TSLA, 1, shares('1'), deadline);
    for (let i = 0; i < 5; i++) good.push(await placeMarket(f, i % 2 ? bob : alice, AAPL, i % 2 ? 1 : 0, i % 2 ? shares('1') : musd('300'), deadline));

    // Nothing learned yet: this batch is simulated first, and the simulation is bisected.
    const first = await executor.runOnce();
    expect(first).toMatchObject({ settled: 11, dropped: 1, transactions: 1 });
    expect(log.messages('executor: settlement batch reverted on chain; re-checking it')).toHaveLength(0);
    const orders = await readOrders(f, [...good, bad]);
    expect(orders.slice(0, -1).every((o) => o.status === OrderStatus.Filled)).toBe(true);
    expect(orders.at(-1)!.status).toBe(OrderStatus.Open);
    const warnings = log.messages('executor: settlement of this order reverts; dropped until its state changes');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ orderId: bad.toString(), error: 'TreasuryInsufficient' });

    // Dropped: not tried again while nothing changed.
    expect(await executor.runOnce()).toMatchObject({ settled: 0, dropped: 0 });
    expect(log.messages('executor: settlement of this order reverts; dropped until its state changes')).toHaveLength(1);

    // Batches of this size now go out unsimulated (the gas per order is learned): one with a bad
    // order reverts on chain, is re-checked by simulation and bisected.
    const more: bigint[] = [];
    for (let i = 0; i < 8; i++) more.push(await placeMarket(f, alice, AAPL, 0, musd('50'), deadline));
    const bad2 = await placeMarket(f, bob, TSLA, 1, shares('2'), deadline);
    expect(await executor.runOnce()).toMatchObject({ settled: 8, dropped: 1, transactions: 1 });
    expect(log.messages('executor: settlement batch reverted on chain; re-checking it')).toHaveLength(1);
    expect((await readOrders(f, more)).every((o) => o.status === OrderStatus.Filled)).toBe(true);
    expect((await readOrders(f, [bad2]))[0].status).toBe(OrderStatus.Open);

    // After the retry period, with a payable quote, they settle.
    quotes.set('TSLA', '250', '250.10');
    clock.now += 60_000;
    expect(await executor.runOnce()).toMatchObject({ settled: 2, closed: 2 });
    expect((await readOrders(f, [bad, bad2])).map((o) => o.status)).toEqual([OrderStatus.Filled, OrderStatus.Filled]);
    // Every order was filled exactly once.
    const fills = await fillEvents(f);
    for (const id of [...good, bad, ...more, bad2]) expect(fills.filter((e) => e.args.orderId === id)).toHaveLength(1);
  });

  it('splits many orders into batches of the configured size', async () => {
    const { executor, quotes } = makeExecutor(f, db, { batchSize: 4 });
    quotes.set('AAPL', '149.99', '150.01');
    const ids: bigint[] = [];
    for (let i = 0; i < 10; i++) ids.push(await placeMarket(f, alice, AAPL, 0, musd('10'), deadline));
    expect(await executor.runOnce()).toMatchObject({ settled: 10, closed: 10, transactions: 3 });
    expect((await readOrders(f, ids)).every((o) => o.status === OrderStatus.Filled)).toBe(true);
  });
});

describe('operator', () => {
  it('refuses to run with a wallet that is not an operator, settling nothing', async () => {
    const carol = f.users[2];
    const { executor, quotes } = makeExecutor({ ...f, operator: carol.wallet }, db);
    quotes.set('AAPL', '149.99', '150.01');
    const id = await placeMarket(f, alice, AAPL, 0, musd('100'), deadline);
    await expect(executor.runOnce()).rejects.toThrow('executor: the wallet is not an operator of the StockRouter and the Cashier');
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Open);
  });
});

describe("the guardian's pause", () => {
  it('sends nothing and drops nothing while the venue is paused, then fills the same order once the pause is lifted', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const id = await placeMarket(f, alice, AAPL, 0, musd('500'), deadline);
    const pause = (fn: 'pause' | 'unpause') =>
      confirm(f, f.operator.writeContract({ address: f.deployment.contracts.stockRouter, abi: stockRouterAbi, functionName: fn }));
    await pause('pause');
    const nonce = await f.publicClient.getTransactionCount({ address: f.operator.account.address });
    for (let i = 0; i < 3; i++) expect(await executor.runOnce()).toMatchObject({ settled: 0, closed: 0, transactions: 0, dropped: 0 });
    expect(await f.publicClient.getTransactionCount({ address: f.operator.account.address })).toBe(nonce);
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Open);
    await pause('unpause');
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1, filled: 1, transactions: 1, dropped: 0 });
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Filled);
  });
});

describe("a market order's worst price", () => {
  it('is never crossed: an ask above a buy\'s worst price closes the order REJECTED, its lock back, with the reason', async () => {
    const { executor, quotes } = makeExecutor(f, db);
    quotes.set('AAPL', '150.00', '150.02');
    const before = await mUsdOf(f, alice.address);
    const receipt = await sendAndConfirm(
      f,
      alice.wallet.writeContract({
        address: f.deployment.contracts.stockRouter,
        abi: stockRouterAbi,
        functionName: 'placeMarketOrder',
        args: [AAPL, 0, 0n, musd('500'), price('150.01'), deadline],
        gas: 400_000n,
      }),
    );
    const id = orderIdOf(receipt);
    expect(await executor.runOnce()).toMatchObject({ filled: 0, closed: 1 });
    const [o] = await readOrders(f, [id]);
    expect(o).toMatchObject({ status: OrderStatus.Rejected, filledQuantity: 0n, locked: 0n });
    expect(await mUsdOf(f, alice.address)).toEqual(before);
    expect(await loadCloseReasons(db, [{ orderId: String(id), status: 'Rejected' }])).toEqual(
      new Map([[String(id), "the ask 150.02 of AAPL was above the order's worst price 150.01 when the executor reached it"]]),
    );
  });
});
