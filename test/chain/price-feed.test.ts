/**
 * The venue's on-chain oracle on a real anvil: the PriceFeedHub and its per-asset PriceFeeds
 * (Chainlink's AggregatorV3Interface), set up by `ensurePriceFeeds`; what the hub refuses (a
 * non-publisher, a zero or negative answer, a bad observation time); and the StockRouter's check
 * in `settleOrders`: a fill outside the tolerance, or on an answer older than the maximum age,
 * reverts naming the order, the price and the answer.
 */
import { describe, expect, test } from 'vitest';
import { getAddress, parseEventLogs, type Address } from 'viem';
import { priceFeedAbi, priceFeedHubAbi, priceFeedBytecode, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import type { ChainWalletClient } from '../../src/chain/chain-client.ts';
import { ensurePriceFeeds, type PriceFeedSetup } from '../../src/chain/deploy-contracts.ts';
import { useChainFixture, testWallet, type ChainUser } from '../support/chain-fixture.ts';
import { confirm, contracts, deadlineEachTest, depositStock, depositUsdc, expectRevert, musd, OrderStatus, price, shares, Side, usdc, withAnyWorstPrice } from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let router: Address;
let AAPL: Address;
let TSLA: Address;
let hub: Address;
let feeds: Record<string, Address>;
let publisher: ChainWalletClient;
let deadline: number;

const TOLERANCE_BPS = 100;
const MAX_AGE = 180;
/** 8-decimal feed answers. */
const answer = (v: string) => price(v) / 10n ** 10n;

function setup(over: Partial<PriceFeedSetup> = {}): PriceFeedSetup {
  return {
    symbols: ['AAPL', 'TSLA', 'BTC'],
    stocks: { AAPL, TSLA },
    publishers: [ORACLE_PUBLISHER_ACCOUNT.address],
    toleranceBps: TOLERANCE_BPS,
    maxAgeSeconds: MAX_AGE,
    ...over,
  };
}

async function now(): Promise<bigint> {
  return (await f.publicClient.getBlock()).timestamp;
}

async function publish(updates: Array<{ symbol: string; answer: bigint; observedAt?: bigint }>) {
  const t = await now();
  const args = [updates.map((u) => ({ feed: feeds[u.symbol], answer: u.answer, observedAt: u.observedAt ?? t }))] as const;
  const { request } = await f.publicClient.simulateContract({ account: publisher.account!, address: hub, abi: priceFeedHubAbi, functionName: 'publish', args });
  return confirm(f, publisher.writeContract(request));
}

const simulatePublish = (updates: Array<{ feed: Address; answer: bigint; observedAt: bigint }>, account: Address = ORACLE_PUBLISHER_ACCOUNT.address) =>
  () => f.publicClient.simulateContract({ account, address: hub, abi: priceFeedHubAbi, functionName: 'publish', args: [updates] });

async function place(user: ChainUser, given: readonly unknown[], functionName: 'placeMarketOrder' | 'placeLimitOrder' = 'placeMarketOrder'): Promise<bigint> {
  const args = functionName === 'placeMarketOrder' ? withAnyWorstPrice(given) : given;
  const sim = await f.publicClient.simulateContract({ account: user.wallet.account, address: router, abi: stockRouterAbi, functionName, args } as never);
  await confirm(f, user.wallet.writeContract((sim as { request: unknown }).request as never));
  return (sim as { result: bigint }).result;
}

const settleSim = (fills: Array<{ orderId: bigint; quantity: bigint; price: bigint }>) =>
  () => f.publicClient.simulateContract({ account: f.operator.account, address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, []] });

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  router = contracts(f).stockRouter;
  ({ AAPL, TSLA } = contracts(f).stocks);
  publisher = testWallet(ORACLE_PUBLISHER_ACCOUNT.privateKey, f.chain, f.rpcUrl);
  const result = await ensurePriceFeeds({ publicClient: f.publicClient, walletClient: f.operator, stockRouter: router, setup: setup() });
  expect(result?.hub).toBeDefined();
  hub = result!.hub!;
  feeds = result!.feeds;
  expect(result!.changes).toEqual(['hub', 'feed AAPL', 'feed TSLA', 'feed BTC', `publisher ${ORACLE_PUBLISHER_ACCOUNT.address}`, 'router AAPL', 'router TSLA', 'router requireOracle true']);
  await depositUsdc(f, alice, usdc('20000'));
  await depositStock(f, bob, AAPL, shares('20'));
});
deadlineEachTest(f, (d) => (deadline = d));

