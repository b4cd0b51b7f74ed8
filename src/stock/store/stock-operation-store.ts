/**
 * Cash operations (Cashier deposits and withdrawals) and stock operations (exchange deposits and
 * withdrawals of a Stock), as projected by the stock indexer (docs/indexer.md). `operationId` is
 * `${txHash}-${ordinal}` (src/stock/operation-id.ts). The key mapping is a join on the
 * operation's transaction (`stock_tx_records.tx_hash = tx_hash`).
 *
 * Amounts are integer strings: `tokenAmount` in the cash token's units, `musdAmount` in mUSD
 * (18 decimals), stock `amount` in stock units (18 decimals). Times are ms from block timestamps.
 */
import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { bulkInsert, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { listPage } from '../../storage/list-query.ts';
import { whereRecordedOrOwned } from './tx-record-store.ts';
import type { CashOperationsTable, StockOperationsTable } from '../../storage/schema.ts';

export type OperationKind = 'deposit' | 'withdrawal';
export type OperationStatus = 'processing' | 'completed' | 'failed';

/**
 * One step of a cash operation: deposit `deposited-instant`, or `queued` then `settled`;
 * withdrawal `debited` then `paid` (instant), or `debited`, `queued`, then `settled`.
 */
export interface CashStep {
  step: 'deposited-instant' | 'queued' | 'settled' | 'debited' | 'paid';
  txHash: string;
  timestamp: number;
}

export interface CashOperationRecord {
  operationId: string;
  kind: OperationKind;
  userAddress: string;
  tokenAddress: string;
  tokenAmount: string;
  musdAmount: string;
  status: OperationStatus;
  instant: boolean;
  /** Decimal string of the Cashier queue id of a queued operation; null when instant. */
  queueId: string | null;
  txHash: string;
  settleTxHash: string | null;
  blockNumber: number;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
  steps: CashStep[];
}

export interface StockOperationRecord {
  operationId: string;
  kind: OperationKind;
  userAddress: string;
  stockAddress: string;
  amount: string;
  status: OperationStatus;
  txHash: string;
  blockNumber: number;
  createdAt: number;
  updatedAt: number;
}

/** The fold state of a cash operation: the record plus its log index (orders a block's operations). */
export interface CashOperationState extends CashOperationRecord {
  logIndex: number;
}

export interface StockOperationState extends StockOperationRecord {
  logIndex: number;
}

export interface CashOperationQuery {
  apiKey: string;
  /** The key's bound wallet: its operations are listed too, whoever recorded them (read access). */
  userAddress?: string;
  kind: OperationKind;
  status?: OperationStatus;
  /** Inclusive bounds on createdAt (ms). */
  startTime?: number;
  endTime?: number;
  offset: number;
  limit: number;
}

export interface StockOperationQuery extends CashOperationQuery {
  stockAddress?: string;
}

function cashFromRow(r: Selectable<CashOperationsTable>): CashOperationState {
  return {
    operationId: r.operation_id,
    kind: r.kind as OperationKind,
    userAddress: r.user_address,
    tokenAddress: r.token_address,
    tokenAmount: r.token_amount,
    musdAmount: r.musd_amount,
    status: r.status as OperationStatus,
    instant: Number(r.instant) === 1,
    queueId: r.queue_id,
    txHash: r.tx_hash,
    settleTxHash: r.settle_tx_hash,
    blockNumber: Number(r.block_number),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    completedAt: r.completed_at === null ? null : Number(r.completed_at),
    steps: JSON.parse(r.steps) as CashStep[],
    logIndex: Number(r.log_index),
  };
}

function cashRecord(s: CashOperationState): CashOperationRecord {
  const { logIndex: _logIndex, ...record } = s;
  return record;
}

function stockFromRow(r: Selectable<StockOperationsTable>): StockOperationState {
  return {
    operationId: r.operation_id,
    kind: r.kind as OperationKind,
    userAddress: r.user_address,
    stockAddress: r.stock_address,
    amount: r.amount,
    status: r.status as OperationStatus,
    txHash: r.tx_hash,
    blockNumber: Number(r.block_number),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    logIndex: Number(r.log_index),
  };
}

function stockRecord(s: StockOperationState): StockOperationRecord {
  const { logIndex: _logIndex, ...record } = s;
  return record;
}

// ------------------------------------------------------------------ cash reads

export async function getCashOperation(db: DbExecutor, operationId: string): Promise<CashOperationRecord | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('stock_cash_operations')
    .selectAll()
    .where('operation_id', '=', operationId.toLowerCase())
    .executeTakeFirst();
  return row ? cashRecord(cashFromRow(row)) : undefined;
}

