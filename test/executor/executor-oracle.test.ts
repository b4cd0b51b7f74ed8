/**
 * The executor against the StockRouter's oracle check, on a real anvil: a fill whose price the
 * feed refuses is never sent (the executor reads the feed each tick and waits); a fill that the
 * feed refuses only once it is mined — the answer moved between the executor's read and the
 * block — reverts, is re-decided from a fresh quote and feed, and is filled exactly once, while
 * the rest of its batch settles in the same tick; a feed past its maximum age holds fills until
 * the next round; an order whose fills the oracle keeps refusing is rejected after the no-quote
 * timeout, its lock released.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWalletClient, parseGwei, type Address, type Hex } from 'viem';
import { priceFeedHubAbi } from '../../src/chain/abi/generated/index.ts';
import { ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { OrderStatus } from '../../src/stock/executor/fill-policy.ts';
import { loadCloseReasons } from '../../src/stock/store/order-reason-store.ts';
import { acquireMetrics, metricsRegistry } from '../../src/observability/metrics-registry.ts';
import type { Db } from '../../src/storage/database.ts';
import { testWallet, useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deadlineIn, depositStock, depositUsdc, mUsdOf, musd, price, setUpStockFeeds, shares, usdc, type StockFeeds } from '../chain/chain-test-helpers.ts';
import { fillEvents, makeExecutor, openDb, placeMarket, readOrders, waitFor } from './executor-test-support.ts';

let alice: ChainUser;
let bob: ChainUser;
let AAPL: Address;
let TSLA: Address;
let oracle: StockFeeds;
let publisher: ReturnType<typeof createWalletClient>;
let db: Db;
let deadline: number;

const MAX_AGE = 180;
/** 8-decimal answer. */
const answer = (v: string) => price(v) / 10n ** 10n;

/** Publishes from the publisher's key; `fees` set a tip that puts it first in a block shared with the executor's. */
async function publish(prices: Record<string, string>, opts: { wait?: boolean; tip?: bigint } = {}): Promise<Hex> {
  const t = (await f.publicClient.getBlock()).timestamp;
  const updates = Object.entries(prices).map(([s, v]) => ({ feed: oracle.feeds[s], answer: answer(v), observedAt: t }));
  const hash = await publisher.writeContract({
    address: oracle.hub,
    abi: priceFeedHubAbi,
    functionName: 'publish',
    args: [updates],
    gas: 400_000n,
    chain: f.chain,
    account: publisher.account!,
    ...(opts.tip ? { maxPriorityFeePerGas: opts.tip, maxFeePerGas: opts.tip * 2n } : {}),
  });
  if (opts.wait ?? true) expect((await f.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
  return hash;
}

const nonceOf = (a: Address) => f.publicClient.getTransactionCount({ address: a });

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  ({ AAPL, TSLA } = f.deployment.contracts.stocks);
  publisher = testWallet(ORACLE_PUBLISHER_ACCOUNT.privateKey, f.chain, f.rpcUrl);
  oracle = await setUpStockFeeds(f, MAX_AGE);
  await depositUsdc(f, alice, usdc('20000'));
  await depositStock(f, bob, TSLA, shares('10'));
});
beforeEach(async () => {
  db = await openDb();
  deadline = await deadlineIn(f, 3600);
});
afterEach(async () => {
  await f.testClient.setAutomine(true);
  await db.close();
});