describe('set-up', () => {
  test('a Chainlink-shaped feed per symbol, the publisher granted, the router checking each stock', async () => {
    const read = <T>(address: Address, functionName: 'decimals' | 'description' | 'version' | 'hub') =>
      f.publicClient.readContract({ address, abi: priceFeedAbi, functionName }) as Promise<T>;
    expect(await read(feeds.AAPL, 'description')).toBe('AAPL / USD');
    expect(await read(feeds.BTC, 'description')).toBe('BTC / USD');
    expect(await read(feeds.AAPL, 'decimals')).toBe(8);
    expect(await read(feeds.AAPL, 'version')).toBe(1n);
    expect(await read(feeds.AAPL, 'hub')).toBe(hub);
    expect(await f.publicClient.readContract({ address: hub, abi: priceFeedHubAbi, functionName: 'feeds' })).toEqual([feeds.AAPL, feeds.TSLA, feeds.BTC]);
    expect(await f.publicClient.readContract({ address: hub, abi: priceFeedHubAbi, functionName: 'isPublisher', args: [ORACLE_PUBLISHER_ACCOUNT.address] })).toBe(true);
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [AAPL] })).toEqual({
      feed: feeds.AAPL,
      decimals: 8,
      toleranceBps: TOLERANCE_BPS,
      maxAge: MAX_AGE,
    });
    // No round yet: Chainlink's zeros.
    expect(await f.publicClient.readContract({ address: feeds.AAPL, abi: priceFeedAbi, functionName: 'latestRoundData' })).toEqual([0n, 0n, 0n, 0n, 0n]);
  });

  test('ensurePriceFeeds is idempotent, finds the hub from the router without a record, and turns the check off and on', async () => {
    const again = await ensurePriceFeeds({ publicClient: f.publicClient, walletClient: f.operator, stockRouter: router, setup: setup() });
    expect(again).toEqual({ hub, feeds, changes: [], missing: [], pending: [], scheduled: [], code: {} });
    // A new symbol gets a feed on the same hub; nothing else changes.
    const more = await ensurePriceFeeds({ publicClient: f.publicClient, walletClient: f.operator, stockRouter: router, setup: setup({ symbols: ['AAPL', 'TSLA', 'BTC', 'ETH'] }) });
    expect(more?.hub).toBe(hub);
    expect(more?.changes).toEqual(['feed ETH']);
    const off = await ensurePriceFeeds({ publicClient: f.publicClient, walletClient: f.operator, stockRouter: router, create: false, setup: setup({ toleranceBps: 0, publishers: [] }) });
    // Checks off (ORACLE_TOLERANCE_BPS=0) is the explicit opt-out: feedless stocks fill unchecked.
    expect(off?.changes).toEqual(['router AAPL', 'router TSLA', 'router requireOracle false']);
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'requireOracle' })).toBe(false);
    expect((await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [AAPL] })).feed).toBe('0x0000000000000000000000000000000000000000');
    // Without the owner's wallet nothing is sent: the differences are reported.
    const readOnly = await ensurePriceFeeds({ publicClient: f.publicClient, stockRouter: router, hub, setup: setup({ toleranceBps: 50 }) });
    expect(readOnly?.changes).toEqual([]);
    expect(readOnly?.missing).toEqual(['router AAPL', 'router TSLA', 'router requireOracle true']);
    const on = await ensurePriceFeeds({ publicClient: f.publicClient, walletClient: f.operator, stockRouter: router, hub, setup: setup({ toleranceBps: 50 }) });
    expect(on?.changes).toEqual(['router AAPL', 'router TSLA', 'router requireOracle true']);
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'requireOracle' })).toBe(true);
    expect((await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [TSLA] })).toleranceBps).toBe(50);
  });

  test('setPriceFeed is the owner\'s, for a listed stock, with a tolerance of 1..5000 bps and an age of at least a second', async () => {
    const sim = (args: readonly [Address, Address, number, number], account = f.operator.account.address) =>
      () => f.publicClient.simulateContract({ account, address: router, abi: stockRouterAbi, functionName: 'setPriceFeed', args });
    await expectRevert(sim([AAPL, feeds.AAPL, 0, 60]), 'InvalidOracleTolerance', [0]);
    await expectRevert(sim([AAPL, feeds.AAPL, 5001, 60]), 'InvalidOracleTolerance', [5001]);
    await expectRevert(sim([AAPL, feeds.AAPL, 100, 0]), 'InvalidOracleMaxAge', [0]);
    await expectRevert(sim([feeds.AAPL, feeds.AAPL, 100, 60]), 'StockNotListed', [feeds.AAPL]);
    await expectRevert(sim([AAPL, feeds.AAPL, 100, 60], alice.address), 'OwnableUnauthorizedAccount', [alice.address]);
  });

  test('a feed of another hub cannot be listed', async () => {
    const hash = await f.operator.deployContract({ abi: priceFeedAbi, bytecode: priceFeedBytecode, args: [alice.address, 'XYZ / USD'] });
    const foreign = (await confirm(f, hash)).contractAddress!;
    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: hub, abi: priceFeedHubAbi, functionName: 'listFeed', args: [foreign] }),
      'FeedHubMismatch',
      [getAddress(foreign), alice.address],
    );
    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: hub, abi: priceFeedHubAbi, functionName: 'listFeed', args: [feeds.AAPL] }),
      'FeedAlreadyListed',
      [feeds.AAPL],
    );
  });
});

