/**
 * The corporate actions the venue applies on chain and the dividend payouts they make (migration
 * 0023-corporate-actions). One action per symbol and ex-date: the table's unique key refuses a
 * second, whatever process adds it. The tables are this module's own: it types them here rather
 * than in the shared schema.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Hex } from 'viem';
import { ValidationError } from '../../errors/app-error.ts';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { isUniqueViolation } from '../../storage/storage-errors.ts';
import type { CorporateAction, CorporateActionType } from '../../marketdata/corporate-actions.ts';

export type CorporateActionStatus = 'scheduled' | 'applied' | 'failed';
export type CorporateActionSource = 'cli' | 'file';
export type PayoutStatus = 'pending' | 'paid';

interface CorporateActionsTable {
  action_id: string;
  symbol: string;
  type: string;
  ex_date: string;
  record_date: string | null;
  ratio: string | null;
  amount: string | null;
  currency: string | null;
  source: string;
  status: string;
  reason: string | null;
  stock_address: string | null;
  record_block: string | number | bigint | null;
  withholding_bps: number | null;
  shares_of_record: string | null;
  gross_amount: string | null;
  withholding_amount: string | null;
  net_amount: string | null;
  remainder_units: string | null;
  holders: number | null;
  merkle_root: string | null;
  distributor: string | null;
  distribution_id: string | null;
  tx_hash: string | null;
  created_at: string | number | bigint;
  updated_at: string | number | bigint;
  applied_at: string | number | bigint | null;
}

interface DividendPayoutsTable {
  operation_id: string;
  action_id: string;
  user_address: string;
  stock_address: string;
  shares: string;
  amount: string;
  proof: string;
  status: string;
  tx_hash: string | null;
  block_number: string | number | bigint | null;
  created_at: string | number | bigint;
  updated_at: string | number | bigint;
  paid_at: string | number | bigint | null;
}

interface Tables {
  corporate_actions: CorporateActionsTable;
  dividend_payouts: DividendPayoutsTable;
}

const k = (db: DbExecutor) => kyselyOf(db) as unknown as Kysely<Tables>;
const num = (v: string | number | bigint | null): number | null => (v === null ? null : Number(v));

export interface CorporateActionRecord {
  actionId: string;
  symbol: string;
  type: CorporateActionType;
  exDate: string;
  recordDate: string | null;
  ratio: string | null;
  amount: string | null;
  currency: string | null;
  source: CorporateActionSource;
  status: CorporateActionStatus;
  /** Why it failed (a secret-free sentence). */
  reason: string | null;
  stockAddress: string | null;
  recordBlock: number | null;
  withholdingBps: number | null;
  sharesOfRecord: string | null;
  grossAmount: string | null;
  withholdingAmount: string | null;
  netAmount: string | null;
  remainderUnits: string | null;
  holders: number | null;
  merkleRoot: string | null;
  distributor: string | null;
  distributionId: string | null;
  /** The transaction that applied it (a dividend: the distributor's funding and root). */
  txHash: string | null;
  createdAt: number;
  updatedAt: number;
  appliedAt: number | null;
}

export interface DividendPayoutRecord {
  operationId: string;
  actionId: string;
  userAddress: string;
  stockAddress: string;
  shares: string;
  amount: string;
  proof: Hex[];
  status: PayoutStatus;
  txHash: string | null;
  blockNumber: number | null;
  createdAt: number;
  updatedAt: number;
  paidAt: number | null;
}

/** `AAPL-2026-11-26`: one action per symbol and ex-date. */
export function actionIdOf(symbol: string, exDate: string): string {
  return `${symbol.toUpperCase()}-${exDate}`;
}

/** The DIVIDEND operation id of a holder's payout: the action and the holder. */
export function payoutIdOf(actionId: string, account: string): string {
  return `dividend-${actionId}-${account.toLowerCase()}`;
}

function actionFromRow(r: Selectable<CorporateActionsTable>): CorporateActionRecord {
  return {
    actionId: r.action_id,
    symbol: r.symbol,
    type: r.type as CorporateActionType,
    exDate: r.ex_date,
    recordDate: r.record_date,
    ratio: r.ratio,
    amount: r.amount,
    currency: r.currency,
    source: r.source as CorporateActionSource,
    status: r.status as CorporateActionStatus,
    reason: r.reason,
    stockAddress: r.stock_address,
    recordBlock: num(r.record_block),
    withholdingBps: r.withholding_bps === null ? null : Number(r.withholding_bps),
    sharesOfRecord: r.shares_of_record,
    grossAmount: r.gross_amount,
    withholdingAmount: r.withholding_amount,
    netAmount: r.net_amount,
    remainderUnits: r.remainder_units,
    holders: r.holders === null ? null : Number(r.holders),
    merkleRoot: r.merkle_root,
    distributor: r.distributor,
    distributionId: r.distribution_id,
    txHash: r.tx_hash,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    appliedAt: num(r.applied_at),
  };
}

