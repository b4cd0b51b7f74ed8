/**
 * The payment record of each perp withdrawal (`perp_withdrawals`, migration 0013; docs/perp-api.md
 * "Withdrawals"). The engine's journalled reservation decides whether there is money to pay; this
 * row records how it is being paid, so that a restarted worker follows what it already signed
 * instead of paying twice.
 *
 * Life of a row:
 *
 *   REQUESTED  the API's note, written before it asks the engine (it carries the client's id);
 *              deleted when the engine refuses, never shown
 *   PENDING    the engine reserved the amount (written by the API after the answer, or by the
 *              worker when it finds a reservation without a row)
 *   SENT       a payment is signed (recorded before it is broadcast: recordWithdrawalTx)
 *   outcome    PAID or FAILED decided (setWithdrawalOutcome), then told to the engine
 *   COMPLETED | FAILED  once the engine settled it (finishWithdrawal)
 *
 * Amounts are integer strings of micro-USD (= collateral-token units).
 */
import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { listPage } from '../../storage/list-query.ts';
import type { PerpWithdrawalsTable } from '../../storage/schema.ts';

export type WithdrawalRowStatus = 'REQUESTED' | 'PENDING' | 'SENT' | 'COMPLETED' | 'FAILED';
/** What the API shows (REQUESTED rows are never shown). */
export type WithdrawalStatus = Exclude<WithdrawalRowStatus, 'REQUESTED'>;
export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PENDING', 'SENT', 'COMPLETED', 'FAILED'];
export type WithdrawalOutcome = 'PAID' | 'FAILED';

/** A signed version of the payment transaction (the sender's SignedTx). */
export interface WithdrawalTxVersion {
  hash: `0x${string}`;
  raw: `0x${string}`;
  nonce: number;
}

export interface WithdrawalRecord {
  withdrawalId: string;
  account: string;
  clientWithdrawalId: string | null;
  amount: bigint;
  status: WithdrawalRowStatus;
  outcome: WithdrawalOutcome | null;
  txHash: string | null;
  txVersions: WithdrawalTxVersion[];
  blockNumber: number | null;
  reason: string | null;
  /** The wallet's signed request, which the vault pays against (null on rows from before 0.2.0). */
  signed: SignedWithdrawal | null;
  createdAt: number;
  updatedAt: number;
}

export interface SignedWithdrawal {
  recipient: string;
  /** Unix seconds. */
  deadline: number;
  signature: `0x${string}`;
}

