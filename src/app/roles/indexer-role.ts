/** Role `indexer`: follows the stock venue's contracts into storage. */
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
  await indexer.start();
  return () => indexer.stop();
}