function payoutFromRow(r: Selectable<DividendPayoutsTable>): DividendPayoutRecord {
  return {
    operationId: r.operation_id,
    actionId: r.action_id,
    userAddress: r.user_address,
    stockAddress: r.stock_address,
    shares: r.shares,
    amount: r.amount,
    proof: JSON.parse(r.proof) as Hex[],
    status: r.status as PayoutStatus,
    txHash: r.tx_hash,
    blockNumber: num(r.block_number),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    paidAt: num(r.paid_at),
  };
}

export interface NewCorporateAction extends CorporateAction {
  source: CorporateActionSource;
  stockAddress?: string;
}

/**
 * Inserts a `scheduled` action. A second action on the symbol's ex-date is refused naming the
 * field (the unique key decides, so two processes adding at once cannot both succeed). `createdAt`
 * (default `now`): a chain's copy of a run-time action keeps the moment the action was added, which
 * fixes a split's moment and a dividend's record block (docs/corporate-actions.md, "Several chains").
 */
export async function insertCorporateAction(db: DbExecutor, a: NewCorporateAction, now: number, createdAt = now): Promise<CorporateActionRecord> {
  const actionId = actionIdOf(a.symbol, a.exDate);
  try {
    await k(db)
      .insertInto('corporate_actions')
      .values({
        action_id: actionId,
        symbol: a.symbol,
        type: a.type,
        ex_date: a.exDate,
        record_date: a.recordDate ?? null,
        ratio: a.ratio ?? null,
        amount: a.amount ?? null,
        currency: a.currency ?? null,
        source: a.source,
        status: 'scheduled',
        reason: null,
        stock_address: a.stockAddress?.toLowerCase() ?? null,
        record_block: null,
        withholding_bps: null,
        shares_of_record: null,
        gross_amount: null,
        withholding_amount: null,
        net_amount: null,
        remainder_units: null,
        holders: null,
        merkle_root: null,
        distributor: null,
        distribution_id: null,
        tx_hash: null,
        created_at: createdAt,
        updated_at: now,
        applied_at: null,
      })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError('exDate', `${a.symbol} already has a corporate action on ${a.exDate}`, { cause: err });
    throw err;
  }
  return (await getCorporateAction(db, actionId)) as CorporateActionRecord;
}

export async function getCorporateAction(db: DbExecutor, actionId: string): Promise<CorporateActionRecord | undefined> {
  const row = await k(db).selectFrom('corporate_actions').selectAll().where('action_id', '=', actionId).executeTakeFirst();
  return row ? actionFromRow(row) : undefined;
}

/** Every stored action (of `symbol` when given), newest ex-date first, then by symbol. */
export async function listCorporateActions(db: DbExecutor, symbol?: string): Promise<CorporateActionRecord[]> {
  let q = k(db).selectFrom('corporate_actions').selectAll();
  if (symbol !== undefined) q = q.where('symbol', '=', symbol.toUpperCase());
  const rows = await q.orderBy('ex_date', 'desc').orderBy('symbol').execute();
  return rows.map(actionFromRow);
}

/**
 * The actions added at run time (`tokex corporate-actions add`, source `cli`), oldest first: on the
 * first chain's store, what every other chain takes up (docs/corporate-actions.md, "Several chains").
 */
export async function listRunTimeActions(db: DbExecutor): Promise<CorporateActionRecord[]> {
  const rows = await k(db).selectFrom('corporate_actions').selectAll().where('source', '=', 'cli').orderBy('created_at').orderBy('action_id').execute();
  return rows.map(actionFromRow);
}

/**
 * Stored actions whose `updated_at` is after `afterMs`, in (updated_at, action_id) order: what the
 * `corporateActions` stream polls for (every change of state, totals or transaction sets it).
 */
