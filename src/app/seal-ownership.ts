/**
 * Hands every stateful contract of the deployment record over to its venue's timelock (docs/security.md,
 * "Owner and upgrader"), and takes the admin key out of every operator role it still holds: run at
 * the start of the admin's processes, and by the perp-engine role right after it deploys a
 * ReserveRegistry beside an existing venue, so that a registry deployed by a perp-engine-only
 * process does not stay with the admin key until the admin's next start.
 */
import type { AppConfig } from '../config/app-config.ts';
import { writeDeploymentRecord } from '../chain/deployment-file.ts';
import { describePending, handOverToTimelock } from '../chain/owner-actions.ts';
import { revokeDeployerOperator } from '../chain/deployer-revocation.ts';
import type { Logger } from '../lib/logger.ts';
import { deploymentPath, type ChainWiring } from './chain-wiring.ts';

export async function sealOwnership(p: { config: AppConfig; logger: Pick<Logger, 'info' | 'warn' | 'error'>; chain: Pick<ChainWiring, 'walletFor' | 'publicClient' | 'record' | 'addressOf'> }): Promise<void> {
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
  // A venue deployed before issue 60 made the deployer an operator: revoked here, through the
  // timelock like every owner change (src/chain/deployer-revocation.ts). The configured role keys
  // stay: where the shared key stands in for the executor's, the deployer is the executor.
  try {
    const r = await revokeDeployerOperator({
      publicClient: chain.publicClient,
      wallet: admin,
      record: chain.record,
      operators: { stock: [chain.addressOf('executor')], perp: [chain.addressOf('perp-operator')] },
    });
    if (r.revoked.length > 0) logger.info({ contracts: r.revoked }, 'the admin key is no operator of the venues\' contracts any more');
    if (r.scheduled.length > 0) logger.warn({ contracts: r.scheduled }, `the admin key's operator roles: revocation ${describePending(r.pending)}`);
  } catch (err) {
    logger.error({ err }, 'the admin key\'s operator roles could not be revoked; the next start tries again');
  }
}