/** Cash operations created by transaction `txHash` (a settlement transaction creates none), in log order. */
export async function listCashOperationsByTx(db: DbExecutor, txHash: string): Promise<CashOperationRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('stock_cash_operations')
    .selectAll()
    .where('tx_hash', '=', txHash.toLowerCase())
    .orderBy('log_index')
    .execute();
  return rows.map((r) => cashRecord(cashFromRow(r)));
}

/**
 * Cash operations of `kind` whose transaction `apiKey` recorded, plus, with `userAddress`, every
 * one of that wallet; newest first.
 */
export async function listCashOperationsForApiKey(
  db: DbExecutor,
  q: CashOperationQuery,
): Promise<{ total: number; rows: CashOperationRecord[] }> {
  const from = kyselyOf(db).selectFrom('stock_cash_operations as c');
  const base = whereRecordedOrOwned(from, { tx: 'c.tx_hash', user: 'c.user_address' }, q).where('c.kind', '=', q.kind);
  const spec = { filters: [['c.status', q.status]], time: 'c.created_at', newestFirst: ['c.created_at', 'c.block_number', 'c.log_index'] } as const;
  return listPage(base, spec, q, (r) => cashRecord(cashFromRow(r)));
}

// ----------------------------------------------------------------- stock reads

export async function getStockOperation(db: DbExecutor, operationId: string): Promise<StockOperationRecord | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('stock_operations')
    .selectAll()
    .where('operation_id', '=', operationId.toLowerCase())
    .executeTakeFirst();
  return row ? stockRecord(stockFromRow(row)) : undefined;
}

export async function listStockOperationsByTx(db: DbExecutor, txHash: string): Promise<StockOperationRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('stock_operations')
    .selectAll()
    .where('tx_hash', '=', txHash.toLowerCase())
    .orderBy('log_index')
    .execute();
  return rows.map((r) => stockRecord(stockFromRow(r)));
}

/** Like listCashOperationsForApiKey, for stock operations. */
export async function listStockOperationsForApiKey(
  db: DbExecutor,
  q: StockOperationQuery,
): Promise<{ total: number; rows: StockOperationRecord[] }> {
  const from = kyselyOf(db).selectFrom('stock_operations as s');
  const base = whereRecordedOrOwned(from, { tx: 's.tx_hash', user: 's.user_address' }, q).where('s.kind', '=', q.kind);
  const spec = {
    filters: [['s.stock_address', q.stockAddress?.toLowerCase()], ['s.status', q.status]],
    time: 's.created_at',
    newestFirst: ['s.created_at', 's.block_number', 's.log_index'],
  } as const;
  return listPage(base, spec, q, (r) => stockRecord(stockFromRow(r)));
}

// ------------------------------------------------------------- indexer writes

const CASH_COLUMNS = [
  'operation_id',
  'kind',
  'user_address',
  'token_address',
  'token_amount',
  'musd_amount',
  'status',
  'instant',
  'queue_id',
  'tx_hash',
  'settle_tx_hash',
  'block_number',
  'log_index',
  'created_at',
  'updated_at',
  'completed_at',
  'steps',
] as const;

const CASH_UPSERT: BulkTable = {
  table: 'stock_cash_operations',
  columns: CASH_COLUMNS,
  onConflict: { columns: ['operation_id'], update: CASH_COLUMNS.slice(1) },
};

const STOCK_COLUMNS = [
  'operation_id',
  'kind',
  'user_address',
  'stock_address',
  'amount',
  'status',
  'tx_hash',
  'block_number',
  'log_index',
  'created_at',
  'updated_at',
] as const;

const STOCK_UPSERT: BulkTable = {
  table: 'stock_operations',
  columns: STOCK_COLUMNS,
  onConflict: { columns: ['operation_id'], update: STOCK_COLUMNS.slice(1) },
};

