/**
 * The on-chain oracle beside the executor (docs/market-data.md, "On-chain oracle"): at start the
 * deployer's key makes the PriceFeedHub, a feed per listed stock and per perp index symbol, the
 * publisher's grant and the StockRouter's checks what ORACLE_* says (`ensurePriceFeeds`); then the
 * publisher writes the quotes this process reads — the ones the executor fills at — with its own
 * key (ORACLE_PUBLISHER_PRIVATE_KEY; the embedded anvil's account 5; OPERATOR_PRIVATE_KEY in a
 * process running every role).
 *
 * Without a publisher key here the oracle is left as it is and nothing is published: a stock whose
 * router check is already set then stops filling once its answer is older than the maximum age,
 * which the log says at start. `ORACLE_TOLERANCE_BPS=0` removes the venue feeds' checks instead.
 */
import { ensurePriceFeeds, type PriceFeedsResult } from '../chain/deploy-contracts.ts';
import { readDeploymentRecord, writeDeploymentRecord, type DeployedCode } from '../chain/deployment-file.ts';
import type { ChainWalletClient } from '../chain/chain-client.ts';
import { senderFor } from '../chain/tx-sender.ts';
import { describePending } from '../chain/owner-actions.ts';
import { PERP_INDEX_SYMBOLS } from '../marketdata/symbol-catalog.ts';
import {
  createOracleFeedReader,
  createOraclePublisher,
  type OracleFeedReader,
  type OraclePublisher,
  type OraclePublisherProgress,
} from '../marketdata/oracle-publisher.ts';
import type { IndexOracle } from '../perp/workers/mark-price-task.ts';
import { deploymentPath } from './chain-wiring.ts';
import type { StackContext } from './stack-context.ts';
import type { Address } from 'viem';
import { onVenueClockStep } from '../lib/venue-clock.ts';
import { onVenueChainMove, venueClockStep } from '../lib/venue-clock-walk.ts';
import type { FeedAnswer } from '../marketdata/oracle-publisher.ts';

/**
 * The sandbox's publisher of each chain of this process, for the perpetual index's check beside it
 * (`startIndexOracle`): during an advance the check compares with the round the publisher just made
 * at the step, which the chain has not been given at a step it was not moved to.
 */
const sandboxPublishers = new WeakMap<object, OraclePublisher>();

/** The newer of two readings of a feed (by the observation time). */
function newerAnswer(a: FeedAnswer | undefined, b: FeedAnswer | undefined): FeedAnswer | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return (b.observedAt ?? b.updatedAt) > (a.observedAt ?? a.updatedAt) ? b : a;
}

export interface OracleWiring {
  /** The publisher's figures, undefined when it does not run here. */
  progress(): OraclePublisherProgress | undefined;
  stop(): Promise<void>;
}

/** Writes the hub and feeds into the stock venue's section of the record file (re-read first: another process may have written it). */
async function recordFeeds(ctx: StackContext, hub: Address, feeds: Record<string, Address>, code: Record<string, DeployedCode>): Promise<void> {
  const file = deploymentPath(ctx.config);
  const read = await readDeploymentRecord(file);
  const records = [ctx.chain.record, ...(read && read.record.chainId === ctx.chain.chainId ? [read.record] : [])];
  for (const record of records) {
    const stock = record.venues.stock;
    if (stock) {
      stock.contracts = { ...stock.contracts, priceFeedHub: hub, priceFeeds: feeds };
      if (Object.keys(code).length > 0) stock.code = { ...stock.code, ...code };
    }
  }
  await writeDeploymentRecord(file, records[records.length - 1]);
}

