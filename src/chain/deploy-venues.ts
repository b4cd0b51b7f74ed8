/**
 * The deployment record's venues made present on a chain: each venue kept when its recorded
 * contracts all have code, deployed (anew) otherwise by its VenueDeployer (deploy-stock-venue.ts,
 * deploy-perp-venue.ts), in order, a venue deployed again when one it depends on was.
 */
import type { Address } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import type { DeployNote } from './deploy-deterministic-address.ts';
import type { ContractAddresses, Deployment, DeploymentRecord, VenueDeployment } from './deployment-file.ts';

/** Whether the chain behind `publicClient` is the deployment's chain and has code at every address. */
export async function isDeploymentLive(publicClient: ChainPublicClient, deployment: Deployment): Promise<boolean> {
  const chainId = await publicClient.getChainId();
  if (chainId !== deployment.chainId) return false;
  // Groups (the stocks, the price feeds) nest one level: every address counts.
  const addresses = addressesOf(deployment.contracts);
  const codes = await Promise.all(addresses.map((address) => publicClient.getCode({ address })));
  return codes.every((code) => code !== undefined && code !== '0x');
}

/** What a venue's deployment gets: the clients, and the record as built so far (the venues before it). */
export interface VenueDeployContext {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  /** Where a deployment says what it could not do as planned (the app's log). */
  note?: DeployNote;
  /** The record with every venue listed before this one present (kept or just deployed). */
  record: DeploymentRecord;
}

/** Deploys one venue's contracts with the given wallet and answers its section of the record. */
export interface VenueDeployer {
  readonly venue: string;
  /**
   * Venues this one's contracts refer to (listed before it): when one of them is deployed anew,
   * this one is deployed anew too, so it never points at a previous deployment's contracts.
   */
  readonly dependsOn?: readonly string[];
  deploy(ctx: VenueDeployContext): Promise<VenueDeployment>;
}

function addressesOf(contracts: ContractAddresses): Address[] {
  return Object.values(contracts).flatMap((v) => (typeof v === 'string' ? [v] : addressesOf(v)));
}

/** Whether every contract of a venue section has code on the chain behind `publicClient`. */
export async function isVenueLive(publicClient: ChainPublicClient, venue: VenueDeployment): Promise<boolean> {
  const codes = await Promise.all(addressesOf(venue.contracts).map((address) => publicClient.getCode({ address })));
  return codes.every((code) => code !== undefined && code !== '0x');
}

/** Why ensureVenues deploys a venue. */
export type VenueDeployReason = 'missing' | 'code gone' | 'dependency redeployed';

export interface EnsureVenuesResult {
  record: DeploymentRecord;
  /** Venues deployed now (missing from the record, or their code gone from the chain). */
  deployed: string[];
}

/**
 * Makes every venue of `venues` present on the chain: a venue whose section is recorded and whose
 * contracts all have code is kept as it is; any other is deployed, one venue after another, with
 * `walletClient`. A venue is also deployed anew when a venue it depends on (`dependsOn`) was.
 * Sections of venues not asked for stay in the record untouched. A record of another chain id
 * counts as empty.
 */
export async function ensureVenues(params: {
  publicClient: ChainPublicClient;
  walletClient?: ChainWalletClient;
  record?: DeploymentRecord;
  venues: readonly VenueDeployer[];
  /** Called before a venue is (re)deployed, e.g. to log why. */
  onDeploy?: (venue: string, reason: VenueDeployReason) => void;
  /** What a venue's deployment could not do as planned (a deterministic address taken). */
  note?: DeployNote;
}): Promise<EnsureVenuesResult> {
  const { publicClient, walletClient } = params;
  let chainId: number;
  try {
    chainId = await publicClient.getChainId();
  } catch (err) {
    throw toChainError(err);
  }
  const kept = params.record && params.record.chainId === chainId ? params.record.venues : {};
  const record: DeploymentRecord = { chainId, venues: { ...kept } };
  const deployed: string[] = [];
  for (const deployer of params.venues) {
    const existing = record.venues[deployer.venue];
    let reason: VenueDeployReason = 'missing';
    if (existing && deployer.dependsOn?.some((v) => deployed.includes(v))) {
      reason = 'dependency redeployed';
    } else if (existing) {
      let live: boolean;
      try {
        live = await isVenueLive(publicClient, existing);
      } catch (err) {
        throw toChainError(err);
      }
      if (live) continue;
      reason = 'code gone';
    }
    if (!walletClient) {
      throw new AppError('INTERNAL', `the ${deployer.venue} venue is not deployed on chain ${chainId} and there is no OPERATOR_PRIVATE_KEY to deploy it with`);
    }
    params.onDeploy?.(deployer.venue, reason);
    record.venues[deployer.venue] = await deployer.deploy({ publicClient, walletClient, record, note: params.note });
    deployed.push(deployer.venue);
  }
  return { record, deployed };
}

