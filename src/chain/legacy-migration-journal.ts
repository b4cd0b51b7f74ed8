/**
 * The legacy migration's journal (docs/upgrades.md, "Deployments from before the proxies"): what
 * each step of legacy-migration.ts did, the snapshots it took and the reconciliation it ended with,
 * written beside the deployment record before the next step starts, so that a run stopped anywhere
 * resumes where it stopped. Shapes and file only: the steps write it, the report reads it.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Address, Hex } from 'viem';
import type { ContractAddresses, Deployment, DeploymentContracts, VenueDeployment } from './deployment-file.ts';

export interface CashAccount {
  user: Address;
  free: string;
  locked: string;
}

export interface StockHolder {
  user: Address;
  walletBase: string;
  freeBase: string;
  lockedBase: string;
}

export interface StockVenueSnapshot {
  block: string;
  owner: Address;
  treasury: Address;
  creditBuffer: string;
  fees: string;
  tokens: Array<{ token: Address; held: string; enabled: boolean; decimals: number; minAmount: string; withdrawBuffer: string }>;
  accounts: CashAccount[];
  queued: Array<{ deposit: boolean; queueId: string; user: Address; token: Address; tokenAmount: string; musdAmount: string }>;
  nextOrderId: string;
  fee: { marketFeeBps: number; limitFeeBps: number };
  operators: Address[];
  stocks: Array<{ symbol: string; name: string; address: Address; multiplier: string; refs: Hex[]; totalSupply: string; holders: StockHolder[] }>;
  delegations: Array<{ user: Address; delegatee: Address; nonce: string }>;
}

export interface VaultSnapshot {
  block: string;
  held: string;
  accounts: Array<{ account: Address; deposited: string; withdrawn: string }>;
  paid: Hex[];
}

export interface Reconciliation {
  /** `cash USDC`, `stock AAPL`, `vault USDC`. */
  what: string;
  before: string;
  after: string;
  ok: boolean;
  /**
   * Tokens held beyond what is owed (a donation to the new contract's public address): reported,
   * never a reason to stop. The Cashier's is credited to the treasury by `cashierSurplusSweepCalls`
   * through the timelock; the vault's stays as reserves above the liabilities.
   */
  surplus?: string;
}

/** A deposit into the old vault the engine never credited (after `creditedThrough`), paid back to its depositor. */
export interface LateDeposit {
  account: Address;
  amount: string;
  block: string;
  txHash: Hex;
  logIndex: number;
  /** The old vault's withdrawal id that pays it back (`lateDepositReturnId`). */
  returnId: Hex;
}

/** The migration's journal: what each step did (docs/upgrades.md). */
export interface MigrationJournal {
  chainId: number;
  fromRelease: '0.1.0';
  toRelease: string;
  startedAt: number;
  finishedAt?: number;
  stock?: {
    old: DeploymentContracts;
    closedOrders?: string[];
    frozen?: boolean;
    snapshot?: StockVenueSnapshot;
    drained?: Record<string, string>;
    deployed?: Omit<Deployment, 'chainId'>;
    imported?: { cash?: boolean; queued?: boolean; fees?: boolean; stocks?: string[]; delegations?: boolean };
    funded?: boolean;
    finished?: boolean;
    /** Every operator of the old router and Cashier revoked. */
    retired?: boolean;
  };
  perp?: {
    old: ContractAddresses;
    /** The last block of the old vault's events the engine credited (its database); a deposit after it is late. */
    creditedThrough?: string;
    snapshot?: VaultSnapshot;
    /** What the engine's accounts own at the snapshot: its balance less the late deposits up to it. */
    owed?: string;
    deployed?: VenueDeployment;
    /** What the old vault paid the new one. */
    movedAmount?: string;
    moved?: boolean;
    imported?: boolean;
    finished?: boolean;
    /** Late deposits paid back to their depositors. */
    lateDeposits?: LateDeposit[];
    /** Every operator of the old vault revoked. */
    retired?: boolean;
  };
  reconciliation?: Reconciliation[];
}

export function migrationJournalPath(recordFile: string): string {
  return recordFile.replace(/\.json$/, '') + '.migration.json';
}

export function readMigrationJournal(file: string): MigrationJournal | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as MigrationJournal) : undefined;
}

/** Writes the journal whole (a temporary file renamed over it), so a crash never leaves half of it. */
export function writeMigrationJournal(file: string, journal: MigrationJournal): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(journal, null, 2)}\n`);
  renameSync(tmp, file);
}
