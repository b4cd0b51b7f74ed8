/**
 * The chain every role shares: an embedded anvil whose state lives in the data directory (or the
 * node at RPC_URL), the venues deployed or reused from the deployment record, and the wallet each
 * sending role signs with.
 */
import path from 'node:path';
import type { Address, Chain } from 'viem';
import type { AppConfig } from '../config/app-config.ts';
import type { Logger } from '../lib/logger.ts';
import { AppError } from '../errors/app-error.ts';
import { startAnvil, type AnvilHandle } from '../chain/anvil-process.ts';
import { OPERATOR_ACCOUNT } from '../chain/anvil-accounts.ts';
import { assertDistinctRoleKeys, senderAddress, senderKey, type SenderKeyOptions, type SenderRole } from '../chain/operator-roles.ts';
import { SETUP_RPC_TIMEOUT_MS, createChainClients, createChainWallet, type ChainPublicClient, type ChainWalletClient } from '../chain/chain-client.ts';
import { ensureVenues, stockDeploymentOf, type Deployment, type VenueDeployer } from '../chain/deploy-contracts.ts';
import { readDeploymentRecord, writeDeploymentRecord, type DeploymentRecord } from '../chain/deployment-file.ts';
import { applyUpgrade, assertNotNewer, describePlan, planUpgrade } from '../chain/venue-upgrade.ts';
import { checkUpgradeLayout, recordDeployedLayouts } from '../chain/upgrade-layout-check.ts';
import { APP_VERSION } from '../config/build-info.ts';
import type { StopList } from './stop-list.ts';

/** Who signs: the deployer (owner of the contracts) or one of the sending roles. */
export type Signer = 'deployer' | SenderRole;

export interface ChainWiring {
  rpcUrl: string;
  chainId: number;
  chain: Chain;
  publicClient: ChainPublicClient;
  /** For reads on an API's request path: batches concurrent calls when RPC_BATCH is on. */
  readClient: ChainPublicClient;
  record: DeploymentRecord;
  /** The stock venue as the stock roles take it. */
  deployment: Deployment;
  /**
   * The wallet `signer` sends with. The deployer's is undefined when no key is configured; a sending
   * role without a key it may use throws, naming the variable to set (src/chain/operator-roles.ts).
   */
  walletFor(signer: Signer): ChainWalletClient | undefined;
  /** The address `signer` sends from, without building a wallet. */
  addressOf(signer: Signer): Address | undefined;
  /** The embedded anvil's state written to its file now (kill -9 safe); undefined with RPC_URL. */
  flushState?: () => Promise<void>;
  /** What this start upgraded, for the banner (docs/upgrades.md); empty when nothing. */
  upgradeNotes: string[];
  /**
   * A start's set-up step on this chain's contracts (a grant, the price feeds, a registry): run,
   * unless the chain is in a state this process set up already (a sandbox's snapshot or revert
   * starts the venue again on it), where the earlier run's result is answered without a call.
   * Only a run that succeeded is kept, and with `keep`, only a result it accepts.
   */
  setUpOnce<T>(step: string, run: () => Promise<T>, keep?: (result: T) => boolean): Promise<T>;
}

/**
 * What a process's starts of the venue share about its chains' set-up (src/app/revertible-stack.ts):
 * the set-up steps' results, and whether this start's chains are as an earlier start left them.
 */
export interface ChainSetUps {
  results: Map<string, unknown>;
  /**
   * The chains were put back to a state taken after this process set them up (a snapshot's or a
   * revert's start): the deployment checks, upgrades and set-up steps are not run again. False at
   * the first start and after a reset, whose seed may predate this process's settings and release.
   */
  asSetUp: boolean;
}

export function deploymentPath(config: AppConfig): string {
  return config.deploymentFile ?? path.join(config.dataDir, 'deployments', `${config.chainId}.json`);
}

/**
 * Starts (or connects to) the chain and makes every venue of `venues` present. The embedded anvil
 * gives each signer a dev account of its own (deployer: account 9, executor 8, relayer 7, perpetual
 * operator 6) so no two share a nonce sequence; configured keys win, and OPERATOR_PRIVATE_KEY stands
 * in for a role's key only in a process that runs every role.
 */
