/**
 * Role `indexer`: follows the venues' contracts into storage: the stock venue's, and the perpetual
 * venue's MarginVault (its collateral movements) when the record has that venue. Each indexer runs
 * its own follower.
 */
import { findStockScope } from '@tokex/contract';
import { perpDeploymentOf } from '../../chain/deploy-perp-venue.ts';
import { createPerpIndexer } from '../../perp/indexer/perp-indexer.ts';
import { createStockIndexer } from '../../stock/indexer/stock-indexer.ts';
import type { StackContext } from '../stack-context.ts';
import type { FollowerProgress } from '../../indexer/chain-follower.ts';
import type { RoleSample } from '../../observability/role-status.ts';
import { startGuarded } from '../stop-list.ts';
import { createStreamPublisher } from '../../streams/stream-publisher.ts';
import { createStockChainReader } from '../../stock/stock-chain-reader.ts';
import { createStockDirectory } from '../../stock/stock-directory.ts';
import { stockChannels } from '../../stock/streams/stock-stream-channels.ts';
import { createStockStreamTask, type StockStreamTask } from '../../stock/streams/stock-stream-task.ts';
import { corporateActionRegistryOf } from '../corporate-action-wiring.ts';

/** Readiness figures of a follower: the chain head against the block indexed. */
function followerSample(p: FollowerProgress): RoleSample {
  const lag = p.head !== undefined && p.indexed !== undefined ? Math.max(0, p.head - p.indexed) : null;
  return { progressAt: p.progressAt, detail: { head: p.head ?? null, indexed: p.indexed ?? null, lagBlocks: lag } };
}

export async function startIndexerRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config } = ctx;
  /**
   * The stock streams' feeder, handed each committed batch's rows (as the batch wrote them) once it
   * runs; its seed, read from the store, covers the batches before.
   */
  let streams: StockStreamTask | undefined;
  const indexer = createStockIndexer({
    db: ctx.db,
    publicClient: ctx.chain.publicClient,
    deployment: ctx.chain.deployment,
    confirmations: config.indexer.confirmations,
    pollMs: config.indexer.pollMs,
    batchBlocks: config.indexer.batchBlocks,
    logger: ctx.logger,
    onCommitted: (change) => streams?.changed(change),
  });
  const perpDeployment = perpDeploymentOf(ctx.chain.record);
  const perp = perpDeployment
    ? createPerpIndexer({
        db: ctx.db,
        publicClient: ctx.chain.publicClient,
        deployment: perpDeployment,
        confirmations: config.perp.confirmations,
        pollMs: config.indexer.pollMs,
        batchBlocks: config.indexer.batchBlocks,
        logger: ctx.logger,
      })
    : undefined;
  await indexer.start();
  await perp?.start();
  // A One Click send answers once its block is projected: a relayer of this process says when it is
  // mined, and the indexer looks at once instead of at its next poll (elsewhere it polls).
  const unnudge = ctx.relaySignals.onMined(() => indexer.nudge());
  const untrack = [
    ctx.status.track('indexer', () => followerSample(indexer.progress())),
    ...(perp ? [ctx.status.track('perp-indexer', () => followerSample(perp.progress()))] : []),
  ];
  // The stock venue's streams have one publisher (one seq per stream), so it runs in the role that is
  // one per database: here, handed by the indexer every committed batch's rows, with the quotes read
  // through ctx.quotes() (the simulator's in this process, else the quotes table). docs/stock-api.md.
  // Each chain's indexer runs its own, on its own broker (its own Redis prefix, stream-wiring.ts), so
  // one chain's rows never reach another chain's streams (docs/streams.md, "Several chains").
  const { stop: stopStreams } = await startGuarded(ctx.logger, async (stops) => {
    // The process's broker of this chain, not one of this role's tenure: a stock API of this
    // process keeps reading it when the role loses its lease and takes it back.
    let task: StockStreamTask | undefined;
    const shared = await ctx.streamBroker('stock');
    const broker = shared.broker;
    const offLost = shared.onLost((err) => {
      ctx.logger.error({ err }, 'stock streams: the broker lost a batch; starting a new epoch');
      void task?.resync();
    });
    stops.add(async () => offLost());
    const chain = createStockChainReader({ publicClient: ctx.chain.readClient, deployment: ctx.chain.deployment, refreshMs: config.chainConfigRefreshMs, logger: ctx.logger });
    await chain.start();
    stops.add(async () => chain.stop());
    // The `corporateActions` channel's rows: the registry the stock API's route answers with (stock-api-role.ts).
    const corporate = await corporateActionRegistryOf(ctx);
    task = createStockStreamTask({
      db: ctx.db,
      // Candles from the one feed's history, which the marketdata role writes on the first chain.
      historyDb: ctx.firstChainDb,
      publisher: createStreamPublisher({ broker, catalog: stockChannels(), logger: ctx.logger }),
      quotes: await ctx.quotes(),
      chain,
      stocks: createStockDirectory(ctx.symbols, ctx.chain.deployment.contracts.stocks),
      calendar: ctx.calendar,
      quoteMaxAgeMs: config.executor.quoteMaxAgeMs,
      // The keys that may read this chain's streams: those with a scope for it (stock-auth-hook.ts).
      keys: async () => (await ctx.keys.list({ api: 'stock' })).filter((k) => findStockScope(k.scopes ?? [], config.chainId, config.stockProduct) !== undefined),
      logger: ctx.logger,
      venue: { chainId: config.chainId, product: config.stockProduct },
      // The demo cash token (USDC, 6 decimals) pays the dividends (docs/corporate-actions.md).
      dividends: { cashToken: ctx.chain.deployment.contracts.cashToken, cashDecimals: 6 },
      corporateActions: { list: (symbol) => corporate.list(symbol) },
    });
    // Before the seed is read: a batch committed during the read is published after it.
    streams = task;
    stops.add(async () => {
      streams = undefined;
    });
    await task.start();
    const started = task;
    stops.add(() => started.stop());
    ctx.stockStreams = broker;
    stops.add(async () => {
      ctx.stockStreams = undefined;
    });
  }).catch(async (err) => {
    for (const u of untrack) u();
    unnudge();
    await Promise.all([indexer.stop(), perp?.stop()]);
    throw err;
  });
  return async () => {
    for (const u of untrack) u();
    unnudge();
    await stopStreams();
    await Promise.all([indexer.stop(), perp?.stop()]);
  };
}
