/**
 * The oracle publisher on a real anvil (src/marketdata/oracle-publisher.ts): every feed due in a
 * round goes out in one `publish` transaction — the first answer, a move of the deviation, the
 * heartbeat by the wall clock or the chain's —, a quote that is stale or not a price is never
 * published, a restart picks the rounds up from the chain, and a key the hub does not know is
 * refused. The reader brings the answers back with the chain's time.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeFunctionData, type Address } from 'viem';
import { priceFeedAbi, priceFeedHubAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { ensurePriceFeeds } from '../../src/chain/deploy-contracts.ts';
import { createSenderRegistry } from '../../src/chain/tx-sender.ts';
import { ChainRevertError } from '../../src/errors/app-error.ts';
import { createOracleFeedReader, createOraclePublisher, type OraclePublisher } from '../../src/marketdata/oracle-publisher.ts';
import type { Quote, QuoteReader } from '../../src/marketdata/market-types.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { contracts } from './chain-test-helpers.ts';

let f: ChainFixture;
let hub: Address;
let feeds: Record<string, Address>;
const clock = { now: 0 };
const quotes = new Map<string, Quote>();
const reader: QuoteReader = { getQuote: (s) => quotes.get(s) };
const senders = createSenderRegistry();

function quote(symbol: string, bid: string, ask: string, timestamp = clock.now): void {
  quotes.set(symbol, { symbol, bid, ask, last: bid, timestamp });
}

function publisherFor(privateKey = ORACLE_PUBLISHER_ACCOUNT.privateKey): OraclePublisher {
  return createOraclePublisher({
    publicClient: f.publicClient,
    sender: senders.senderFor({ publicClient: f.publicClient, privateKey }),
    hub,
    feeds: ['AAPL', 'TSLA', 'BTC'].map((symbol) => ({ symbol, feed: feeds[symbol] })),
    quotes: reader,
    heartbeatMs: 60_000,
    deviationBps: 25,
    quoteMaxAgeMs: 30_000,
    now: () => clock.now,
  });
}

/**
 * Moves the publisher's clock and the chain's together: the hub refuses an observation more than
 * MAX_CLOCK_SKEW (60 s) past the block, so a source clock far ahead of the chain's is refused there.
 */
async function advance(ms: number): Promise<void> {
  clock.now += ms;
  await f.testClient.increaseTime({ seconds: Math.floor(ms / 1000) });
  await f.testClient.mine({ blocks: 1 });
}

async function latest(symbol: string) {
  return f.publicClient.readContract({ address: feeds[symbol], abi: priceFeedAbi, functionName: 'latestRoundData' });
}

beforeAll(async () => {
  f = await startChainFixture();
  const stocks = contracts(f).stocks;
  const r = await ensurePriceFeeds({
    publicClient: f.publicClient,
    walletClient: f.operator,
    stockRouter: contracts(f).stockRouter,
    setup: { symbols: ['AAPL', 'TSLA', 'BTC'], stocks: { AAPL: stocks.AAPL, TSLA: stocks.TSLA }, publishers: [ORACLE_PUBLISHER_ACCOUNT.address], toleranceBps: 100, maxAgeSeconds: 180 },
  });
  hub = r!.hub!;
  feeds = r!.feeds;
  clock.now = Number((await f.publicClient.getBlock()).timestamp) * 1000;
});
afterAll(async () => {
  await f?.stop();
});