export async function startChain(params: {
  config: AppConfig;
  logger: Logger;
  stops: StopList;
  /** The process runs every role (`--role all`). */
  allInOneProcess: boolean;
  /** Builds the venues to deploy once the signers are known (they may be made operators). */
  venues: (signers: { addressOf(signer: Signer): Address | undefined }) => readonly VenueDeployer[];
  /**
   * The embedded anvils that outlive this start, by state file (a sandbox's revert starts the
   * venue again on the chain it reverted, src/app/revertible-stack.ts): one found here is used, one
   * started is put here, and their owner stops them, not `stops`.
   */
  keptAnvils?: Map<string, AnvilHandle>;
  /** Kept across the process's starts of the venue; without it every step runs at every start. */
  setUps?: ChainSetUps;
}): Promise<ChainWiring> {
  const { config, logger, stops } = params;
  let rpcUrl: string;
  let embedded = false;
  let flushState: (() => Promise<void>) | undefined;
  if (config.rpcUrl) {
    rpcUrl = config.rpcUrl;
  } else {
    const stateFile = path.join(config.dataDir, 'anvil-state.json');
    let anvil = params.keptAnvils?.get(stateFile);
    if (anvil === undefined) {
      anvil = await startAnvil({ port: config.anvilPort ?? 0, host: '127.0.0.1', chainId: config.chainId, stateFile, logger });
      if (params.keptAnvils) params.keptAnvils.set(stateFile, anvil);
      else stops.add(() => anvil!.stop());
      logger.info({ rpcUrl: anvil.rpcUrl }, 'anvil started');
    }
    const running = anvil;
    rpcUrl = running.rpcUrl;
    embedded = true;
    flushState = () => running.flushState();
  }

  const roleOpts: SenderKeyOptions = {
    keys: { shared: config.operatorPrivateKey, own: config.roleKeys, addresses: config.roleAddresses },
    embeddedAnvil: embedded,
    allInOneProcess: params.allInOneProcess,
  };
  assertDistinctRoleKeys(roleOpts.keys);
  const keyOf = (signer: Signer) => {
    if (signer === 'deployer') return config.operatorPrivateKey ?? (embedded ? OPERATOR_ACCOUNT.privateKey : undefined);
    return senderKey(signer, roleOpts).privateKey;
  };
  const { chain, publicClient, walletClient: deployerWallet } = createChainClients({ rpcUrl, chainId: config.chainId, operatorPrivateKey: keyOf('deployer') });
  // The API's request-path reads: concurrent ones share one JSON-RPC batch (RPC_BATCH).
  const readClient = config.rpcBatch ? createChainClients({ rpcUrl, chainId: config.chainId, batch: true }).publicClient : publicClient;
  const wallets = new Map<Signer, ChainWalletClient | undefined>([['deployer', deployerWallet]]);
  const walletFor = (signer: Signer) => {
    if (!wallets.has(signer)) {
      const key = keyOf(signer);
      wallets.set(signer, key ? createChainWallet(key, { chain, rpcUrl }) : undefined);
    }
    return wallets.get(signer);
  };
  const addressOf = (signer: Signer) => (signer === 'deployer' ? walletFor(signer)?.account.address : senderAddress(signer, roleOpts));

  // The deploy and the upgrade at start answer nobody waiting: a node slow under load (a first
  // start on a busy machine, anvil mining a deploy's hundred transactions) must not fail them, as
  // the request path's 5-second timeout did. Their own clients wait longer; the rest keep theirs.
  const setup = createChainClients({ rpcUrl, chainId: config.chainId, operatorPrivateKey: keyOf('deployer'), timeoutMs: SETUP_RPC_TIMEOUT_MS });
  const file = deploymentPath(config);
  const read = await readDeploymentRecord(file);
  let existing = read?.record;
  const upgradeNotes: string[] = [];
  const setUps = params.setUps;
  // Put back to a state this process had checked and set up (its own record restored with it): the
  // code is there and current, so the 20-odd reads of the checks below are not made again.
  const asSetUp = setUps?.asSetUp === true && existing !== undefined && existing.chainId === config.chainId && read?.format !== 'flat';
  const setUpOnce = <T>(step: string, run: () => Promise<T>, keep?: (result: T) => boolean): Promise<T> => {
    if (!setUps) return run();
    const key = `${rpcUrl} ${step}`;
    if (setUps.asSetUp && setUps.results.has(key)) return Promise.resolve(setUps.results.get(key) as T);
    return run().then((result) => {
      if (keep === undefined || keep(result)) setUps.results.set(key, result);
      return result;
    });
  };
  if (asSetUp) {
    const deployment = stockDeploymentOf(existing!);
    if (!deployment) throw new AppError('INTERNAL', 'the deployment record has no stock venue');
    logger.info({ file }, 'reusing deployed contracts');
    return { rpcUrl, chainId: existing!.chainId, chain, publicClient, readClient, record: existing!, deployment, walletFor, addressOf, flushState, upgradeNotes, setUpOnce };
  }
  if (existing && existing.chainId === config.chainId) {
    const upgraderWallet = config.upgraderPrivateKey ? createChainWallet(config.upgraderPrivateKey, { chain, rpcUrl, timeoutMs: SETUP_RPC_TIMEOUT_MS }) : setup.walletClient;
    // Only a process that runs every role changes contracts at start: separate role processes would race.
    existing = await upgradeInPlace({ record: existing, file, embedded, autoUpgrade: (embedded || config.autoUpgrade) && params.allInOneProcess, publicClient: setup.publicClient, upgraderWallet, logger, flushState, notes: upgradeNotes, chainFlag: config.chainId === (config.stockChains?.[0]?.chainId ?? config.chainId) ? '' : ` --chain ${config.chainId}` });
  }
  const { record, deployed } = await ensureVenues({
    publicClient: setup.publicClient,
    walletClient: setup.walletClient,
    record: existing,
    venues: params.venues({ addressOf }),
    onDeploy: (venue, reason) => logger.info({ venue, reason, file }, 'deploying venue'),
    note: (level, message, detail) => logger[level]({ ...detail, file }, message),
  });
  if (deployed.length > 0 || read?.format === 'flat') {
    await writeDeploymentRecord(file, record);
  }
  try {
    recordDeployedLayouts(record, file);
  } catch (err) {
    logger.warn({ err }, 'the storage layouts of the deployed contracts could not be noted; a later upgrade will find them in the release files');
  }
  if (deployed.length > 0) logger.info({ file, venues: deployed }, 'contracts deployed');
  else logger.info({ file }, 'reusing deployed contracts');

  const deployment = stockDeploymentOf(record);
  if (!deployment) throw new AppError('INTERNAL', 'the deployment record has no stock venue');
  return { rpcUrl, chainId: record.chainId, chain, publicClient, readClient, record, deployment, walletFor, addressOf, flushState, upgradeNotes, setUpOnce };
}

