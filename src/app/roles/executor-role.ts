/**
 * Role `executor`: fills and settles stock orders and queued cash operations, signing with the
 * executor's key (EXECUTOR_PRIVATE_KEY, else OPERATOR_PRIVATE_KEY; the embedded anvil's account 8).
 */
import { AppError } from '../../errors/app-error.ts';
import { grantStockOperators } from '../../chain/deploy-contracts.ts';
import { describePending } from '../../chain/owner-actions.ts';
import { createStockExecutor } from '../../stock/executor/stock-executor.ts';
import { DEFAULT_ORACLE_AGE_MARGIN_S } from '../../stock/executor/fill-policy.ts';
import { createChainClockMonitor } from '../../chain/chain-clock-monitor.ts';
import { chainClockDetail, skewSeconds } from '../../observability/chain-clock-policy.ts';
import { trackChainClock } from '../../observability/venue-metrics.ts';
import { startDividendTask } from '../corporate-action-wiring.ts';
import type { StackContext } from '../stack-context.ts';
import { startOracle } from '../oracle-wiring.ts';
import { onVenueClockStep } from '../../lib/venue-clock.ts';
import { venueClockStep } from '../../lib/venue-clock-walk.ts';

export async function startExecutorRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, chain } = ctx;
  const walletClient = chain.walletFor('executor');
  if (!walletClient) throw new AppError('INTERNAL', 'the executor needs EXECUTOR_PRIVATE_KEY or OPERATOR_PRIVATE_KEY');
  // A deployment recorded before the executor had a key of its own lacks the grant: the owner adds it.
  // Only this role does it, so processes started together never send with the owner key at once.
  const owner = chain.walletFor('deployer');
  if (owner && owner.account.address !== walletClient.account.address) {
    await chain.setUpOnce(`stock operator ${walletClient.account.address}`, async () => {
      const granted = await grantStockOperators({
        publicClient: chain.publicClient,
        walletClient: owner,
        deployment: chain.deployment,
        accounts: [walletClient.account.address],
        onScheduled: (results) => ctx.logger.warn({ operator: walletClient.account.address }, `executor's operator grant ${describePending(results) ?? 'scheduled in the timelock'}; settlements fail with NotOperator until then`),
      });
      if (granted.length > 0) ctx.logger.info({ operators: granted }, 'executor made an operator of the stock venue');
    });
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
    // The sandbox's executor-paused fault (docs/sandbox.md): nothing is decided or sent while it stands.
    ...(ctx.sandbox ? { held: () => ctx.sandbox!.faults.executorHeld() } : {}),
  });
  await executor.start();
  // A sandbox's clock advance ticks the executor at its calendar steps: DAY orders expire at their
  // close (docs/sandbox.md). Its fills and expiries go on the chain at the step's time, so the chain
  // is moved there first; a step with nothing queued (its last tick's count) needs neither, save
  // the first of each advance (what was placed just before it) and the last.
  let advanceSeen: number | undefined;
  const offStep = ctx.sandbox
    ? onVenueClockStep({
        stage: 'stock orders',
        name: `stock executor (chain ${config.chainId})`,
        every: 'calendar',
        run: async () => {
          const step = venueClockStep();
          if (step === undefined) return executor.runOnce();
          const first = advanceSeen !== step.from;
          advanceSeen = step.from;
          if (!step.last && !first && executor.progress().queueDepth === 0) return undefined;
          await step.chain();
          return executor.runOnce();
        },
      })
    : () => {};
  // The chain's clock against this host's, with the bounds the fills' time checks take from the
  // chain: published with the executor's progress, so /readyz and `tokex status` say when a clock
  // halts every fill while the executor still ticks (docs/operations.md, "The chain's clock").
  const clock = createChainClockMonitor({
    publicClient: chain.publicClient,
    intervalMs: config.statusPublishMs,
    venue: {
      stockRouter: chain.deployment.contracts.stockRouter,
      stocks: Object.values(chain.deployment.contracts.stocks),
      // Read from the record each time: startOracle above writes the hub there when it makes one.
      hub: () => (chain.record.venues.stock?.contracts as { priceFeedHub?: `0x${string}` } | undefined)?.priceFeedHub,
      oracleAgeMarginS: DEFAULT_ORACLE_AGE_MARGIN_S,
    },
    logger: ctx.logger,
  });
  // The first reading before the role reports: the start's banner then judges a clock already read.
  await clock.refresh().catch(() => undefined);
  clock.start();
  const untrackClock = trackChainClock({ chainId: config.chainId, figures: () => clock.figures() });
  // Cash dividends are paid by the executor's key too (docs/corporate-actions.md).
  const stopDividends = await startDividendTask(ctx, walletClient);
  const untrack = ctx.status.track('executor', () => {
    const p = executor.progress();
    const o = oracle.progress();
    const c = clock.figures();
    return {
      progressAt: p.tickedAt,
      detail: {
        queueDepth: p.queueDepth,
        oldestPendingAt: p.oldestPendingAt ?? null,
        ...(o ? { oraclePublishedAt: o.publishedAt ?? null, oracleFailures: o.failures } : {}),
        ...(c ? { clockSkewS: skewSeconds(c.skewMs), chainClock: chainClockDetail(c) } : {}),
      },
    };
  });
  return async () => {
    offStep();
    untrack();
    untrackClock();
    await stopDividends();
    await clock.stop();
    await executor.stop();
    await oracle.stop();
  };
}
