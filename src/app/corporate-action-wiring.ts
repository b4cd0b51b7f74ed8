/**
 * The corporate-action scheduler (dividends, and splits through the Stock owner's key) as the executor role runs it (docs/corporate-actions.md, "Who pays"): the
 * executor already sends the stock venue's settlements with its own key and is an operator of the
 * venue, so it pays the dividends too, through the same sender (one nonce sequence). Its clock is
 * the market calendar's (`MARKET_CLOCK_START` moves both), so a demo can reach an ex-date at once.
 */
import type { StackContext } from './stack-context.ts';
import { dividendDistributorAbi } from '../chain/abi/generated/index.ts';
import type { ChainWalletClient } from '../chain/chain-client.ts';
import { describePending, ownerCall } from '../chain/owner-actions.ts';
import { senderFor } from '../chain/tx-sender.ts';
import { loadCorporateActions } from '../marketdata/corporate-actions.ts';
import { createDividendScheduler } from '../stock/corporate-actions/dividend-scheduler.ts';
import { listRunTimeActions } from '../stock/corporate-actions/corporate-action-store.ts';
import { createCorporateActionRegistry, venueStartDateOf, type CorporateActionRegistry } from '../stock/corporate-actions/corporate-action-registry.ts';
import { createSplitApplier } from '../stock/corporate-actions/split-applier.ts';
import { onVenueClockStep, venueNow } from '../lib/venue-clock.ts';
import { venueClockStep } from '../lib/venue-clock-walk.ts';

export async function startDividendTask(ctx: StackContext, walletClient: ChainWalletClient): Promise<() => Promise<void>> {
  const { config, chain, logger } = ctx;
  const distributor = chain.deployment.contracts.dividendDistributor;
  const payer = walletClient.account.address;
  // A payer given its own key after the deployment is made an operator of the distributor by its owner.
  const owner = chain.walletFor('deployer');
  if (distributor && owner && owner.account.address !== payer) {
    try {
      const isOperator = await chain.publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'isOperator', args: [payer] });
      if (!isOperator) {
        // Through the venue's timelock when it owns the distributor (src/chain/owner-actions.ts).
        const r = await ownerCall({ publicClient: chain.publicClient, wallet: owner, target: distributor, abi: dividendDistributorAbi, functionName: 'setOperator', args: [payer, true] });
        if (r.done) logger.info({ operator: payer }, 'executor made an operator of the dividend distributor');
        else logger.warn({ operator: payer }, `the executor's dividend distributor grant is ${describePending([r])}; dividends fail with NotOperator until then`);
      }
    } catch (err) {
      // Not fatal to the executor: a dividend then fails naming NotOperator, and a restart grants again.
      logger.warn({ err: (err as Error).message }, 'could not make the executor an operator of the dividend distributor');
    }
  }
  const file = await loadCorporateActions(config.corporateActionsFile);
  // The venue's clock (a sandbox may move it), on the calendar's shift (MARKET_CLOCK_START).
  const now = () => venueNow() + ctx.calendar.clockOffsetMs;
  const paySender = senderFor({ publicClient: chain.publicClient, account: walletClient.account, logger });
  // Splits are the Stock tokens' owner's to apply; the payer's sender when it is the same account (one nonce sequence).
  const ownerSender = owner === undefined ? undefined : owner.account.address === payer ? paySender : senderFor({ publicClient: chain.publicClient, account: owner.account, logger });
  const splits = createSplitApplier({
    db: ctx.db,
    publicClient: chain.publicClient,
    sender: ownerSender,
    stocks: chain.deployment.contracts.stocks,
    fromBlock: BigInt(chain.deployment.firstBlockNumber ?? chain.deployment.blockNumber),
    now,
    clockOffsetMs: ctx.calendar.clockOffsetMs,
    logger,
  });
  const scheduler = createDividendScheduler({
    db: ctx.db,
    publicClient: chain.publicClient,
    sender: paySender,
    splits,
    deployment: chain.deployment,
    withholdingBps: config.dividendWithholdingBps,
    fileActions: file.list(),
    now,
    tickMs: config.corporateActionsTickMs,
    confirmations: config.indexer.confirmations,
    logger,
    // A chain after the first applies the run-time actions of the first chain's store, with its own
    // state in its own store (docs/corporate-actions.md, "Several chains").
    ...(ctx.firstChain ? {} : { runTimeSource: () => listRunTimeActions(ctx.firstChainDb) }),
  });
  scheduler.start();
  // A sandbox's clock advance pays each dividend and applies each split at its step (docs/sandbox.md),
  // with the chain moved to the step first where one is due.
  const offStep = ctx.sandbox
    ? onVenueClockStep({
        stage: 'corporate actions',
        name: `stock corporate actions (chain ${config.chainId})`,
        run: () => scheduler.runOnce({ beforeChain: () => venueClockStep()?.chain() ?? Promise.resolve() }),
        every: 'calendar',
      })
    : () => {};
  return () => {
    offStep();
    return scheduler.stop();
  };
}

/**
 * The venue's corporate actions with their states, as the stock API's route and the
 * `corporateActions` stream both answer them: the file's and the database's (docs/corporate-actions.md).
 */
export async function corporateActionRegistryOf(ctx: StackContext): Promise<CorporateActionRegistry> {
  const deployment = ctx.chain.deployment;
  return createCorporateActionRegistry({
    db: ctx.db,
    fileActions: (await loadCorporateActions(ctx.config.corporateActionsFile)).list(),
    symbols: ctx.symbols.map((s) => s.symbol),
    stocks: deployment.contracts.stocks,
    cashToken: deployment.contracts.cashToken,
    venueStartDate: venueStartDateOf(deployment.deployedAt),
    ...(ctx.firstChain ? {} : { runTimeSource: ctx.firstChainDb }),
  });
}