export async function upsertCashOperationStates(db: DbExecutor, ops: readonly CashOperationState[]): Promise<void> {
  await bulkInsert(
    db,
    CASH_UPSERT,
    ops.map((o) => [
      o.operationId,
      o.kind,
      o.userAddress,
      o.tokenAddress,
      o.tokenAmount,
      o.musdAmount,
      o.status,
      o.instant ? 1 : 0,
      o.queueId,
      o.txHash,
      o.settleTxHash,
      o.blockNumber,
      o.logIndex,
      o.createdAt,
      o.updatedAt,
      o.completedAt,
      JSON.stringify(o.steps),
    ]),
  );
}

export async function upsertStockOperationStates(db: DbExecutor, ops: readonly StockOperationState[]): Promise<void> {
  await bulkInsert(
    db,
    STOCK_UPSERT,
    ops.map((o) => [
      o.operationId,
      o.kind,
      o.userAddress,
      o.stockAddress,
      o.amount,
      o.status,
      o.txHash,
      o.blockNumber,
      o.logIndex,
      o.createdAt,
      o.updatedAt,
    ]),
  );
}

export async function loadCashOperationStates(db: DbExecutor, operationIds: readonly string[]): Promise<Map<string, CashOperationState>> {
  const out = new Map<string, CashOperationState>();
  for (const ids of chunked(operationIds)) {
    const rows = await kyselyOf(db).selectFrom('stock_cash_operations').selectAll().where('operation_id', 'in', ids).execute();
    for (const r of rows) out.set(r.operation_id, cashFromRow(r));
  }
  return out;
}

/** Operation id of each queued operation of `kind` among `queueIds` (decimal strings). */
export async function findQueuedCashOperations(
  db: DbExecutor,
  kind: OperationKind,
  queueIds: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const ids of chunked(queueIds)) {
    const rows = await kyselyOf(db)
      .selectFrom('stock_cash_operations')
      .select(['queue_id', 'operation_id'])
      .where('kind', '=', kind)
      .where('queue_id', 'in', ids)
      .execute();
    for (const r of rows) if (r.queue_id !== null) out.set(r.queue_id, r.operation_id);
  }
  return out;
}

export async function deleteCashOperations(db: DbExecutor, operationIds: readonly string[]): Promise<void> {
  for (const ids of chunked(operationIds)) {
    await kyselyOf(db).deleteFrom('stock_cash_operations').where('operation_id', 'in', ids).execute();
  }
}

export async function deleteStockOperations(db: DbExecutor, operationIds: readonly string[]): Promise<void> {
  for (const ids of chunked(operationIds)) {
    await kyselyOf(db).deleteFrom('stock_operations').where('operation_id', 'in', ids).execute();
  }
}

/** The stored stock operations of these ids (those that exist). */
export async function loadStockOperations(db: DbExecutor, operationIds: readonly string[]): Promise<Map<string, StockOperationRecord>> {
  const out = new Map<string, StockOperationRecord>();
  for (const ids of chunked(operationIds)) {
    const rows = await kyselyOf(db).selectFrom('stock_operations').selectAll().where('operation_id', 'in', ids).execute();
    for (const r of rows) out.set(r.operation_id, stockRecord(stockFromRow(r)));
  }
  return out;
}

/** A wallet's last `limit` changed cash and stock operations of each kind, most recently changed first (the stock streams' seed). */
export async function listRecentOperationsOfWallet(
  db: DbExecutor,
  wallet: string,
  limit: number,
): Promise<{ cash: CashOperationRecord[]; stock: StockOperationRecord[] }> {
  const k = kyselyOf(db);
  const user = wallet.toLowerCase();
  const cash = await k.selectFrom('stock_cash_operations').selectAll().where('user_address', '=', user).orderBy('updated_at', 'desc').orderBy('created_at', 'desc').limit(limit).execute();
  const stock = await k.selectFrom('stock_operations').selectAll().where('user_address', '=', user).orderBy('updated_at', 'desc').orderBy('created_at', 'desc').limit(limit).execute();
  return { cash: cash.map((r) => cashRecord(cashFromRow(r))), stock: stock.map((r) => stockRecord(stockFromRow(r))) };
}

/** The wallets that ever moved cash or stock through the venue. */
export async function listOperationWallets(db: DbExecutor): Promise<string[]> {
  const k = kyselyOf(db);
  const a = await k.selectFrom('stock_cash_operations').select('user_address').distinct().execute();
  const b = await k.selectFrom('stock_operations').select('user_address').distinct().execute();
  return [...new Set([...a, ...b].map((r) => r.user_address.toLowerCase()))];
}
