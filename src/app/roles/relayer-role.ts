/**
 * Role `relayer`: sends the One Click transactions the stock API queues, with the relayer's own key
 * (RELAYER_PRIVATE_KEY; the embedded anvil's account 7). One relayer per key: its nonce sequence
 * lives in this process (src/chain/operator-roles.ts).
 */
import { AppError } from '../../errors/app-error.ts';
import { senderFor } from '../../chain/tx-sender.ts';
import { createOneClickRelayer } from '../../stock/relayer/one-click-relayer.ts';
import type { StackContext } from '../stack-context.ts';

export async function startRelayerRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, chain, logger } = ctx;
  const wallet = chain.walletFor('relayer');
  if (!wallet) throw new AppError('INTERNAL', 'the relayer needs RELAYER_PRIVATE_KEY');
  const relayer = createOneClickRelayer({
    db: ctx.db,
    publicClient: chain.publicClient,
    sender: senderFor({ publicClient: chain.publicClient, account: wallet.account, logger }),
    deployment: chain.deployment,
    signals: ctx.relaySignals,
    logger,
    pollMs: config.relay.pollMs,
    maxInFlight: config.relay.maxInFlight,
    maxQueueAgeMs: config.relay.maxQueueMs,
  });
  await relayer.start();
  logger.info({ relayer: wallet.account.address }, 'One Click relayer started');
  const untrack = ctx.status.track('relayer', () => {
    const p = relayer.progress();
    return { progressAt: p.progressAt, detail: { queueDepth: p.queueDepth, inFlight: relayer.inFlight(), oldestPendingAt: p.oldestPendingAt ?? null } };
  });
  return async () => {
    untrack();
    await relayer.stop();
  };
}
