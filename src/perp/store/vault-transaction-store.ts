/**
 * Wallet-signed vault transactions (approve, deposit) the perp API broadcast and follows
 * (`perp_vault_txs`, migration 0010). Amounts are integer strings of collateral-token units.
 */
import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import type { PerpVaultTxsTable } from '../../storage/schema.ts';

export type VaultTransactionKind = 'approve' | 'deposit';
export type VaultTransactionStatus = 'pending' | 'mined' | 'reverted';

export interface VaultTransactionRecord {
  txHash: string;
  kind: VaultTransactionKind;
  /** Lower-case address of the signing wallet. */
  account: string;
  amount: bigint;
  apiKey: string;
  nonce: number;
  status: VaultTransactionStatus;
  blockNumber: number | null;
  submittedAt: number;
  updatedAt: number;
}

function fromRow(r: Selectable<PerpVaultTxsTable>): VaultTransactionRecord {
  return {
    txHash: r.tx_hash,
    kind: r.kind as VaultTransactionKind,
    account: r.account,
    amount: BigInt(r.amount),
    apiKey: r.api_key,
    nonce: Number(r.nonce),
    status: r.status as VaultTransactionStatus,
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    submittedAt: Number(r.submitted_at),
    updatedAt: Number(r.updated_at),
  };
}

/** Records a broadcast transaction; a hash already recorded is left as it is. */
export async function insertVaultTransaction(db: DbExecutor, t: VaultTransactionRecord): Promise<void> {
  await kyselyOf(db)
    .insertInto('perp_vault_txs')
    .values({
      tx_hash: t.txHash.toLowerCase(),
      kind: t.kind,
      account: t.account.toLowerCase(),
      amount: t.amount.toString(),
      api_key: t.apiKey,
      nonce: t.nonce,
      status: t.status,
      block_number: t.blockNumber,
      submitted_at: t.submittedAt,
      updated_at: t.updatedAt,
    })
    .onConflict((oc) => oc.column('tx_hash').doNothing())
    .execute();
}

export async function setVaultTransactionStatus(db: DbExecutor, txHash: string, status: VaultTransactionStatus, blockNumber: number | null, now: number): Promise<void> {
  await kyselyOf(db)
    .updateTable('perp_vault_txs')
    .set({ status, block_number: blockNumber, updated_at: now })
    .where('tx_hash', '=', txHash.toLowerCase())
    .execute();
}

export async function getVaultTransaction(db: DbExecutor, txHash: string): Promise<VaultTransactionRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('perp_vault_txs').selectAll().where('tx_hash', '=', txHash.toLowerCase()).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}