describe('the publisher', () => {
  let p: OraclePublisher;

  test('publishes every fresh quote in one transaction, then nothing until one is due', async () => {
    p = publisherFor();
    quote('AAPL', '229.86', '229.88');
    quote('TSLA', '251.40', '251.48');
    quote('BTC', '97000.0', '97000.2');
    const first = await p.runOnce();
    expect(first.published.sort()).toEqual(['AAPL', 'BTC', 'TSLA']);
    expect(first.triggers).toEqual({ AAPL: 'first', TSLA: 'first', BTC: 'first' });
    const receipt = await f.publicClient.getTransactionReceipt({ hash: first.txHash! });
    expect(receipt.logs.length).toBe(3);
    const [round, answer, startedAt] = await latest('AAPL');
    expect([round, answer, startedAt]).toEqual([1n, 22_987_000_000n, BigInt(Math.floor(clock.now / 1000))]);
    expect((await latest('BTC'))[1]).toBe(9_700_010_000_000n);

    clock.now += 1_000;
    quote('AAPL', '229.90', '229.92'); // +1.7 bps: below the deviation
    const quiet = await p.runOnce();
    expect(quiet.published).toEqual([]);
    expect(quiet.txHash).toBeUndefined();
  });

  test('a move of the deviation publishes that feed alone; the heartbeat publishes them all', async () => {
    clock.now += 1_000;
    quote('TSLA', '252.03', '252.11'); // mid 252.07 vs 251.44: +25.06 bps
    quote('AAPL', '229.90', '229.92');
    quote('BTC', '97000.0', '97000.2');
    const moved = await p.runOnce();
    expect(moved.triggers).toEqual({ TSLA: 'deviation' });
    expect((await latest('TSLA'))[0]).toBe(2n);
    expect((await latest('AAPL'))[0]).toBe(1n);

    await advance(60_000);
    for (const s of ['AAPL', 'TSLA', 'BTC']) quotes.set(s, { ...quotes.get(s)!, timestamp: clock.now });
    const beat = await p.runOnce();
    expect(beat.triggers).toEqual({ AAPL: 'heartbeat', TSLA: 'heartbeat', BTC: 'heartbeat' });
    expect((await latest('AAPL'))[1]).toBe(22_991_000_000n);
  });

  test('a stale, zero, negative or crossed quote is not published; the feed ages instead', async () => {
    await advance(61_000);
    quote('AAPL', '229.90', '229.92', clock.now - 30_001);
    quote('TSLA', '0', '252.00');
    quote('BTC', '97000.3', '97000.1');
    const round = await p.runOnce();
    expect(round.published).toEqual([]);
    expect(round.skipped).toEqual({ AAPL: 'stale-quote', TSLA: 'invalid-quote', BTC: 'invalid-quote' });
    quotes.delete('BTC');
    expect((await p.runOnce()).skipped.BTC).toBe('no-quote');
  });

  test('a chain whose clock ran ahead gets its heartbeat even when the wall clock says it is early', async () => {
    quote('AAPL', '229.90', '229.92');
    quote('TSLA', '252.03', '252.11');
    quote('BTC', '97000.0', '97000.2');
    await p.runOnce(); // all due by the wall clock: published
    await f.testClient.increaseTime({ seconds: 120 });
    await f.testClient.mine({ blocks: 1 });
    clock.now += 1_000;
    for (const s of ['AAPL', 'TSLA', 'BTC']) quotes.set(s, { ...quotes.get(s)!, timestamp: clock.now });
    const r = await p.runOnce();
    expect(r.triggers).toEqual({ AAPL: 'heartbeat', TSLA: 'heartbeat', BTC: 'heartbeat' });
  });

  test('a restarted publisher reads the rounds from the chain and does not publish them again', async () => {
    const rounds = (await latest('AAPL'))[0];
    const again = publisherFor();
    clock.now += 1_000;
    for (const s of ['AAPL', 'TSLA', 'BTC']) quotes.set(s, { ...quotes.get(s)!, timestamp: clock.now });
    expect((await again.runOnce()).published).toEqual([]);
    expect((await latest('AAPL'))[0]).toBe(rounds);
    expect(again.progress()).toMatchObject({ transactions: 0, failures: 0 });
    expect(p.progress().transactions).toBe(5);
  });

  test('a key the hub does not know is refused before anything is sent', async () => {
    const stranger = publisherFor(ANVIL_ACCOUNTS[4].privateKey);
    clock.now += 1_000;
    for (const s of ['TSLA', 'BTC']) quotes.set(s, { ...quotes.get(s)!, timestamp: clock.now });
    quote('AAPL', '232.20', '232.22'); // +1%: due
    const err = await stranger.runOnce().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ChainRevertError);
    expect((err as ChainRevertError).errorName).toBe('NotPublisher');
    expect(stranger.progress().failures).toBe(1);
    expect(await f.publicClient.getTransactionCount({ address: ANVIL_ACCOUNTS[4].address })).toBe(0);
  });

  test('issue 43: a quote stamped more than 60 s ahead of both clocks is not sent; the others are', async () => {
    await advance(61_000);
    quote('TSLA', '255.00', '255.02'); // +1%: due
    quote('BTC', '97000.0', '97000.2');
    // Due, but from a clock 61 s ahead of the chain (which ran ahead of the wall clock above).
    const chainMs = Number((await f.publicClient.getBlock()).timestamp) * 1000;
    quote('AAPL', '240.00', '240.02', Math.max(chainMs, clock.now) + 61_000);
    const out = await p.runOnce();
    expect(out.skipped.AAPL).toBe('future-observation');
    expect(out.published.sort()).toEqual(['BTC', 'TSLA']);
    expect((await latest('TSLA'))[1]).toBe(25_501_000_000n);
  });

  test('issue 43: an update the hub refuses (a later round already there) is reported refused; the rest of the batch is written', async () => {
    await advance(61_000);
    // Another writer of the same key puts AAPL 30 s ahead; this publisher's state does not know it.
    const sender = senders.senderFor({ publicClient: f.publicClient, privateKey: ORACLE_PUBLISHER_ACCOUNT.privateKey });
    const ahead = BigInt(Math.floor(clock.now / 1000) + 30);
    await sender.send({ to: hub, data: encodeFunctionData({ abi: priceFeedHubAbi, functionName: 'publish', args: [[{ feed: feeds.AAPL, answer: 24_000_000_000n, observedAt: ahead }]] }), gas: 200_000n });
    clock.now += 1_000;
    quote('AAPL', '250.00', '250.02');
    quote('TSLA', '260.00', '260.02');
    quote('BTC', '97000.0', '97000.2');
    const out = await p.runOnce();
    expect(out.skipped.AAPL).toBe('refused');
    expect(out.triggers.AAPL).toBeUndefined();
    expect(out.published.sort()).toEqual(['BTC', 'TSLA']);
    const receipt = await f.publicClient.getTransactionReceipt({ hash: out.txHash! });
    expect(receipt.status).toBe('success');
    expect((await latest('AAPL')).slice(1, 3)).toEqual([24_000_000_000n, ahead]);
    expect((await latest('TSLA'))[1]).toBe(26_001_000_000n);
    // The next run reads the chain again and skips AAPL itself until its source passes the stamp.
    clock.now += 1_000;
    quote('AAPL', '250.00', '250.02');
    expect((await p.runOnce()).skipped.AAPL).toBe('out-of-order');
  });
});

describe('the reader', () => {
  test('reads every feed in one call with the chain time, and ages the answer while reads fail', async () => {
    let wall = 1_000_000;
    const r = createOracleFeedReader({ publicClient: f.publicClient, hub, feeds: ['AAPL', 'BTC'].map((symbol) => ({ symbol, feed: feeds[symbol] })), now: () => wall });
    expect(r.answer('AAPL')).toBeUndefined();
    await r.refresh();
    const [, answer, startedAt, updatedAt] = await latest('AAPL');
    const block = Number((await f.publicClient.getBlock()).timestamp);
    expect(r.answer('AAPL')).toEqual({ answer, decimals: 8, updatedAt: Number(updatedAt), observedAt: Number(startedAt), chainTime: block });
    expect(r.hasFeed('TSLA')).toBe(false);
    wall += 5_500;
    expect(r.answer('AAPL')?.chainTime).toBe(block + 5);
  });
});