describe('the executor and the on-chain oracle', () => {
  it('never sends a fill the feed refuses: it waits, and fills once the feed has caught up', async () => {
    await publish({ AAPL: '150' });
    const { executor, quotes, log } = makeExecutor(f, db);
    quotes.set('AAPL', '164.99', '165.01'); // 10% above the feed
    const id = await placeMarket(f, alice, AAPL, 0, musd('1000'), deadline);
    const sent = await nonceOf(f.operator.account.address);
    expect(await executor.runOnce()).toMatchObject({ settled: 0, dropped: 0 });
    expect(await nonceOf(f.operator.account.address)).toBe(sent);
    expect(log.messages('executor: the on-chain oracle refuses fills of this stock; waiting for a fresh quote and feed')).toEqual([
      expect.objectContaining({ symbol: 'AAPL', reason: 'oracle-deviation', orderId: id.toString() }),
    ]);
    await publish({ AAPL: '165' });
    expect(await executor.runOnce()).toMatchObject({ settled: 1, filled: 1, closed: 1 });
    const fills = (await fillEvents(f)).filter((e) => e.args.orderId === id);
    expect(fills.map((e) => e.args.price)).toEqual([price('165.01')]);
    expect(log.messages('executor: the on-chain oracle accepts fills of this stock again')).toHaveLength(1);
  });

  it('a fill refused on chain (the answer moved after the read) reverts, is re-priced from a fresh quote, and is filled exactly once', async () => {
    await publish({ AAPL: '150', TSLA: '250' });
    const { executor, quotes, log } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    quotes.set('TSLA', '249.95', '250.05');
    const buy = await placeMarket(f, alice, AAPL, 0, musd('1000'), deadline);
    const sell = await placeMarket(f, bob, TSLA, 1, shares('2'), deadline);

    // The executor reads the feed at 150 and sends; the publisher's new answer lands first in the same block.
    await f.testClient.setAutomine(false);
    const tick = executor.runOnce();
    const operator = f.operator.account.address.toLowerCase();
    await waitFor(async () => Object.keys((await f.testClient.getTxpoolContent()).pending).some((a) => a.toLowerCase() === operator), 10_000, 10);
    const moved = await publish({ AAPL: '170' }, { wait: false, tip: parseGwei('100') });
    await f.testClient.mine({ blocks: 1 });
    await f.testClient.setAutomine(true);
    expect((await f.publicClient.getTransactionReceipt({ hash: moved })).status).toBe('success');

    // The batch reverted on chain: the AAPL fill was found by simulation and set aside for a new
    // price; the TSLA sell settled in the same tick.
    expect(await tick).toMatchObject({ settled: 1, filled: 1, dropped: 1, repriced: 1 });
    expect(log.messages('executor: the on-chain oracle refused this fill; deciding it again from a fresh quote and feed')).toEqual([
      expect.objectContaining({ orderId: buy.toString(), error: 'OraclePriceDeviation', errorArgs: [buy.toString(), price('150.01').toString(), answer('170').toString()] }),
    ]);
    const [b, s] = await readOrders(f, [buy, sell]);
    expect([b.status, b.filledQuantity]).toEqual([OrderStatus.Open, 0n]);
    expect(s.status).toBe(OrderStatus.Filled);
    const locked = (await mUsdOf(f, alice.address)).locked;
    expect(locked).toBe(musd('1000'));

    // The old quote is refused by the feed now: nothing is sent.
    const sent = await nonceOf(f.operator.account.address);
    expect(await executor.runOnce()).toMatchObject({ settled: 0, dropped: 0 });
    expect(await nonceOf(f.operator.account.address)).toBe(sent);

    // A fresh quote next to the new answer: filled, once, at the fresh price.
    quotes.set('AAPL', '169.99', '170.01');
    expect(await executor.runOnce()).toMatchObject({ settled: 1, filled: 1, closed: 1, dropped: 0 });
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    const fills = (await fillEvents(f)).filter((e) => e.args.orderId === buy);
    expect(fills.map((e) => e.args.price)).toEqual([price('170.01')]);
    const [done] = await readOrders(f, [buy]);
    expect(done.status).toBe(OrderStatus.Filled);
    expect(done.filledNotional + done.fees + done.locked).toBeLessThanOrEqual(musd('1000'));
    // Nothing lost: what was not spent went back to free.
    expect((await mUsdOf(f, alice.address)).locked).toBe(0n);
  });

  it('holds fills while the answer is past its maximum age, and fills after the next round', async () => {
    await publish({ AAPL: '150' });
    const { executor, quotes, log } = makeExecutor(f, db);
    quotes.set('AAPL', '149.99', '150.01');
    const id = await placeMarket(f, alice, AAPL, 0, musd('500'), deadline + 3600);
    await f.testClient.increaseTime({ seconds: MAX_AGE });
    await f.testClient.mine({ blocks: 1 });
    const sent = await nonceOf(f.operator.account.address);
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    expect(await nonceOf(f.operator.account.address)).toBe(sent);
    expect(log.messages('executor: the on-chain oracle refuses fills of this stock; waiting for a fresh quote and feed')[0]).toMatchObject({ reason: 'oracle-stale' });
    await publish({ AAPL: '150' });
    expect(await executor.runOnce()).toMatchObject({ settled: 1, filled: 1 });
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Filled);
  });

  it('rejects an order whose fills the oracle refuses for the no-quote timeout, releasing its lock and saying why', async () => {
    await publish({ AAPL: '150' });
    const clock = { now: 0 };
    const { executor, quotes, log } = makeExecutor(f, db, { clock, noQuoteTimeoutMs: 10_000 });
    // The rejection counted by its rule once the close is mined (docs/operations.md, "Metrics").
    const release = acquireMetrics();
    const rejections = async (reason: string) =>
      (await metricsRegistry.getMetricsAsJSON()).find((m) => m.name === 'tokex_executor_rejections_total')?.values.find((v) => v.labels.reason === reason)?.value;
    // Read as differences: a worker's files share the registry (vitest.config.ts, isolate: false).
    const [deviation, stale] = [await rejections('oracle_deviation'), await rejections('oracle_stale')];
    const before = await mUsdOf(f, alice.address);
    const id = await placeMarket(f, alice, AAPL, 0, musd('800'), deadline);
    clock.now = Number((await readOrders(f, [id]))[0].createdAt) * 1000;
    quotes.set('AAPL', '179.99', '180.01');
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    clock.now += 9_000;
    expect(await executor.runOnce()).toMatchObject({ settled: 0 });
    clock.now += 1_000;
    expect(await executor.runOnce()).toMatchObject({ settled: 1, closed: 1, filled: 0 });
    expect((await readOrders(f, [id]))[0].status).toBe(OrderStatus.Rejected);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: before.free, locked: before.locked });
    const reason = "the price 180.01 for AAPL strayed from its on-chain oracle's 150 by more than 100 bps for 10 s";
    expect(await loadCloseReasons(db, [{ orderId: String(id), status: 'Rejected' }])).toEqual(new Map([[String(id), reason]]));
    expect(log.messages('executor: order rejected').map((l) => l.reason)).toEqual([reason]);
    expect(await rejections('oracle_deviation')).toBe(deviation! + 1);
    expect(await rejections('oracle_stale')).toBe(stale);
    release();
  });
});