export async function startOracle(ctx: StackContext): Promise<OracleWiring> {
  const { config, chain, logger } = ctx;
  const settings = config.oracle;
  const idle: OracleWiring = { progress: () => undefined, stop: async () => {} };
  let publisherWallet: ChainWalletClient | undefined;
  try {
    publisherWallet = settings.toleranceBps > 0 ? chain.walletFor('oracle-publisher') : undefined;
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'oracle: no publisher key in this process; the price feeds are not published here and no stock check is added');
    return idle;
  }
  const stocks = chain.deployment.contracts.stocks;
  const symbols = [...Object.keys(stocks), ...PERP_INDEX_SYMBOLS.map((p) => p.symbol).filter((s) => stocks[s] === undefined)];
  const recorded = (chain.record.venues.stock?.contracts as { priceFeedHub?: Address } | undefined)?.priceFeedHub;
  let result: PriceFeedsResult | undefined;
  try {
    // The logs and the record's update go with the set-up: a start that reuses it has done neither.
    result = await chain.setUpOnce(`price feeds ${publisherWallet?.account.address ?? 'none'}`, async () => {
      const done = await ensurePriceFeeds({
        publicClient: chain.publicClient,
        walletClient: chain.walletFor('deployer'),
        stockRouter: chain.deployment.contracts.stockRouter,
        hub: recorded,
        create: publisherWallet !== undefined,
        setup: {
          symbols,
          stocks,
          publishers: publisherWallet ? [publisherWallet.account.address] : [],
          toleranceBps: settings.toleranceBps,
          maxAgeSeconds: Math.ceil(settings.maxAgeMs / 1000),
        },
      });
      if (done?.scheduled.length) {
        logger.warn({ scheduled: done.scheduled }, `oracle: ${describePending(done.pending) ?? 'scheduled in the timelock'}; the feeds and checks take effect then (docs/security.md, "Owner and upgrader")`);
      }
      if (done?.missing.length) logger.warn({ missing: done.missing }, 'oracle: the oracle differs from ORACLE_* and this process has no deployer key to change it');
      if (done?.hub !== undefined && (done.changes.length > 0 || done.scheduled.length > 0)) {
        logger.info({ hub: done.hub, changes: done.changes }, 'oracle: price feeds set up');
        await recordFeeds(ctx, done.hub, done.feeds, done.code).catch((err: unknown) => logger.warn({ err }, 'oracle: the deployment record could not be updated'));
      }
      return done;
    });
  } catch (err) {
    logger.warn({ err }, 'oracle: the price feeds could not be set up; nothing is published');
    return idle;
  }
  if (!publisherWallet || !result?.hub) {
    if (settings.toleranceBps === 0) logger.info('oracle: ORACLE_TOLERANCE_BPS=0: fills are not checked against the price feeds (the StockRouter\'s requireOracle is off: the demo\'s explicit opt-out, no treasury loss budget applies)');
    else logger.warn('oracle: no price feed hub and no deployer key to deploy one; nothing is published');
    return idle;
  }
  const publisher: OraclePublisher = createOraclePublisher({
    publicClient: chain.publicClient,
    sender: senderFor({ publicClient: chain.publicClient, account: publisherWallet.account, logger }),
    hub: result.hub,
    feeds: Object.entries(result.feeds).filter(([s]) => symbols.includes(s)).map(([symbol, feed]) => ({ symbol, feed })),
    quotes: await ctx.quotes(),
    heartbeatMs: settings.heartbeatMs,
    deviationBps: settings.deviationBps,
    quoteMaxAgeMs: config.executor.quoteMaxAgeMs,
    logger,
  });
  // A first round before the executor's first tick, so fills are not held back waiting for it.
  await publisher.runOnce().catch((err: unknown) => logger.warn({ err }, 'oracle publisher: the first publish failed; retrying'));
  publisher.start();
  // A sandbox's clock advance makes a round at each step on the step's quotes: published on the
  // chain where the advance moved it there, else staged, and published once a later task of the
  // step moves the chain (or at the last step). The perpetual marks of the step check the index
  // against that round: a feed an hour old would withhold them.
  const name = `oracle publisher (chain ${config.chainId})`;
  const offSteps = ctx.sandbox
    ? [
        onVenueClockStep({ stage: 'oracle', name, run: () => (venueClockStep()?.onChain() === false ? publisher.stage() : publisher.runOnce()) }),
        onVenueChainMove({ stage: 'oracle', name: `${name}, on the chain moved`, run: () => publisher.runOnce() }),
      ]
    : [];
  if (ctx.sandbox) sandboxPublishers.set(ctx.chain, publisher);
  const offStep = () => {
    for (const off of offSteps) off();
    if (sandboxPublishers.get(ctx.chain) === publisher) sandboxPublishers.delete(ctx.chain);
  };
  logger.info({ hub: result.hub, feeds: Object.keys(result.feeds).length, publisher: publisherWallet.account.address, toleranceBps: settings.toleranceBps, heartbeatMs: settings.heartbeatMs, deviationBps: settings.deviationBps }, 'oracle: publishing');
  return {
    progress: () => publisher.progress(),
    stop: () => {
      offStep();
      return publisher.stop();
    },
  };
}

