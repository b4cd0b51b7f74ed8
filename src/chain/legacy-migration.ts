/**
 * Deployments from before the proxies (release 0.1.0: every commit until 0.2.0, 374f31d's included)
 * move to new upgradeable contracts (docs/upgrades.md, "Deployments from before the proxies"). The
 * earlier contracts cannot be upgraded in place, so their state is carried over:
 *
 *   1. close   every open stock order is closed Canceled by the old router's operator: its lock
 *              returns to the user's free balance (the API shows reason MIGRATED);
 *   2. freeze  the old Cashier and Stocks take the owner as their router, so the old router (and
 *              any user calling it) can no longer move a balance;
 *   3. snapshot every account's cash, fees, pending queued operations, every holder's wallet and
 *              exchange balances (in base units), the split multipliers and refs, One Click
 *              delegations, the router's configuration, at one block;
 *   4. drain   the owner, as the old Cashier's router, takes the cash tokens out of it;
 *   5. deploy  the new venue behind proxies, its migration window open, order ids continuing;
 *   6. import  balances, fees, queued operations, holdings, delegations (each once per account:
 *              a rerun never credits twice);
 *   7. fund    the drained tokens go to the new Cashier (what the owner sent, read from the token's
 *              Transfer events: a donation to its address is never counted as funding);
 *   8. finish  the windows close; the Cashier refuses to close unless its cash covers all it owes;
 *   9. retire  every operator of the old router and Cashier is revoked;
 *  10. reconcile: per token, the new contracts hold at least what the old ones owed (a surplus is
 *              reported, never a reason to stop); what the migration credited equals the snapshot.
 *
 * The perpetual MarginVault moves the same way (legacy-vault-migration.ts): its operator pays the
 * vault's collateral to the new vault, whose totals and paid withdrawal ids are imported; a deposit
 * the engine never credited is paid back. The engine's own accounting (journal) does not move: only
 * the custody does. The reconciliation (legacy-reconciliation.ts) checks that the new contracts hold
 * at least what they owe; a surplus is reported. Every old operator is revoked at the end.
 *
 * Every step records what it did in a journal beside the deployment record before the next one
 * starts, so a run stopped at any point (kill -9 included) resumes where it stopped and is
 * idempotent; the journal is kept afterwards as the record of the migration.
 *
 * This module runs the steps in order and answers the new record; the parts are
 * legacy-migration-journal.ts (the journal and snapshot shapes), legacy-migration-context.ts (what
 * every step works with), legacy-stock-migration.ts with legacy-stock-snapshot.ts (the stock venue),
 * legacy-vault-migration.ts (the vault) and legacy-reconciliation.ts (the report). Every name callers
 * import from here is re-exported.
 */
import { BaseError, type Address } from 'viem';
import { APP_VERSION } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import { toChainError } from './chain-client.ts';
import type { ContractAddresses, Deployment, DeploymentRecord, VenueDeployment } from './deployment-file.ts';
import type { MigrateParams } from './legacy-migration-context.ts';
import { readMigrationJournal, writeMigrationJournal, type MigrationJournal } from './legacy-migration-journal.ts';
import { reconcile } from './legacy-reconciliation.ts';
import { migrateStockVenue } from './legacy-stock-migration.ts';
import { migratePerpVenue } from './legacy-vault-migration.ts';
import { handOverToTimelock } from './owner-actions.ts';

export { accountsSeen, CHUNK, mapChunked, send, type MigrateParams, type StepContext } from './legacy-migration-context.ts';
export {
  migrationJournalPath,
  readMigrationJournal,
  type CashAccount,
  type LateDeposit,
  type MigrationJournal,
  type Reconciliation,
  type StockHolder,
  type StockVenueSnapshot,
  type VaultSnapshot,
} from './legacy-migration-journal.ts';
// The vault's part (0.1.0 vault ABI, late deposits, the move) is legacy-vault-migration.ts.
export { LEGACY_VAULT_ABI, lateDepositReturnId, payFromLegacyVault, VAULT_MIGRATION_WITHDRAWAL_ID } from './legacy-vault-migration.ts';

/** The venues of a record that were deployed before the proxies (no `release`). */
export function legacyVenues(record: DeploymentRecord): string[] {
  return Object.entries(record.venues).filter(([, v]) => v.release === undefined).map(([name]) => name);
}

export interface MigrateResult {
  record: DeploymentRecord;
  journal: MigrationJournal;
  /** Old → new address of every contract that moved (lower case), for the database's restatement. */
  moved: Record<string, Address>;
}

