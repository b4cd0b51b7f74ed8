/**
 * Role `executor`: fills and settles stock orders and queued cash operations, signing with the
 * executor's key (EXECUTOR_PRIVATE_KEY, else OPERATOR_PRIVATE_KEY; the embedded anvil's account 8).
 */
import { AppError } from '../../errors/app-error.ts';
import { grantStockOperators } from '../../chain/deploy-contracts.ts';
import { describePending } from '../../chain/owner-actions.ts';
import { createStockExecutor } from '../../stock/executor/stock-executor.ts';
import { startDividendTask } from '../corporate-action-wiring.ts';
import type { StackContext } from '../stack-context.ts';
import { startOracle } from '../oracle-wiring.ts';

export async function startExecutorRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, chain } = ctx;
  const walletClient = chain.walletFor('executor');
  if (!walletClient) throw new AppError('INTERNAL', 'the executor needs EXECUTOR_PRIVATE_KEY or OPERATOR_PRIVATE_KEY');
  // A deployment recorded before the executor had a key of its own lacks the grant: the owner adds it.
  // Only this role does it, so processes started together never send with the owner key at once.
  const owner = chain.walletFor('deployer');
  if (owner && owner.account.address !== walletClient.account.address) {
    const granted = await grantStockOperators({
      publicClient: chain.publicClient,
      walletClient: owner,
      deployment: chain.deployment,
      accounts: [walletClient.account.address],
      onScheduled: (results) => ctx.logger.warn({ operator: walletClient.account.address }, `executor's operator grant ${describePending(results) ?? 'scheduled in the timelock'}; settlements fail with NotOperator until then`),
    });
    if (granted.length > 0) ctx.logger.info({ operators: granted }, 'executor made an operator of the stock venue');
  }
  // The on-chain oracle the fills are checked against, published with a key of its own (oracle-wiring.ts).
  const oracle = await startOracle(ctx);
  const s = config.executor;
  const executor = createStockExecutor({
    db: ctx.db,
    publicClient: chain.publicClient,
    walletClient,
    deployment: chain.deployment,
    quotes: await ctx.quotes(),
    calendar: ctx.calendar,
    logger: ctx.logger,
    tickMs: s.tickMs,
    batchSize: s.batchSize,
    cashSettleDelayMs: s.cashSettleDelayMs,
    maxBatchGas: s.maxBatchGas,
    maxInFlightBatches: s.maxInFlightBatches,
    simulateFirst: s.simulateFirst,
    maxFill: s.maxFill,
    quoteMaxAgeMs: s.quoteMaxAgeMs,
    noQuoteTimeoutMs: s.noQuoteTimeoutMs,
  });
  await executor.start();
  // Cash dividends are paid by the executor's key too (docs/corporate-actions.md).
  const stopDividends = await startDividendTask(ctx, walletClient);
  const untrack = ctx.status.track('executor', () => {
    const p = executor.progress();
    const o = oracle.progress();
    return { progressAt: p.tickedAt, detail: { queueDepth: p.queueDepth, oldestPendingAt: p.oldestPendingAt ?? null, ...(o ? { oraclePublishedAt: o.publishedAt ?? null, oracleFailures: o.failures } : {}) } };
  });
  return async () => {
    untrack();
    await stopDividends();
    await executor.stop();
    await oracle.stop();
  };
}