/** How often a process that found no feeds at start looks for them again. */
const DISCOVER_EVERY_MS = 30_000;

/**
 * The perp mark task's check of the index against the feeds (`createMarkPriceTask({ oracle })`):
 * the venue's feeds found from the StockRouter (read-only; whichever process publishes), re-read
 * every second. Until feeds are found (another process sets them up) `answer` knows none and the
 * index goes unchecked; they are looked for again every 30 s. Undefined `oracle` with
 * `ORACLE_TOLERANCE_BPS=0`.
 */
export async function startIndexOracle(ctx: StackContext): Promise<{ oracle?: IndexOracle; stop(): Promise<void> }> {
  const { config, chain, logger } = ctx;
  const settings = config.oracle;
  if (settings.toleranceBps === 0) return { stop: async () => {} };
  let reader: OracleFeedReader | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const discover = async (): Promise<void> => {
    const recorded = (chain.record.venues.stock?.contracts as { priceFeedHub?: Address } | undefined)?.priceFeedHub;
    try {
      // Kept only once feeds are found: until then they are looked for again at each start.
      const found = await chain.setUpOnce(
        'price feeds found',
        () => ensurePriceFeeds({
          publicClient: chain.publicClient,
          stockRouter: chain.deployment.contracts.stockRouter,
          hub: recorded,
          create: false,
          setup: { symbols: [], stocks: chain.deployment.contracts.stocks, publishers: [], toleranceBps: settings.toleranceBps, maxAgeSeconds: Math.ceil(settings.maxAgeMs / 1000) },
        }),
        (r) => r?.hub !== undefined && Object.keys(r.feeds).length > 0,
      );
      if (!stopped && found?.hub !== undefined && Object.keys(found.feeds).length > 0) {
        const r = createOracleFeedReader({ publicClient: chain.publicClient, hub: found.hub, feeds: Object.entries(found.feeds).map(([symbol, feed]) => ({ symbol, feed })), logger });
        await r.refresh().catch(() => undefined);
        r.start();
        reader = r;
        logger.info({ hub: found.hub, feeds: Object.keys(found.feeds) }, 'oracle: the perpetual index is checked against the price feeds');
        return;
      }
    } catch (err) {
      logger.warn({ err }, 'oracle: the price feeds could not be read; the perpetual index is not checked for now');
    }
    if (!stopped) timer = setTimeout(() => void discover(), DISCOVER_EVERY_MS);
  };
  // In the background: the role starts (and reports) whatever the chain answers; the index is
  // unchecked until the feeds are found.
  void discover();
  return {
    oracle: {
      // In a sandbox, the newer of the chain's round as last read and the round this process's
      // publisher last wrote or staged (an advance's step: the chain may not have it, by design).
      answer: (symbol) => (ctx.sandbox ? newerAnswer(reader?.answer(symbol), sandboxPublishers.get(ctx.chain)?.latest(symbol)) : reader?.answer(symbol)),
      toleranceBps: settings.toleranceBps,
      maxAgeS: Math.ceil(settings.maxAgeMs / 1000),
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await reader?.stop();
    },
  };
}