export async function listActionsUpdatedAfter(db: DbExecutor, afterMs: number): Promise<CorporateActionRecord[]> {
  const rows = await k(db).selectFrom('corporate_actions').selectAll().where('updated_at', '>', afterMs).orderBy('updated_at').orderBy('action_id').execute();
  return rows.map(actionFromRow);
}

/** Scheduled actions whose ex-date is `onOrBefore` or earlier, oldest first. */
export async function listDueActions(db: DbExecutor, onOrBefore: string): Promise<CorporateActionRecord[]> {
  const rows = await k(db)
    .selectFrom('corporate_actions')
    .selectAll()
    .where('status', '=', 'scheduled')
    .where('ex_date', '<=', onOrBefore)
    .orderBy('ex_date')
    .orderBy('symbol')
    .execute();
  return rows.map(actionFromRow);
}

/** What a dividend's computation fixed: written once, with its payouts, in one transaction. */
export interface DividendRecordFacts {
  stockAddress: string;
  recordBlock: number;
  withholdingBps: number;
  sharesOfRecord: bigint;
  grossAmount: bigint;
  withholdingAmount: bigint;
  netAmount: bigint;
  remainderUnits: bigint;
  merkleRoot: Hex;
  distributor: string;
  payouts: ReadonlyArray<{ account: string; shares: bigint; amount: bigint; proof: readonly Hex[] }>;
}

export async function recordDividendComputation(db: DbExecutor, actionId: string, f: DividendRecordFacts, now: number): Promise<void> {
  await kyselyOf(db).transaction().execute(async (tx) => {
    const t = tx as unknown as Kysely<Tables>;
    await t
      .updateTable('corporate_actions')
      .set({
        stock_address: f.stockAddress.toLowerCase(),
        record_block: f.recordBlock,
        withholding_bps: f.withholdingBps,
        shares_of_record: f.sharesOfRecord.toString(),
        gross_amount: f.grossAmount.toString(),
        withholding_amount: f.withholdingAmount.toString(),
        net_amount: f.netAmount.toString(),
        remainder_units: f.remainderUnits.toString(),
        holders: f.payouts.length,
        merkle_root: f.merkleRoot,
        distributor: f.distributor.toLowerCase(),
        updated_at: now,
      })
      .where('action_id', '=', actionId)
      .execute();
    const rows = f.payouts.map((p) => ({
      operation_id: payoutIdOf(actionId, p.account),
      action_id: actionId,
      user_address: p.account.toLowerCase(),
      stock_address: f.stockAddress.toLowerCase(),
      shares: p.shares.toString(),
      amount: p.amount.toString(),
      proof: JSON.stringify(p.proof),
      status: 'pending',
      tx_hash: null,
      block_number: null,
      created_at: now,
      updated_at: now,
      paid_at: null,
    }));
    for (let i = 0; i < rows.length; i += 200) await t.insertInto('dividend_payouts').values(rows.slice(i, i + 200)).execute();
  });
}

export async function recordDistribution(db: DbExecutor, actionId: string, distributionId: bigint, txHash: string, now: number): Promise<void> {
  await k(db)
    .updateTable('corporate_actions')
    .set({ distribution_id: distributionId.toString(), tx_hash: txHash.toLowerCase(), updated_at: now })
    .where('action_id', '=', actionId)
    .execute();
}

/** A split applied on chain by transaction `txHash`. */
export async function markSplitApplied(db: DbExecutor, actionId: string, txHash: string, now: number): Promise<void> {
  await k(db)
    .updateTable('corporate_actions')
    .set({ status: 'applied', reason: null, tx_hash: txHash.toLowerCase(), applied_at: now, updated_at: now })
    .where('action_id', '=', actionId)
    .execute();
}

export async function markActionApplied(db: DbExecutor, actionId: string, now: number): Promise<void> {
  await k(db).updateTable('corporate_actions').set({ status: 'applied', reason: null, applied_at: now, updated_at: now }).where('action_id', '=', actionId).execute();
}

export async function markActionFailed(db: DbExecutor, actionId: string, reason: string, now: number): Promise<void> {
  await k(db).updateTable('corporate_actions').set({ status: 'failed', reason, updated_at: now }).where('action_id', '=', actionId).execute();
}

// ------------------------------------------------------------------ payouts

export async function listPendingPayouts(db: DbExecutor, actionId: string, limit: number): Promise<DividendPayoutRecord[]> {
  const rows = await k(db)
    .selectFrom('dividend_payouts')
    .selectAll()
    .where('action_id', '=', actionId)
    .where('status', '=', 'pending')
    .orderBy('user_address')
    .limit(limit)
    .execute();
  return rows.map(payoutFromRow);
}