/**
 * Moves every legacy venue of `record` to new upgradeable contracts. Resumable and idempotent; the
 * answer's record has the new sections (release, code) and the old contracts under `retired`.
 */
export async function migrateLegacyVenues(params: MigrateParams): Promise<MigrateResult> {
  const { publicClient, journalFile } = params;
  const say = (line: string) => params.onStep?.(line);
  const record = structuredClone(params.record);
  const legacy = legacyVenues(record);
  let journal = readMigrationJournal(journalFile);
  // A finished journal is the migration of this record already done (the process stopped before the
  // record was written): its result is answered again, nothing is sent.
  if (!journal || journal.chainId !== record.chainId) {
    journal = { chainId: record.chainId, fromRelease: '0.1.0', toRelease: APP_VERSION, startedAt: Date.now() };
  }
  // The chain first (an embedded chain's state file), then the journal: the record never runs ahead.
  const save = async () => {
    await params.durable?.();
    writeMigrationJournal(journalFile, journal!);
  };
  const moved: Record<string, Address> = {};
  try {
    if (legacy.includes('stock')) {
      const section = record.venues.stock as unknown as Omit<Deployment, 'chainId'>;
      journal.stock ??= { old: section.contracts };
      await save();
      const next = await migrateStockVenue({ ...params, journal, save, say });
      addMoves(moved, journal.stock.old as unknown as ContractAddresses, next.contracts as unknown as ContractAddresses);
      record.venues.stock = { ...(next as unknown as VenueDeployment), retired: [...(section as VenueDeployment).retired ?? [], { release: '0.1.0', retiredAt: journal.startedAt, contracts: journal.stock.old as unknown as ContractAddresses }] };
    }
    if (legacy.includes('perp')) {
      const section = record.venues.perp;
      journal.perp ??= { old: section.contracts };
      await save();
      const stockSection = record.venues.stock as unknown as Omit<Deployment, 'chainId'> | undefined;
      const next = await migratePerpVenue({ ...params, journal, save, say, collateralFallback: stockSection?.contracts.cashToken });
      addMoves(moved, journal.perp.old, next.contracts);
      record.venues.perp = { ...next, retired: [...(section.retired ?? []), { release: '0.1.0', retiredAt: journal.startedAt, contracts: journal.perp.old }] };
    }
    if (journal.finishedAt === undefined) {
      journal.reconciliation = await reconcile(publicClient, journal);
      const bad = journal.reconciliation.filter((r) => !r.ok);
      await save();
      if (bad.length > 0) {
        throw new AppError('INTERNAL', `migration: the reconciliation does not balance: ${bad.map((r) => `${r.what} before ${r.before} after ${r.after}`).join('; ')}`);
      }
      for (const r of journal.reconciliation) {
        say(r.surplus && r.surplus !== '0'
          ? `reconciled ${r.what}: ${r.before} owed, ${r.after} held: a surplus of ${r.surplus} (sent to its public address by someone; recorded in the journal${r.what.startsWith('cash') ? ', sweepable to the treasury through the timelock' : ''})`
          : `reconciled ${r.what}: ${r.before} before = ${r.after} after`);
      }
      journal.finishedAt = Date.now();
      await save();
    }
    // Migrated and reconciled: the new contracts pass to their venues' timelocks (docs/security.md,
    // "Owner and upgrader"). Idempotent: a resumed run finds them handed over. The delay is set here
    // only when asked; otherwise the next start sets it after its own configuration.
    const handOver = await handOverToTimelock({ publicClient, wallet: params.ownerWallet, record, delaySeconds: params.timelockDelayS ?? 0 });
    if (handOver.handedOver.length > 0) say(`owner and upgrader of ${handOver.handedOver.length} contract(s): the venues' timelocks`);
    return { record, journal, moved };
  } catch (err) {
    throw err instanceof BaseError ? toChainError(err) : err;
  }
}

function addMoves(moved: Record<string, Address>, old: ContractAddresses, next: ContractAddresses): void {
  for (const [name, value] of Object.entries(old)) {
    const fresh = next[name];
    if (typeof value === 'string' && typeof fresh === 'string' && value.toLowerCase() !== fresh.toLowerCase()) moved[value.toLowerCase()] = fresh;
    else if (typeof value === 'object' && typeof fresh === 'object') addMoves(moved, value, fresh);
  }
}

