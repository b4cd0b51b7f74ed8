/**
 * Upgrades in place (docs/upgrades.md): what a deployment record says is deployed, compared with
 * what this build compiled, gives a plan; applying it upgrades each proxy to a new implementation
 * (state kept at the proxy's address) and deploys stateless contracts anew. The plan is pure, so a
 * dry run (`tokex upgrade`) and the start's check print exactly what `--apply` would do.
 *
 * Every step records its progress in the deployment record before and after its transaction, so a
 * run stopped anywhere (kill -9 included) resumes: an implementation deployed but not yet installed
 * is found in the entry's `next` and installed; one already installed is only recorded.
 */
import { BaseError, encodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import { APP_VERSION, compareVersions } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import { TxBatch } from './deploy-contracts.ts';
import type { ContractAddresses, DeployedCode, DeploymentRecord, VenueDeployment } from './deployment-file.ts';
import { gasWithMargin, isTimelock, timelockCalls } from './owner-actions.ts';
import { buildCodeHash, isVenueContract, VENUE_CONTRACTS, type VenueContractName } from './venue-code.ts';

/** ERC-1967's implementation slot: bytes32(uint256(keccak256('eip1967.proxy.implementation')) - 1). */
export const IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

/** One change to one contract of a venue. */
export interface UpgradeStep {
  venue: string;
  /** The contract's path in the section's `contracts` (`stockRouter`, `stocks.AAPL`). */
  path: string;
  contract: VenueContractName;
  address: Address;
  /** `implementation`: the proxy gets a new implementation; `redeploy`: a stateless contract is deployed anew. */
  kind: 'implementation' | 'redeploy';
  fromCodeHash: Hex;
  toCodeHash: Hex;
}

export type VenuePlan =
  | { venue: string; state: 'current'; release: string }
  | { venue: string; state: 'upgrade'; release: string; steps: UpgradeStep[] }
  /** Deployed before 0.2.0: contracts without proxies, moved to new ones by a migration. */
  | { venue: string; state: 'legacy' }
  /** Deployed or upgraded by a later release than this one: this build must not touch it. */
  | { venue: string; state: 'newer'; release: string };

export interface UpgradePlan {
  chainId: number;
  venues: VenuePlan[];
}

/** The address at a dotted path of a section's contracts. */
function addressAt(contracts: ContractAddresses, path: string): Address | undefined {
  let node: Address | ContractAddresses | undefined = contracts;
  for (const part of path.split('.')) {
    if (node === undefined || typeof node === 'string') return undefined;
    node = node[part];
  }
  return typeof node === 'string' ? node : undefined;
}

/** What the record's venues need to run this build's code; pure. */
export function planUpgrade(record: DeploymentRecord): UpgradePlan {
  const venues: VenuePlan[] = [];
  for (const [venue, section] of Object.entries(record.venues)) {
    if (section.release === undefined) {
      venues.push({ venue, state: 'legacy' });
      continue;
    }
    if (compareVersions(section.release, APP_VERSION) > 0) {
      venues.push({ venue, state: 'newer', release: section.release });
      continue;
    }
    const steps: UpgradeStep[] = [];
    for (const [path, entry] of Object.entries(section.code ?? {})) {
      if (!isVenueContract(entry.contract)) continue; // a contract this build does not know stays as it is
      const toCodeHash = buildCodeHash(entry.contract);
      if (toCodeHash === entry.codeHash) continue;
      const address = addressAt(section.contracts, path);
      if (!address) continue;
      const upgradeable = VENUE_CONTRACTS[entry.contract].upgradeable;
      steps.push({
        venue,
        path,
        contract: entry.contract,
        address,
        kind: upgradeable && entry.implementation ? 'implementation' : 'redeploy',
        fromCodeHash: entry.codeHash,
        toCodeHash,
      });
    }
    venues.push(steps.length > 0 ? { venue, state: 'upgrade', release: section.release, steps } : { venue, state: 'current', release: section.release });
  }
  return { chainId: record.chainId, venues };
}

/** Whether the plan asks for nothing. */
export function planIsEmpty(plan: UpgradePlan): boolean {
  return plan.venues.every((v) => v.state === 'current');
}

/** The plan as lines for a person (the dry run and the start's refusal). */
export function describePlan(plan: UpgradePlan): string[] {
  const lines: string[] = [];
  for (const v of plan.venues) {
    if (v.state === 'current') lines.push(`${v.venue}: current (release ${v.release}, this is ${APP_VERSION})`);
    else if (v.state === 'newer') lines.push(`${v.venue}: deployed by tokex ${v.release}, newer than this tokex ${APP_VERSION}: start ${v.release} or later`);
    else if (v.state === 'legacy') lines.push(`${v.venue}: deployed before 0.2.0 without proxies: its state moves to new upgradeable contracts (migration)`);
    else {
      lines.push(`${v.venue}: release ${v.release} → ${APP_VERSION}, ${v.steps.length} change(s):`);
      for (const s of v.steps) {
        const what = s.kind === 'implementation' ? 'new implementation behind the proxy' : 'deployed anew (stateless)';
        lines.push(`  ${s.path} (${s.contract} at ${s.address}): ${what}, code ${s.fromCodeHash.slice(0, 10)} → ${s.toCodeHash.slice(0, 10)}`);
      }
    }
  }
  return lines;
}

/** A refusal naming both versions: this build would corrupt or misread a newer deployment. */
export function assertNotNewer(plan: UpgradePlan): void {
  const newer = plan.venues.find((v) => v.state === 'newer');
  if (newer && newer.state === 'newer') {
    throw new AppError('CONFLICT', `the ${newer.venue} venue on chain ${plan.chainId} was deployed or upgraded by tokex ${newer.release}; this is tokex ${APP_VERSION}, which cannot run it: start tokex ${newer.release} or later`);
  }
}

/** Reads a proxy's implementation from its ERC-1967 slot. */
export async function implementationOf(client: ChainPublicClient, proxy: Address): Promise<Address> {
  const word = await client.getStorageAt({ address: proxy, slot: IMPLEMENTATION_SLOT });
  return getAddress(`0x${(word ?? '0x').slice(-40).padStart(40, '0')}`);
}

export interface ApplyUpgradeParams {
  publicClient: ChainPublicClient;
  /** Sends `upgradeToAndCall`: must be each proxy's upgrader. Also deploys the implementations. */
  upgraderWallet: ChainWalletClient;
  record: DeploymentRecord;
  /** Persists the record after every change (the deployment file). */
  save(record: DeploymentRecord): Promise<void>;
  /**
   * Checks a new implementation's storage layout against the deployed one's; throws naming the
   * variable when they are incompatible. Called before anything is sent for the step.
   */
  checkLayout?(step: UpgradeStep): void | Promise<void>;
  /** Progress lines, one per step done. */
  onStep?(line: string): void;
}

export interface ApplyUpgradeResult {
  record: DeploymentRecord;
  /** Steps carried out now (a step found already done counts too). */
  done: UpgradeStep[];
  /**
   * Steps scheduled in the venue's timelock and not executable yet (`readyAt`: seconds since the
   * epoch, chain time): a later run (`tokex upgrade --apply`) executes them once ready.
   */
  pending: Array<{ step: UpgradeStep; readyAt: number; operationId: Hex }>;
}


/**
 * Carries out the plan's `upgrade` venues (not `legacy` ones: see the migration). Resumable and
 * idempotent: a second run finds nothing to do.
 */
export async function applyUpgrade(params: ApplyUpgradeParams): Promise<ApplyUpgradeResult> {
  const { publicClient, upgraderWallet, save } = params;
  const record = params.record;
  const plan = planUpgrade(record);
  assertNotNewer(plan);
  const done: UpgradeStep[] = [];
  const pending: ApplyUpgradeResult['pending'] = [];
  // Proxies of one contract with the same constructor arguments share one new implementation.
  const built = new Map<string, Address>();
  try {
    for (const v of plan.venues) {
      if (v.state !== 'upgrade') continue;
      const section = record.venues[v.venue] as VenueDeployment;
      for (const step of v.steps) {
        await params.checkLayout?.(step);
        const entry: DeployedCode = section.code![step.path];
        const code = VENUE_CONTRACTS[step.contract];
        const args = await code.constructorArgs(publicClient, step.address);
        const key = `${step.contract}:${args.map(String).join(',')}`;
        if (step.kind === 'redeploy') {
          const tx = await TxBatch.open(publicClient, upgraderWallet);
          const fresh = await tx.deployPlain(`${step.path} (${step.contract})`, step.contract, args);
          await tx.finish();
          setAddressAt(section.contracts, step.path, fresh);
          section.code![step.path] = { contract: step.contract, codeHash: step.toCodeHash };
          await save(record);
          done.push(step);
          params.onStep?.(`${step.venue} ${step.path}: ${step.contract} deployed anew at ${fresh}`);
          continue;
        }
        let next = entry.next ?? built.get(key);
        if (next !== undefined) {
          const codeAt = await publicClient.getCode({ address: next });
          if (codeAt === undefined || codeAt === '0x') next = undefined;
        }
        if (next === undefined) {
          const tx = await TxBatch.open(publicClient, upgraderWallet);
          next = await tx.deployImplementation(step.contract, args);
          await tx.finish();
          built.set(key, next);
        }
        // Noted before the upgrade is sent, so that a run stopped now installs this one next time.
        section.code![step.path] = { ...entry, next };
        await save(record);
        const current = await implementationOf(publicClient, step.address);
        if (current.toLowerCase() !== next.toLowerCase()) {
          const authority = getAddress(await publicClient.readContract({ address: step.address, abi: code.abi, functionName: 'upgrader' }) as Address);
          const data = encodeFunctionData({ abi: code.abi, functionName: 'upgradeToAndCall', args: [next, '0x'] });
          if (authority.toLowerCase() !== upgraderWallet.account.address.toLowerCase()) {
            // The venue's timelock (docs/upgrades.md, "Upgrades through the timelock"): scheduled now,
            // executed once its delay has passed, by this run or a later one (same operation).
            if (!(await isTimelock(publicClient, authority))) {
              throw new AppError('INTERNAL', `upgrade: ${step.venue} ${step.path} (${step.contract}): the upgrade authority is ${authority}, not this key (${upgraderWallet.account.address}); have it send to ${step.address} the data ${data}, then run tokex upgrade --apply again`);
            }
            const r = await timelockCalls({ publicClient, wallet: upgraderWallet, timelock: authority, calls: [{ target: step.address, data }], label: `upgrade ${step.venue} ${step.path}` });
            if (!r.done) {
              pending.push({ step, readyAt: r.readyAt, operationId: r.operationId });
              params.onStep?.(`${step.venue} ${step.path}: upgrade of ${step.contract} to ${next} scheduled in the timelock, executable at ${new Date(r.readyAt * 1000).toISOString()}; run tokex upgrade --apply again then`);
              continue;
            }
          } else {
            const gas = await gasWithMargin(publicClient, upgraderWallet, step.address, data);
            const hash = await upgraderWallet.sendTransaction({ to: step.address, data, gas, account: upgraderWallet.account, chain: upgraderWallet.chain });
            const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 120_000 });
            if (receipt.status !== 'success') {
              throw new AppError('INTERNAL', `upgrade: ${step.venue} ${step.path} (${step.contract}): upgradeToAndCall reverted`, { detail: { txHash: hash } });
            }
          }
        }
        section.code![step.path] = { contract: step.contract, implementation: next, codeHash: step.toCodeHash };
        await save(record);
        done.push(step);
        params.onStep?.(`${step.venue} ${step.path}: ${step.contract} upgraded to ${next}`);
      }
      // A venue with an upgrade still waiting in its timelock keeps its release until the upgrade is done.
      if (pending.some((p) => p.step.venue === v.venue)) continue;
      section.release = APP_VERSION;
      await save(record);
    }
    return { record, done, pending };
  } catch (err) {
    throw err instanceof BaseError ? toChainError(err) : err;
  }
}

function setAddressAt(contracts: ContractAddresses, path: string, address: Address): void {
  const parts = path.split('.');
  let node: ContractAddresses = contracts;
  for (const part of parts.slice(0, -1)) node = node[part] as ContractAddresses;
  node[parts[parts.length - 1]] = address;
}