export async function listPayoutsOfAction(db: DbExecutor, actionId: string): Promise<DividendPayoutRecord[]> {
  const rows = await k(db).selectFrom('dividend_payouts').selectAll().where('action_id', '=', actionId).orderBy('user_address').execute();
  return rows.map(payoutFromRow);
}

/**
 * Payouts paid after `(afterMs, afterId)` in (updated_at, operation_id) order, at most `limit`, each
 * with its action: what the `operations` stream publishes as they are paid.
 */
export async function listPayoutsPaidAfter(
  db: DbExecutor,
  after: { updatedAt: number; operationId: string },
  limit: number,
): Promise<Array<{ payout: DividendPayoutRecord; action: CorporateActionRecord }>> {
  const rows = await k(db)
    .selectFrom('dividend_payouts')
    .selectAll()
    .where('status', '=', 'paid')
    .where((eb) => eb.or([eb('updated_at', '>', after.updatedAt), eb.and([eb('updated_at', '=', after.updatedAt), eb('operation_id', '>', after.operationId)])]))
    .orderBy('updated_at')
    .orderBy('operation_id')
    .limit(limit)
    .execute();
  const payouts = rows.map(payoutFromRow);
  const actions = new Map<string, CorporateActionRecord>();
  for (const id of new Set(payouts.map((p) => p.actionId))) {
    const a = await getCorporateAction(db, id);
    if (a !== undefined) actions.set(id, a);
  }
  return payouts.flatMap((payout) => {
    const action = actions.get(payout.actionId);
    return action === undefined ? [] : [{ payout, action }];
  });
}

/**
 * The last payout paid in (updated_at, operation_id) order, as {@link listPayoutsPaidAfter}'s cursor
 * (the `operations` streams' seed holds every payout paid up to it); undefined when none is.
 */
export async function lastPaidPayout(db: DbExecutor): Promise<{ updatedAt: number; operationId: string } | undefined> {
  const row = await k(db)
    .selectFrom('dividend_payouts')
    .select(['updated_at', 'operation_id'])
    .where('status', '=', 'paid')
    .orderBy('updated_at', 'desc')
    .orderBy('operation_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { updatedAt: Number(row.updated_at), operationId: row.operation_id } : undefined;
}

/** `account`'s payouts, newest first (of `actionIds` when given). */
export async function listPayoutsOfUser(db: DbExecutor, account: string, actionIds?: readonly string[]): Promise<DividendPayoutRecord[]> {
  let q = k(db).selectFrom('dividend_payouts').selectAll().where('user_address', '=', account.toLowerCase());
  if (actionIds !== undefined) {
    if (actionIds.length === 0) return [];
    q = q.where('action_id', 'in', [...actionIds]);
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('action_id', 'desc').execute();
  return rows.map(payoutFromRow);
}

/** Every wallet with a payout (lower case): the `operations` streams' seed reads their DIVIDEND operations. */
export async function listPayoutWallets(db: DbExecutor): Promise<string[]> {
  const rows = await k(db).selectFrom('dividend_payouts').select('user_address').distinct().execute();
  return rows.map((r) => r.user_address.toLowerCase());
}

export async function markPayoutsPaid(
  db: DbExecutor,
  paid: ReadonlyArray<{ operationId: string; txHash: string; blockNumber: number; paidAt: number }>,
  now: number,
): Promise<void> {
  if (paid.length === 0) return;
  await kyselyOf(db).transaction().execute(async (tx) => {
    const t = tx as unknown as Kysely<Tables>;
    for (const p of paid) {
      await t
        .updateTable('dividend_payouts')
        .set({ status: 'paid', tx_hash: p.txHash.toLowerCase(), block_number: p.blockNumber, paid_at: p.paidAt, updated_at: now })
        .where('operation_id', '=', p.operationId)
        .execute();
    }
  });
}

/**
 * Puts a `failed` action back to `scheduled` (`tokex corporate-actions retry`): the next run takes
 * it up from the step it failed at (its record, funding and paid leaves are kept). Answers whether
 * it was failed.
 */
export async function rescheduleFailedAction(db: DbExecutor, actionId: string, now: number): Promise<boolean> {
  const r = await k(db)
    .updateTable('corporate_actions')
    .set({ status: 'scheduled', reason: null, updated_at: now })
    .where('action_id', '=', actionId)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
