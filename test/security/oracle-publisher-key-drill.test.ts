/**
 * Key-compromise drill: the oracle publisher's key (docs/security.md, "One Click relayer, oracle
 * publisher, reserves operator"). The drill takes the key the market-data role publishes with and
 * does the worst the PriceFeedHub allows: a price far from the market for one stock, a future stamp
 * to keep it "fresh", and a batch meant to block the honest update of every other feed. It cannot
 * fill anything itself; an honest executor's fills at the market price are refused on chain for the
 * manipulated stock only (fail-safe: that stock halts), the other feeds keep updating, users cancel
 * and leave with everything, and the owner revokes the key, after which its batches revert.
 */
import { parseEventLogs, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { priceFeedAbi, priceFeedHubAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { createChainWallet } from '../../src/chain/chain-client.ts';
import { ensurePriceFeeds } from '../../src/chain/deploy-contracts.ts';
import { testWallet, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import {
  confirm,
  contracts,
  DAY,
  deadlineIn,
  depositUsdc,
  expectCashInvariant,
  expectRevert,
  mUsdOf,
  musd,
  price,
  routerCall,
  settle,
  shares,
  Side,
  usdc,
  usdcOf,
} from '../chain/chain-test-helpers.ts';

let f: ChainFixture;
let alice: ChainUser;
let hub: Address;
let feeds: Record<string, Address>;
const answer = (v: string) => price(v) / 10n ** 10n;

beforeAll(async () => {
  f = await startChainFixture();
  [alice] = f.users;
  const { AAPL, TSLA } = contracts(f).stocks;
  const result = await ensurePriceFeeds({
    publicClient: f.publicClient,
    walletClient: f.operator,
    stockRouter: contracts(f).stockRouter,
    setup: { symbols: ['AAPL', 'TSLA'], stocks: { AAPL, TSLA }, publishers: [ORACLE_PUBLISHER_ACCOUNT.address], toleranceBps: 100, maxAgeSeconds: 180 },
  });
  hub = result!.hub!;
  feeds = result!.feeds;
  await depositUsdc(f, alice, usdc('5000'));
});
afterAll(async () => {
  await f?.stop();
});

const chainNow = async () => (await f.publicClient.getBlock()).timestamp;
const stolen = () => testWallet(ORACLE_PUBLISHER_ACCOUNT.privateKey, f.chain, f.rpcUrl);
const publish = async (updates: Array<{ symbol: string; answer: bigint; observedAt: bigint }>) =>
  confirm(f, stolen().writeContract({ address: hub, abi: priceFeedHubAbi, functionName: 'publish', args: [updates.map((u) => ({ feed: feeds[u.symbol], answer: u.answer, observedAt: u.observedAt }))] }));
const latest = async (symbol: string) => f.publicClient.readContract({ address: feeds[symbol], abi: priceFeedAbi, functionName: 'latestRoundData' });

describe('the oracle publisher key, stolen', () => {
  test('fills nothing itself, halts only the stock it lies about, cannot block the other feeds; users leave; the owner revokes it', async () => {
    const router = contracts(f).stockRouter;
    const { AAPL } = contracts(f).stocks;
    const t = await chainNow();
    // The honest state: AAPL 200, TSLA 250.
    await publish([{ symbol: 'AAPL', answer: answer('200'), observedAt: t }, { symbol: 'TSLA', answer: answer('250'), observedAt: t }]);
    const deadline = await deadlineIn(f, 3600);
    const buy = (await routerCall<bigint>(f, alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('1000'), price('205'), deadline])).result;
    const rest = (await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('190'), DAY, deadline])).result;
    const before = await mUsdOf(f, alice.address);

    // The worst: AAPL at 1 (a 99.5 % lie), stamped 50 s ahead to look fresh, and TSLA's next honest
    // update pre-empted by a stamp far in the future in the same batch.
    const at = await chainNow();
    const lie = await publish([
      { symbol: 'AAPL', answer: answer('1'), observedAt: at + 50n },
      { symbol: 'TSLA', answer: answer('1'), observedAt: at + 3_600n },
    ]);
    const refused = parseEventLogs({ abi: priceFeedHubAbi, logs: lie.logs, eventName: 'UpdateRefused' }).map((e) => ({ feed: e.args.feed, reason: e.args.reason }));
    // The future stamp is refused for TSLA alone (FutureObservation = 0); AAPL's lie is written.
    expect(refused).toEqual([{ feed: feeds.TSLA, reason: 0 }]);
    expect((await latest('AAPL'))[1]).toBe(answer('1'));
    expect((await latest('TSLA'))[1]).toBe(answer('250'));

    // The key fills nothing: settling is the executor's (another key).
    await expectRevert(
      () => stolen().writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId: buy, quantity: shares('1'), price: price('1') }], []] }),
      'NotOperator',
      [ORACLE_PUBLISHER_ACCOUNT.address],
    );
    // An honest executor fills at the market (200.10): refused against the lie, so AAPL halts.
    await expectRevert(
      () => f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId: buy, quantity: shares('1'), price: price('200.10') }], []] }),
      'OraclePriceDeviation',
      [buy, price('200.10'), answer('1')],
    );
    // A fill at the lie itself needs the executor's key too, and then the loss budget bounds it
    // (executor-key-drill.test.ts): this key alone moved nothing.
    expect(await mUsdOf(f, alice.address)).toEqual(before);

    // TSLA's honest next update goes through despite the batch above.
    const honest = await chainNow();
    await publish([{ symbol: 'TSLA', answer: answer('251'), observedAt: honest }]);
    expect((await latest('TSLA'))[1]).toBe(answer('251'));

    // Users leave: cancel the resting order (the executor closes it), withdraw the free cash.
    await routerCall(f, alice, 'cancelLimitOrder', [rest]);
    await settle(f, [], [{ orderId: rest, status: 4 }, { orderId: buy, status: 4 }]);
    const free = (await mUsdOf(f, alice.address)).free;
    const wallet = await usdcOf(f, alice.address);
    await routerCall(f, alice, 'withdraw', [contracts(f).cashToken, free / 10n ** 12n]);
    expect(await usdcOf(f, alice.address)).toBe(wallet + free / 10n ** 12n);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: free % 10n ** 12n, locked: 0n });
    await expectCashInvariant(f, [alice.address]);

    // The owner revokes the key: its next batch reverts, and an honest publisher restores AAPL.
    await confirm(f, f.operator.writeContract({ address: hub, abi: priceFeedHubAbi, functionName: 'setPublisher', args: [ORACLE_PUBLISHER_ACCOUNT.address, false] }));
    const again = await chainNow();
    await expect(publish([{ symbol: 'AAPL', answer: answer('2'), observedAt: again }])).rejects.toThrow(/NotPublisher|reverted/);
    const fresh = privateKeyToAccount(f.users[3].privateKey);
    await confirm(f, f.operator.writeContract({ address: hub, abi: priceFeedHubAbi, functionName: 'setPublisher', args: [fresh.address, true] }));
    const honestWallet = testWallet(f.users[3].privateKey, f.chain, f.rpcUrl);
    await confirm(f, honestWallet.writeContract({ address: hub, abi: priceFeedHubAbi, functionName: 'publish', args: [[{ feed: feeds.AAPL, answer: answer('200'), observedAt: (await chainNow()) + 60n }]] }));
    expect((await latest('AAPL'))[1]).toBe(answer('200'));
  });
});
