/**
 * The migration of venues deployed before the proxies, wired to the database (docs/upgrades.md):
 * the chain steps (src/chain/legacy-migration.ts) with the indexers brought up to the old
 * contracts' last events before they are frozen, the orders the migration closed marked MIGRATED,
 * and every row that names an old stock token restated onto its successor, before the deployment
 * record switches to the new contracts. `npm start` runs it on the embedded chain (or with
 * AUTO_UPGRADE=on); `tokex upgrade --apply` runs it anywhere.
 */
import type { Address, Hex } from 'viem';
import type { Logger } from '../lib/logger.ts';
import { APP_VERSION } from '../config/build-info.ts';
import type { ChainPublicClient, ChainWalletClient } from '../chain/chain-client.ts';
import { stockDeploymentOf } from '../chain/deploy-contracts.ts';
import { perpDeploymentOf } from '../chain/deploy-perp-venue.ts';
import { writeDeploymentRecord, type DeploymentRecord } from '../chain/deployment-file.ts';
import { legacyVenues, migrateLegacyVenues, migrationJournalPath, payFromLegacyVault, type MigrateParams, type MigrationJournal } from '../chain/legacy-migration.ts';
import { recordDeployedLayouts } from '../chain/upgrade-layout-check.ts';
import type { Db } from '../storage/database.ts';
import { setMeta } from '../storage/meta-store.ts';
import { createStockIndexer } from '../stock/indexer/stock-indexer.ts';
import { recordCloseReasons } from '../stock/store/order-reason-store.ts';
import { restateStockAddresses } from '../stock/store/venue-move-store.ts';
import { createPerpIndexer } from '../perp/indexer/perp-indexer.ts';
import { clearWithdrawalTxs, listOpenWithdrawals, setWithdrawalOutcome } from '../perp/store/withdrawal-store.ts';

/** The reason an order open at the migration shows (`history.reason`). */
export const MIGRATED_REASON = `MIGRATED: the venue moved to upgradeable contracts (tokex ${APP_VERSION}); the order was cancelled and its lock returned`;

/**
 * The role keys a migrated venue takes (docs/security.md, "Who holds which role"): the executor's
 * address operates the stock venue, the perp operator's the vault and the registry, the guardian
 * pauses both. A role whose address this process does not know gets no grant now (its own role's
 * start grants it through the timelock), never the old contracts' operators or the admin key.
 */
export function migrationRoles(addressOf: (role: 'executor' | 'perp-operator') => Address | undefined, guardian: Address | undefined): NonNullable<MigrateParams['roles']> {
  const executor = addressOf('executor');
  const perpOperator = addressOf('perp-operator');
  return { stock: executor ? [executor] : [], perp: perpOperator ? [perpOperator] : [], ...(guardian ? { guardian } : {}) };
}

export interface LegacyMigrationResult {
  record: DeploymentRecord;
  journal: MigrationJournal;
}

/**
 * Migrates every legacy venue of `record` and writes the new record to `file`. Resumable and
 * idempotent (the journal beside the record says where a stopped run was); a record without legacy
 * venues is answered as it is.
 */