describe('publishing', () => {
  test('one transaction writes a round per asset; the feeds answer them as Chainlink does', async () => {
    const t0 = await now();
    const r1 = await publish([
      { symbol: 'AAPL', answer: answer('229.87'), observedAt: t0 - 1n },
      { symbol: 'BTC', answer: answer('97000.5') },
    ]);
    const block1 = (await f.publicClient.getBlock({ blockNumber: r1.blockNumber })).timestamp;
    // startedAt and updatedAt are both the observation time: an age check measures the price's age.
    expect(await f.publicClient.readContract({ address: feeds.AAPL, abi: priceFeedAbi, functionName: 'latestRoundData' })).toEqual([1n, 22_987_000_000n, t0 - 1n, t0 - 1n, 1n]);
    expect(await f.publicClient.readContract({ address: feeds.BTC, abi: priceFeedAbi, functionName: 'latestRoundData' })).toEqual([1n, 9_700_050_000_000n, t0, t0, 1n]);

    const r2 = await publish([{ symbol: 'AAPL', answer: answer('230.01') }]);
    const block2 = (await f.publicClient.getBlock({ blockNumber: r2.blockNumber })).timestamp;
    expect((await f.publicClient.readContract({ address: feeds.AAPL, abi: priceFeedAbi, functionName: 'latestRoundData' }))[0]).toBe(2n);
    // Each asset counts its own rounds; older rounds stay readable.
    expect((await f.publicClient.readContract({ address: feeds.BTC, abi: priceFeedAbi, functionName: 'latestRoundData' }))[0]).toBe(1n);
    expect(await f.publicClient.readContract({ address: feeds.AAPL, abi: priceFeedAbi, functionName: 'getRoundData', args: [1n] })).toEqual([1n, 22_987_000_000n, t0 - 1n, t0 - 1n, 1n]);
    await expectRevert(() => f.publicClient.readContract({ address: feeds.AAPL, abi: priceFeedAbi, functionName: 'getRoundData', args: [3n] }), 'RoundNotFound', [feeds.AAPL, 3n]);
    const rounds = await f.publicClient.readContract({ address: hub, abi: priceFeedHubAbi, functionName: 'latestRoundsOf', args: [[feeds.AAPL, feeds.TSLA]] });
    expect(block1).toBeGreaterThanOrEqual(t0);
    expect(rounds).toEqual([
      { roundId: 2n, answer: 23_001_000_000n, startedAt: rounds[0].startedAt, updatedAt: rounds[0].startedAt, writtenAt: block2 },
      { roundId: 0n, answer: 0n, startedAt: 0n, updatedAt: 0n, writtenAt: 0n },
    ]);
  });

  test('only a publisher writes; zero or negative answers, bad times and unknown feeds are refused', async () => {
    const t = await now();
    await expectRevert(simulatePublish([{ feed: feeds.AAPL, answer: answer('1'), observedAt: t }], alice.address), 'NotPublisher', [alice.address]);
    await expectRevert(simulatePublish([{ feed: feeds.AAPL, answer: 0n, observedAt: t }]), 'InvalidAnswer', [feeds.AAPL, 0n]);
    await expectRevert(simulatePublish([{ feed: feeds.BTC, answer: -5n, observedAt: t }]), 'InvalidAnswer', [feeds.BTC, -5n]);
    await expectRevert(simulatePublish([{ feed: feeds.AAPL, answer: 1n << 127n, observedAt: t }]), 'InvalidAnswer', [feeds.AAPL, 1n << 127n]);
    await expectRevert(simulatePublish([{ feed: feeds.AAPL, answer: answer('1'), observedAt: 0n }]), 'InvalidObservationTime');
    await expectRevert(simulatePublish([{ feed: alice.address, answer: answer('1'), observedAt: t }]), 'FeedNotListed', [alice.address]);
    // One bad update refuses the whole batch.
    await expectRevert(simulatePublish([{ feed: feeds.TSLA, answer: answer('250'), observedAt: t }, { feed: feeds.AAPL, answer: -1n, observedAt: t }]), 'InvalidAnswer', [feeds.AAPL, -1n]);
    await publish([{ symbol: 'AAPL', answer: answer('229'), observedAt: t }]);
    // On chain too: a non-publisher's transaction reverts and writes nothing.
    const hash = await alice.wallet.writeContract({ address: hub, abi: priceFeedHubAbi, functionName: 'publish', args: [[{ feed: feeds.AAPL, answer: answer('1'), observedAt: t }]], gas: 200_000n });
    expect((await f.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
    expect((await f.publicClient.readContract({ address: feeds.AAPL, abi: priceFeedAbi, functionName: 'latestRoundData' }))[1]).toBe(answer('229'));
    // Revoked: the publisher can no longer write.
    await confirm(f, f.operator.writeContract({ address: hub, abi: priceFeedHubAbi, functionName: 'setPublisher', args: [ORACLE_PUBLISHER_ACCOUNT.address, false] }));
    await expectRevert(simulatePublish([{ feed: feeds.AAPL, answer: answer('1'), observedAt: t }]), 'NotPublisher', [ORACLE_PUBLISHER_ACCOUNT.address]);
  });
});

describe('issue 43: a refused observation time skips its feed, never the batch', () => {
  const roundOf = (symbol: string) => f.publicClient.readContract({ address: feeds[symbol], abi: priceFeedAbi, functionName: 'latestRoundData' });
  const refusals = (logs: Parameters<typeof parseEventLogs>[0]['logs']) =>
    parseEventLogs({ abi: priceFeedHubAbi, logs, eventName: 'UpdateRefused' }).map((l) => l.args);

  async function publishAt(blockTime: bigint, updates: Array<{ symbol: string; answer: bigint; observedAt: bigint }>) {
    await f.testClient.setNextBlockTimestamp({ timestamp: blockTime });
    const hash = await publisher.writeContract({
      address: hub,
      abi: priceFeedHubAbi,
      functionName: 'publish',
      args: [updates.map((u) => ({ feed: feeds[u.symbol], answer: u.answer, observedAt: u.observedAt }))],
      chain: f.chain,
      account: publisher.account!,
      gas: 1_000_000n,
    });
    const receipt = await confirm(f, hash);
    expect((await f.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp).toBe(blockTime);
    return receipt;
  }

  test('an observation more than 60 s past the block is refused for its feed alone, with an event; 60 s is accepted', async () => {
    expect(await f.publicClient.readContract({ address: hub, abi: priceFeedHubAbi, functionName: 'MAX_CLOCK_SKEW' })).toBe(60n);
    const T = (await now()) + 10n;
    const r = await publishAt(T, [
      { symbol: 'AAPL', answer: answer('229'), observedAt: T + 61n },
      { symbol: 'TSLA', answer: answer('250'), observedAt: T + 60n },
      { symbol: 'BTC', answer: answer('97000'), observedAt: T },
    ]);
    expect(refusals(r.logs)).toEqual([{ feed: feeds.AAPL, reason: 0, observedAt: T + 61n, limit: T + 60n }]);
    expect(parseEventLogs({ abi: priceFeedHubAbi, logs: r.logs, eventName: 'PricePublished' }).map((l) => l.args.feed)).toEqual([feeds.TSLA, feeds.BTC]);
    expect(await roundOf('AAPL')).toEqual([0n, 0n, 0n, 0n, 0n]);
    expect(await roundOf('TSLA')).toEqual([1n, answer('250'), T + 60n, T + 60n, 1n]);
    expect(await roundOf('BTC')).toEqual([1n, answer('97000'), T, T, 1n]);
  });

  test('a round stamped ahead holds back only its own feed: the honest batch after it writes every other feed', async () => {
    const T = (await now()) + 10n;
    // A publisher clock 60 s ahead (the most the hub takes) writes AAPL at T + 60.
    await publishAt(T, [{ symbol: 'AAPL', answer: answer('300'), observedAt: T + 60n }]);
    // The honest batch a second later: AAPL's observation is now "out of order", the rest goes through.
    const r = await publishAt(T + 1n, [
      { symbol: 'AAPL', answer: answer('229'), observedAt: T + 1n },
      { symbol: 'TSLA', answer: answer('250'), observedAt: T + 1n },
      { symbol: 'BTC', answer: answer('97000'), observedAt: T + 1n },
    ]);
    expect(refusals(r.logs)).toEqual([{ feed: feeds.AAPL, reason: 1, observedAt: T + 1n, limit: T + 60n }]);
    expect(await roundOf('AAPL')).toEqual([1n, answer('300'), T + 60n, T + 60n, 1n]);
    expect(await roundOf('TSLA')).toEqual([1n, answer('250'), T + 1n, T + 1n, 1n]);
    expect(await roundOf('BTC')).toEqual([1n, answer('97000'), T + 1n, T + 1n, 1n]);
    // Once honest time passes the bad stamp, AAPL updates again.
    const later = await publishAt(T + 61n, [{ symbol: 'AAPL', answer: answer('229.5'), observedAt: T + 61n }]);
    expect(refusals(later.logs)).toEqual([]);
    expect(await roundOf('AAPL')).toEqual([2n, answer('229.5'), T + 61n, T + 61n, 2n]);
  });
});

describe('the StockRouter checks fills against the feed', () => {
  test('a fill within the tolerance settles; one outside it reverts on chain naming the order, price and answer', async () => {
    await publish([{ symbol: 'AAPL', answer: answer('200') }]);
    const buy = await place(alice, [AAPL, Side.Buy, 0n, musd('5000'), deadline]);
    const sell = await place(bob, [AAPL, Side.Sell, shares('2'), 0n, deadline]);

    // 1% of 200 is 2: 202 is the edge and passes, 202.000000000000000001 does not.
    await expectRevert(settleSim([{ orderId: buy, quantity: shares('1'), price: price('202') + 1n }]), 'OraclePriceDeviation', [buy, price('202') + 1n, answer('200')]);
    await expectRevert(settleSim([{ orderId: sell, quantity: shares('1'), price: price('198') - 1n }]), 'OraclePriceDeviation', [sell, price('198') - 1n, answer('200')]);
    // A whole batch reverts for its one bad fill…
    await expectRevert(
      settleSim([
        { orderId: sell, quantity: shares('1'), price: price('199.5') },
        { orderId: buy, quantity: shares('1'), price: price('250') },
      ]),
      'OraclePriceDeviation',
      [buy, price('250'), answer('200')],
    );
    // …on chain too, and changes nothing.
    const hash = await f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId: buy, quantity: shares('1'), price: price('250') }], []], gas: 500_000n });
    expect((await f.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
    const before = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [buy] });
    expect(before.filledQuantity).toBe(0n);

    await confirm(
      f,
      f.operator.writeContract({
        address: router,
        abi: stockRouterAbi,
        functionName: 'settleOrders',
        args: [[{ orderId: buy, quantity: shares('1'), price: price('202') }, { orderId: sell, quantity: shares('2'), price: price('198') }], [{ orderId: sell, status: OrderStatus.Filled }]],
      }),
    );
    const after = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [buy] });
    expect([after.filledQuantity, after.filledNotional]).toEqual([shares('1'), musd('202')]);
  });

  test('an answer observed more than the maximum age ago refuses every fill of the stock until a new round', async () => {
    // Observed 100 s before it reached the chain: its age counts from the observation, not the write.
    const observed = (await now()) - 100n;
    const r = await publish([{ symbol: 'AAPL', answer: answer('200'), observedAt: observed }]);
    const written = (await f.publicClient.getBlock({ blockNumber: r.blockNumber })).timestamp;
    expect(written).toBeGreaterThanOrEqual(observed + 100n);
    const buy = await place(alice, [AAPL, Side.Buy, 0n, musd('1000'), deadline + 3600]);
    await f.testClient.setNextBlockTimestamp({ timestamp: observed + BigInt(MAX_AGE) });
    await f.testClient.mine({ blocks: 1 });
    // Exactly maxAge old: still good.
    await settleSim([{ orderId: buy, quantity: shares('1'), price: price('200') }])();
    // maxAge + 1 after the observation (well under maxAge after the write): stale.
    await f.testClient.setNextBlockTimestamp({ timestamp: observed + BigInt(MAX_AGE) + 1n });
    await f.testClient.mine({ blocks: 1 });
    await expectRevert(settleSim([{ orderId: buy, quantity: shares('1'), price: price('200') }]), 'OraclePriceStale', [buy, observed, BigInt(MAX_AGE)]);
    await publish([{ symbol: 'AAPL', answer: answer('200') }]);
    await settleSim([{ orderId: buy, quantity: shares('1'), price: price('200') }])();
  });

  test('a feed without a round is no answer; a stock without a feed fills only while the router does not require one', async () => {
    const buy = await place(alice, [TSLA, Side.Buy, 0n, musd('1000'), deadline]);
    await expectRevert(settleSim([{ orderId: buy, quantity: shares('1'), price: price('250') }]), 'OracleAnswerInvalid', [buy, 0n]);
    await confirm(f, f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'setPriceFeed', args: [TSLA, '0x0000000000000000000000000000000000000000', 0, 0] }));
    // Required (the default ensurePriceFeeds restored): no feed, no fill.
    await expectRevert(settleSim([{ orderId: buy, quantity: shares('1'), price: price('250') }]), 'PriceFeedRequired', [buy, TSLA]);
    // Only the owner opts out, and says so in an event.
    await expectRevert(
      () => f.publicClient.simulateContract({ account: alice.address, address: router, abi: stockRouterAbi, functionName: 'setRequireOracle', args: [false] }),
      'OwnableUnauthorizedAccount',
      [alice.address],
    );
    const off = await confirm(f, f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'setRequireOracle', args: [false] }));
    expect(parseEventLogs({ abi: stockRouterAbi, logs: off.logs, eventName: 'RequireOracleSet' }).map((l) => l.args)).toEqual([{ required: false }]);
    await settleSim([{ orderId: buy, quantity: shares('1'), price: price('250') }])();
    const reading = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'oracleReading', args: [TSLA] });
    expect(reading[0].feed).toBe('0x0000000000000000000000000000000000000000');
    expect(reading[4]).toBe(await now());
  });
});