function fromRow(r: Selectable<PerpWithdrawalsTable>): WithdrawalRecord {
  return {
    withdrawalId: r.withdrawal_id,
    account: r.account,
    clientWithdrawalId: r.client_withdrawal_id,
    amount: BigInt(r.amount),
    status: r.status as WithdrawalRowStatus,
    outcome: r.outcome as WithdrawalOutcome | null,
    txHash: r.tx_hash,
    txVersions: JSON.parse(r.tx_versions) as WithdrawalTxVersion[],
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    reason: r.reason,
    signed:
      r.signature === null || r.deadline === null || r.recipient === null
        ? null
        : { recipient: r.recipient, deadline: Number(r.deadline), signature: r.signature as `0x${string}` },
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export interface NewWithdrawal {
  withdrawalId: string;
  account: string;
  clientWithdrawalId: string | null;
  amount: bigint;
  createdAt: number;
  /** Present on the API's note; the worker's rows for a reservation without one have none. */
  signed?: SignedWithdrawal;
}

function insertRow(db: DbExecutor, w: NewWithdrawal, status: WithdrawalRowStatus, now: number) {
  return kyselyOf(db)
    .insertInto('perp_withdrawals')
    .values({
      withdrawal_id: w.withdrawalId.toLowerCase(),
      account: w.account.toLowerCase(),
      client_withdrawal_id: w.clientWithdrawalId,
      amount: w.amount.toString(),
      status,
      outcome: null,
      tx_hash: null,
      tx_versions: '[]',
      block_number: null,
      reason: null,
      signature: w.signed?.signature ?? null,
      deadline: w.signed?.deadline ?? null,
      recipient: w.signed?.recipient.toLowerCase() ?? null,
      created_at: w.createdAt,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('withdrawal_id').doNothing())
    .execute();
}

/**
 * The API's note before it asks the engine: carries the client's id and the wallet's signature. A
 * row past REQUESTED is left as it is. A REQUESTED row of the same amount (an earlier attempt that
 * never reached the engine, or whose answer was lost) takes this attempt's signature: both are the
 * wallet's for this very withdrawal, and the newer deadline is the one still ahead, where the
 * first one's could run out before the payment and fail it.
 */
export async function insertWithdrawalIntent(db: DbExecutor, w: NewWithdrawal, now: number): Promise<void> {
  await insertRow(db, w, 'REQUESTED', now);
  if (w.signed === undefined) return;
  await kyselyOf(db)
    .updateTable('perp_withdrawals')
    .set({ signature: w.signed.signature, deadline: w.signed.deadline, recipient: w.signed.recipient.toLowerCase(), updated_at: now })
    .where('withdrawal_id', '=', w.withdrawalId.toLowerCase())
    .where('status', '=', 'REQUESTED')
    .where('amount', '=', w.amount.toString())
    .where('deadline', '<', w.signed.deadline)
    .execute();
}

/** The engine refused: the note goes (a row past REQUESTED is never deleted). */
export async function deleteWithdrawalIntent(db: DbExecutor, withdrawalId: string): Promise<void> {
  await kyselyOf(db).deleteFrom('perp_withdrawals').where('withdrawal_id', '=', withdrawalId.toLowerCase()).where('status', '=', 'REQUESTED').execute();
}

/**
 * The engine holds the reservation `w` (its amount and time are the engine's): the row exists and is
 * at least PENDING afterwards; a client id fills one the row lacks. Answers the row.
 */
export async function recordWithdrawalReserved(db: DbExecutor, w: NewWithdrawal, now: number): Promise<WithdrawalRecord> {
  const id = w.withdrawalId.toLowerCase();
  const k = kyselyOf(db);
  await insertRow(db, w, 'PENDING', now);
  await k
    .updateTable('perp_withdrawals')
    .set({ status: 'PENDING', amount: w.amount.toString(), created_at: w.createdAt, updated_at: now })
    .where('withdrawal_id', '=', id)
    .where('status', '=', 'REQUESTED')
    .execute();
  if (w.clientWithdrawalId !== null) {
    await k
      .updateTable('perp_withdrawals')
      .set({ client_withdrawal_id: w.clientWithdrawalId, updated_at: now })
      .where('withdrawal_id', '=', id)
      .where('client_withdrawal_id', 'is', null)
      .execute();
  }
  return (await getWithdrawal(db, id)) as WithdrawalRecord;
}

export async function getWithdrawal(db: DbExecutor, withdrawalId: string): Promise<WithdrawalRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('perp_withdrawals').selectAll().where('withdrawal_id', '=', withdrawalId.toLowerCase()).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function getWithdrawals(db: DbExecutor, withdrawalIds: readonly string[]): Promise<Map<string, WithdrawalRecord>> {
  const out = new Map<string, WithdrawalRecord>();
  const ids = [...new Set(withdrawalIds.map((i) => i.toLowerCase()))];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await kyselyOf(db).selectFrom('perp_withdrawals').selectAll().where('withdrawal_id', 'in', ids.slice(i, i + 500)).execute();
    for (const r of rows) out.set(r.withdrawal_id, fromRow(r));
  }
  return out;
}

/**
 * A signed version of the payment, recorded before it is broadcast (the sender's onSigned hook):
 * appended to the versions, the row SENT with this hash. One writer per row (the worker), so the
 * read-modify-write needs no lock.
 */
export async function recordWithdrawalTx(db: DbExecutor, withdrawalId: string, tx: WithdrawalTxVersion, now: number): Promise<void> {
  const id = withdrawalId.toLowerCase();
  const row = await getWithdrawal(db, id);
  if (row === undefined) throw new Error(`withdrawal ${id}: no row to record a transaction on`);
  const versions = [...row.txVersions.filter((v) => v.hash !== tx.hash), { hash: tx.hash, raw: tx.raw, nonce: tx.nonce }];
  await kyselyOf(db)
    .updateTable('perp_withdrawals')
    .set({ status: 'SENT', tx_hash: tx.hash, tx_versions: JSON.stringify(versions), updated_at: now })
    .where('withdrawal_id', '=', id)
    .execute();
}

/**
 * The recorded transactions will never land (their nonce went to another transaction): the row is
 * PENDING again, with nothing signed, and `reason` saying what happened.
 */
export async function clearWithdrawalTxs(db: DbExecutor, withdrawalId: string, reason: string, now: number): Promise<void> {
  await kyselyOf(db)
    .updateTable('perp_withdrawals')
    .set({ status: 'PENDING', tx_hash: null, tx_versions: '[]', reason, updated_at: now })
    .where('withdrawal_id', '=', withdrawalId.toLowerCase())
    .where('outcome', 'is', null)
    .execute();
}

/** The payment's outcome, decided: kept before the engine is told, so a restart tells it the same. */
export async function setWithdrawalOutcome(
  db: DbExecutor,
  withdrawalId: string,
  o: { outcome: WithdrawalOutcome; txHash: string | null; blockNumber: number | null; reason: string | null },
  now: number,
): Promise<void> {
  await kyselyOf(db)
    .updateTable('perp_withdrawals')
    .set({ outcome: o.outcome, tx_hash: o.txHash, block_number: o.blockNumber, reason: o.reason, updated_at: now })
    .where('withdrawal_id', '=', withdrawalId.toLowerCase())
    .where('outcome', 'is', null)
    .execute();
}

/** The engine has settled it: the final status (COMPLETED for PAID). */
export async function finishWithdrawal(db: DbExecutor, withdrawalId: string, engineStatus: WithdrawalOutcome, now: number): Promise<void> {
  await kyselyOf(db)
    .updateTable('perp_withdrawals')
    .set({ status: engineStatus === 'PAID' ? 'COMPLETED' : 'FAILED', outcome: engineStatus, updated_at: now })
    .where('withdrawal_id', '=', withdrawalId.toLowerCase())
    .where('status', 'in', ['PENDING', 'SENT', 'REQUESTED'])
    .execute();
}

/** Rows not final yet (PENDING or SENT), oldest first: the worker reconciles those the engine settled. */
export async function listOpenWithdrawals(db: DbExecutor, limit: number): Promise<WithdrawalRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('perp_withdrawals')
    .selectAll()
    .where('status', 'in', ['PENDING', 'SENT'])
    .orderBy('created_at')
    .orderBy('withdrawal_id')
    .limit(Math.max(0, limit))
    .execute();
  return rows.map(fromRow);
}

/** A page of an account's withdrawals, newest first, with the total (REQUESTED notes excluded). */
export async function listWithdrawalsPage(
  db: DbExecutor,
  q: { account: string; offset: number; limit: number; status?: WithdrawalStatus; startTime?: number; endTime?: number },
): Promise<{ total: number; rows: WithdrawalRecord[] }> {
  const base = kyselyOf(db).selectFrom('perp_withdrawals').where('account', '=', q.account.toLowerCase()).where('status', '<>', 'REQUESTED');
  return listPage(base, { filters: [['status', q.status]], time: 'created_at', newestFirst: ['created_at', 'withdrawal_id'] }, q, fromRow);
}