export async function migrateLegacyDeployment(params: {
  db: Db;
  publicClient: ChainPublicClient;
  ownerWallet: ChainWalletClient;
  record: DeploymentRecord;
  file: string;
  logger: Logger;
  onStep?(line: string): void;
  /** The embedded anvil's `flushState`: the chain is made durable before each step is recorded. */
  durable?(): Promise<void>;
  /** The new vault's cap on payments per period (config PERP_WITHDRAWAL_CAP_USDC). */
  withdrawalCap?: { amount: bigint; periodSeconds: number };
  /** The configured role keys the new contracts take (MigrateParams.roles). */
  roles?: MigrateParams['roles'];
}): Promise<LegacyMigrationResult | undefined> {
  const { db, publicClient, record, file, logger } = params;
  const venues = legacyVenues(record);
  if (venues.length === 0) return undefined;
  const say = (line: string) => {
    logger.info({ step: line }, 'migration step done');
    params.onStep?.(line);
  };
  const oldStock = stockDeploymentOf(record);
  const oldPerp = perpDeploymentOf(record);
  const client = publicClient as unknown as Parameters<typeof createStockIndexer>[0]['publicClient'];
  const result = await migrateLegacyVenues({
    publicClient,
    ownerWallet: params.ownerWallet,
    record,
    journalFile: migrationJournalPath(file),
    onStep: say,
    durable: params.durable,
    withdrawalCap: params.withdrawalCap,
    roles: params.roles,
    async afterOrdersClosed(closed) {
      if (!oldStock || !venues.includes('stock')) return;
      // Written before the indexer folds the closes, so the orders read MIGRATED from the first look.
      if (closed.length > 0) await recordCloseReasons(db, closed.map((orderId) => ({ orderId, status: 'Canceled' as const, reason: MIGRATED_REASON, decidedAt: Date.now() })));
      const indexer = createStockIndexer({ db, publicClient: client, deployment: oldStock, logger });
      // The head now, the closes just mined included (viem answers a block number up to one polling
      // interval old otherwise).
      const head = await publicClient.getBlockNumber({ cacheTime: 0 });
      await indexer.waitForBlock(head, 120_000);
      say(`stock: the database has the old contracts' events up to block ${head} (${closed.length} order(s) marked MIGRATED)`);
    },
    async afterVaultMoved() {
      // A payment signed for the old vault and not landed: the old vault now holds nothing, so it
      // cannot pay; the row is PENDING again and the withdrawal task signs it for the new vault.
      for (const w of await listOpenWithdrawals(db, 10_000)) {
        if (w.status !== 'SENT' || w.outcome !== null) continue;
        const landed = await Promise.all(w.txVersions.map((v) => publicClient.getTransactionReceipt({ hash: v.hash as `0x${string}` }).then((r) => r.status === 'success', () => false)));
        if (landed.some(Boolean)) continue; // paid by the old vault: the task records it
        await clearWithdrawalTxs(db, w.withdrawalId, 'the venue moved to a new vault (tokex upgrade): the payment is signed again for it', Date.now());
        say(`perp: withdrawal ${w.withdrawalId} will be paid by the new vault`);
      }
    },
    async beforeVaultMoved() {
      if (!oldPerp || !venues.includes('perp')) return;
      // Withdrawals the old engine reserved and did not pay yet were asked under 0.1.0's rules, with
      // no wallet signature, which the new vault requires: the old vault pays them now, before its
      // collateral moves, and the task settles them as paid (nothing waits, nothing is lost).
      for (const w of await listOpenWithdrawals(db, 10_000)) {
        if (w.signed !== null || w.outcome !== null) continue;
        const paid = await payFromLegacyVault({
          publicClient,
          ownerWallet: params.ownerWallet,
          vault: oldPerp.contracts.marginVault,
          account: w.account as Address,
          amount: w.amount,
          withdrawalId: w.withdrawalId as Hex,
          fromBlock: BigInt(oldPerp.firstBlockNumber ?? oldPerp.blockNumber),
        });
        await setWithdrawalOutcome(db, w.withdrawalId, { outcome: 'PAID', txHash: paid?.txHash ?? null, blockNumber: paid === undefined ? null : Number(paid.blockNumber), reason: null }, Date.now());
        say(`perp: pending withdrawal ${w.withdrawalId} paid by the old vault${paid ? ` (${paid.txHash})` : ''}`);
      }
      const indexer = createPerpIndexer({ db, publicClient: client, deployment: oldPerp, logger });
      // The head now, the payments just mined included.
      const head = await publicClient.getBlockNumber({ cacheTime: 0 });
      await indexer.waitForBlock(head, 120_000);
      // The block the engine's credits end at: a deposit into the old vault after it is never
      // indexed (the indexer follows the new vault from here), so the migration pays it back.
      const through = (await indexer.checkpoint())?.number ?? head;
      say(`perp: the database has the old vault's events up to block ${through}`);
      return through;
    },
  });
  const counts = await restateStockAddresses(db, result.moved as Record<string, Address>);
  say(`database: stock rows restated onto the new tokens (${Object.entries(counts).map(([t, n]) => `${t} ${n}`).join(', ')})`);
  await setMeta(db, `migration:${result.journal.startedAt}`, JSON.stringify({ from: result.journal.fromRelease, to: result.journal.toRelease, finishedAt: result.journal.finishedAt, reconciliation: result.journal.reconciliation }));
  await params.durable?.();
  await writeDeploymentRecord(file, result.record);
  try {
    recordDeployedLayouts(result.record, file);
  } catch (err) {
    logger.warn({ err }, 'the storage layouts of the new contracts could not be noted');
  }
  say(`record: ${file} names the new contracts (release ${APP_VERSION}); the old ones are listed under retired`);
  return { record: result.record, journal: result.journal };
}
