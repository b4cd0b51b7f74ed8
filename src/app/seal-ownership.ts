/**
 * Hands every stateful contract of the deployment record over to its venue's timelock (docs/security.md,
 * "Owner and upgrader"): run at the start of the admin's processes, and by the perp-engine role right
 * after it deploys a ReserveRegistry beside an existing venue, so that a registry deployed by a
 * perp-engine-only process does not stay with the admin key until the admin's next start.
 */
import type { AppConfig } from '../config/app-config.ts';
import { writeDeploymentRecord } from '../chain/deployment-file.ts';
import { describePending, handOverToTimelock } from '../chain/owner-actions.ts';
import type { Logger } from '../lib/logger.ts';
import { deploymentPath, type ChainWiring } from './chain-wiring.ts';

export async function sealOwnership(p: { config: AppConfig; logger: Pick<Logger, 'info' | 'warn' | 'error'>; chain: Pick<ChainWiring, 'walletFor' | 'publicClient' | 'record'> }): Promise<void> {
  const { config, logger, chain } = p;
  const admin = chain.walletFor('deployer');
  if (!admin) return;
  try {
    const r = await handOverToTimelock({ publicClient: chain.publicClient, wallet: admin, record: chain.record, delaySeconds: config.timelockDelayS });
    if (r.handedOver.length > 0 || r.delaySet !== undefined) {
      await writeDeploymentRecord(deploymentPath(config), chain.record);
      logger.info({ contracts: r.handedOver.length, delaySeconds: r.delaySet }, 'owner and upgrader of the venues\' contracts: their timelocks');
    }
    if (r.pending.length > 0) logger.warn(`timelock hand-over ${describePending(r.pending)}`);
  } catch (err) {
    logger.error({ err }, 'the venues\' contracts could not be handed over to their timelocks; the admin key still owns them; the next start tries again');
  }
}
