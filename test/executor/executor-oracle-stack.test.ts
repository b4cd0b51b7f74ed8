/**
 * The oracle in the embedded stack: the executor role sets the feeds up (hub, a feed per listed
 * stock and per perp index symbol, the publisher's grant, the StockRouter's checks), records them,
 * publishes the quotes the executor fills at, and a market order placed through the API fills
 * against the checked feed. Restarted with `ORACLE_TOLERANCE_BPS=0`, the checks are removed and
 * nothing is published.
 */
import fs from 'node:fs';
import path from 'node:path';
import { until } from '../support/poll.ts';
import { afterAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { cashTokenAbi, priceFeedAbi, priceFeedHubAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { DEMO_WALLETS, ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { waitFor } from './executor-test-support.ts';
import { startIndexOracle } from '../../src/app/oracle-wiring.ts';
import type { StackContext } from '../../src/app/stack-context.ts';
import { ANY_BUY_PRICE } from '../chain/chain-test-helpers.ts';
import { testWallet } from '../support/chain-fixture.ts';

let t: TestStack | undefined;
afterAll(async () => {
  await t?.stop();
  if (t) fs.rmSync(t.dataDir, { recursive: true, force: true });
});

const ZERO = '0x0000000000000000000000000000000000000000';

describe('the oracle in the stack', () => {
  it('is set up and published by the executor role, checks fills, and is turned off by ORACLE_TOLERANCE_BPS=0', async () => {
    t = await startTestStack({ ORACLE_HEARTBEAT_MS: '5000' });
    const { publicClient, chain } = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId });
    const { stockRouter, stocks } = t.stack.deployment.contracts;
    const logLine = (msg: string) => t!.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === msg);

    const config = await publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [stocks.AAPL] });
    expect(config).toMatchObject({ decimals: 8, toleranceBps: 100, maxAge: 15 });
    expect(config.feed).not.toBe(ZERO);
    const record = JSON.parse(fs.readFileSync(path.join(t.dataDir, 'deployments', '31337.json'), 'utf8'));
    const section = record.venues.stock.contracts as { priceFeedHub: Address; priceFeeds: Record<string, Address> };
    expect(Object.keys(section.priceFeeds).sort()).toEqual([...Object.keys(stocks), 'BTC', 'ETH'].sort());
    expect(section.priceFeeds.AAPL).toBe(config.feed);
    expect(await publicClient.readContract({ address: section.priceFeedHub, abi: priceFeedHubAbi, functionName: 'isPublisher', args: [ORACLE_PUBLISHER_ACCOUNT.address] })).toBe(true);
    expect(logLine('oracle: publishing')).toMatchObject({ publisher: ORACLE_PUBLISHER_ACCOUNT.address, toleranceBps: 100, heartbeatMs: 5000, deviationBps: 25 });

    // Published before the executor's first tick: every feed has an answer.
    for (const symbol of ['AAPL', 'BTC']) {
      const [round, answer] = await publicClient.readContract({ address: section.priceFeeds[symbol], abi: priceFeedAbi, functionName: 'latestRoundData' });
      expect(round).toBeGreaterThanOrEqual(1n);
      expect(answer).toBeGreaterThan(0n);
    }

    // A market buy (deposit and buy, from the demo wallet) fills within the tolerance of the feed.
    const wallet = testWallet(DEMO_WALLETS[0].privateKey, chain, t.stack.rpcUrl);
    const { cashToken } = t.stack.deployment.contracts;
    const send = async (hash: Promise<`0x${string}`>) => expect((await publicClient.waitForTransactionReceipt({ hash: await hash })).status).toBe('success');
    await send(wallet.writeContract({ address: cashToken, abi: cashTokenAbi, functionName: 'approve', args: [stockRouter, 100_000_000n] }));
    const deadline = Number((await publicClient.getBlock()).timestamp) + 3600;
    const placed = await publicClient.simulateContract({ account: wallet.account, address: stockRouter, abi: stockRouterAbi, functionName: 'depositAndMarketBuy', args: [cashToken, 100_000_000n, stocks.AAPL, 10n ** 20n, ANY_BUY_PRICE, deadline] });
    await send(wallet.writeContract(placed.request));
    const orderId = placed.result;
    await waitFor(async () => (await publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [orderId] })).status === 3, 20_000, 100);
    const [fill] = await publicClient.getContractEvents({ address: stockRouter, abi: stockRouterAbi, eventName: 'OrderFilled', args: { orderId }, fromBlock: 0n });
    const [, answer] = await publicClient.readContract({ address: section.priceFeeds.AAPL, abi: priceFeedAbi, functionName: 'latestRoundData' });
    const feedPrice = answer * 10n ** 10n;
    const diff = fill.args.price! > feedPrice ? fill.args.price! - feedPrice : feedPrice - fill.args.price!;
    expect(diff * 10_000n).toBeLessThanOrEqual(feedPrice * 100n);

    // The perp mark task's check finds the same feeds from the router, read-only, and reads them.
    const logs: unknown[] = [];
    const quiet = { info: (o: unknown) => void logs.push(o), warn: (o: unknown) => void logs.push(o), debug: () => {} };
    const indexOracle = await startIndexOracle({
      config: t.config,
      // A chain of this test's own: each set-up step runs (nothing kept from a start before).
      chain: { publicClient, record: { chainId: 31337, venues: {} }, deployment: t.stack.deployment, setUpOnce: (_step: string, run: () => Promise<unknown>) => run() },
      logger: quiet,
    } as unknown as StackContext);
    try {
      expect(indexOracle.oracle?.toleranceBps).toBe(100);
      // The feeds are found in the background (the role's start does not wait for the chain).
      await until(async () => indexOracle.oracle?.answer('AAPL'), (a) => a !== undefined, 30_000);
      expect(indexOracle.oracle?.answer('AAPL')?.answer).toBeGreaterThan(0n);
      expect(indexOracle.oracle?.answer('ETH')?.answer).toBeGreaterThan(0n);
      expect(indexOracle.oracle?.answer('DOGE')).toBeUndefined();
    } finally {
      await indexOracle.stop();
    }

    await t.stop();
    const dataDir = t.dataDir;
    t = undefined;
    t = await startTestStack({ ORACLE_TOLERANCE_BPS: '0' }, { dataDir });
    const again = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId }).publicClient;
    expect((await again.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [stocks.AAPL] })).feed).toBe(ZERO);
    expect(t.logs.some((l) => l.includes('ORACLE_TOLERANCE_BPS=0'))).toBe(true);
  }, 90_000);
});