/**
 * The start's upgrade check (docs/upgrades.md): a record written by a later release refuses the
 * start, naming both versions; contracts behind proxies whose code this build changed are upgraded
 * in place on the embedded chain (or with AUTO_UPGRADE=on), and otherwise the start refuses before
 * anything is written, naming the plan and the command that carries it out. A venue deployed before
 * the proxies (0.1.0) runs as it is until `tokex upgrade --apply` migrates it.
 */
async function upgradeInPlace(params: {
  record: DeploymentRecord;
  file: string;
  embedded: boolean;
  /** Upgrade or migrate here (the embedded chain or AUTO_UPGRADE=on, in a process running every role). */
  autoUpgrade: boolean;
  publicClient: ChainPublicClient;
  upgraderWallet: ChainWalletClient | undefined;
  logger: Logger;
  flushState?: () => Promise<void>;
  notes: string[];
  /** ` --chain <id>` for a chain after the first, '' for the first. */
  chainFlag: string;
}): Promise<DeploymentRecord> {
  const { record, file, logger } = params;
  // A chain after the first is named to the command (docs/deployment.md, "Several chains").
  const cmd = (args: string) => `tokex upgrade${args}${params.chainFlag}`;
  const plan = planUpgrade(record);
  assertNotNewer(plan);
  const legacy = plan.venues.filter((v) => v.state === 'legacy').map((v) => v.venue);
  if (legacy.length > 0) {
    if (!params.autoUpgrade || !params.upgraderWallet) {
      throw new AppError('INTERNAL', `the ${legacy.join(' and ')} venue(s) on chain ${plan.chainId} were deployed before 0.2.0, without proxies, and this is tokex ${APP_VERSION}: their state must move to new upgradeable contracts first; run \`${cmd('')}\` to see the plan and \`${cmd(' --apply')}\` to carry it out (or set AUTO_UPGRADE=on). Nothing was changed.`);
    }
    logger.warn({ venues: legacy, file }, `contracts deployed before 0.2.0 (no proxies): they move to upgradeable contracts now (tokex ${APP_VERSION}); the journal is beside the record`);
  }
  if (!plan.venues.some((v) => v.state === 'upgrade')) return record;
  const lines = describePlan(plan).filter((l) => !l.includes(': current') && !l.includes('before 0.2.0'));
  if (!params.autoUpgrade || !params.upgraderWallet) {
    throw new AppError('INTERNAL', `the contracts on chain ${plan.chainId} run an earlier release's code and this is tokex ${APP_VERSION}:\n${lines.join('\n')}\nrun \`${cmd('')}\` to see the plan and \`${cmd(' --apply')}\` to carry it out (or set AUTO_UPGRADE=on)`);
  }
  logger.info({ file, plan: lines }, `upgrading the contracts in place to tokex ${APP_VERSION}`);
  const { done, pending } = await applyUpgrade({
    publicClient: params.publicClient,
    upgraderWallet: params.upgraderWallet,
    record,
    save: async (r) => {
      await params.flushState?.();
      await writeDeploymentRecord(file, r);
    },
    checkLayout: (step) => checkUpgradeLayout(step, file),
    onStep: (line) => logger.info({ step: line }, 'upgrade step done'),
  });
  if (pending.length > 0) {
    // Behind a timelock with a delay: the start cannot run this build's code until they are executed.
    const at = new Date(Math.max(...pending.map((p) => p.readyAt)) * 1000).toISOString();
    throw new AppError('INTERNAL', `the contracts' upgrade to tokex ${APP_VERSION} is scheduled in the venues' timelock, executable at ${at} (${pending.length} contract(s)); start again, or run \`${cmd(' --apply')}\`, after that time`);
  }
  logger.info({ steps: done.length, release: APP_VERSION }, 'contracts upgraded in place');
  params.notes.push(`contracts upgraded in place to ${APP_VERSION} (${done.length} change(s); the log has each step)`);
  return record;
}
