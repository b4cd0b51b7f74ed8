/**
 * Role `indexer`: follows the venues' contracts into storage: the stock venue's, and the perpetual
 * venue's MarginVault (its collateral movements) when the record has that venue. Each indexer runs
 * its own follower.
 */
import { perpDeploymentOf } from '../../chain/deploy-perp-venue.ts';
import { createPerpIndexer } from '../../perp/indexer/perp-indexer.ts';
import { createStockIndexer } from '../../stock/indexer/stock-indexer.ts';
import type { StackContext } from '../stack-context.ts';

export async function startIndexerRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config } = ctx;
  const indexer = createStockIndexer({
    db: ctx.db,
    publicClient: ctx.chain.publicClient,
    deployment: ctx.chain.deployment,
    confirmations: config.indexer.confirmations,
    pollMs: config.indexer.pollMs,
    batchBlocks: config.indexer.batchBlocks,
    logger: ctx.logger,
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
  return async () => {
    await Promise.all([indexer.stop(), perp?.stop()]);
  };
}
