/**
 * What the API writes about transactions, independent of the chain: which key recorded a
 * transaction (`stock_tx_records`, the key mapping of orders and operations is a join on it) and which
 * key built a calldata (`stock_calldata_requests`, proof of who built an unbound key's transaction).
 * Reorg handling never touches these tables: a recorded transaction that is re-mined, or dropped
 * and mined again later, keeps its owner.
 */
import type { Selectable, SelectQueryBuilder, StringReference } from 'kysely';
import { bulkInsert, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import type { CalldataRequestsTable, TxRecordsTable } from '../../storage/schema.ts';

export type TxKind = 'order' | 'cash-deposit' | 'cash-withdrawal' | 'stock-deposit' | 'stock-withdrawal';

export interface TxRecord {
  /** Lower-case 0x hash. */
  txHash: string;
  apiKey: string;
  kind: TxKind;
  recordedAt: number;
}

export interface CalldataRecord {
  /** keccak256 of the calldata, lower-case 0x hex. */
  calldataHash: string;
  apiKey: string;
  kind: string;
  createdAt: number;
}

function txFromRow(r: Selectable<TxRecordsTable>): TxRecord {
  return { txHash: r.tx_hash, apiKey: r.api_key, kind: r.kind as TxKind, recordedAt: Number(r.recorded_at) };
}

function calldataFromRow(r: Selectable<CalldataRequestsTable>): CalldataRecord {
  return { calldataHash: r.calldata_hash, apiKey: r.api_key, kind: r.kind, createdAt: Number(r.created_at) };
}

/**
 * Records that `apiKey` owns transaction `txHash`. Idempotent: when the transaction is already
 * recorded (by this key or another), nothing changes and the existing record is returned with
 * `created: false` — the caller decides whether another key's record is a conflict.
 */
export async function recordTx(
  db: DbExecutor,
  r: { txHash: string; apiKey: string; kind: TxKind; recordedAt: number },
): Promise<{ created: boolean; record: TxRecord }> {
  const txHash = r.txHash.toLowerCase();
  const k = kyselyOf(db);
  const inserted = await k
    .insertInto('stock_tx_records')
    .values({ tx_hash: txHash, api_key: r.apiKey, kind: r.kind, recorded_at: r.recordedAt })
    .onConflict((oc) => oc.column('tx_hash').doNothing())
    .executeTakeFirst();
  const created = Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  if (created) return { created, record: { txHash, apiKey: r.apiKey, kind: r.kind, recordedAt: r.recordedAt } };
  const existing = await getTxRecord(k, txHash);
  if (!existing) throw new Error('tx-record-store: record vanished after a conflicting insert');
  return { created: false, record: existing };
}

export async function getTxRecord(db: DbExecutor, txHash: string): Promise<TxRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('stock_tx_records').selectAll().where('tx_hash', '=', txHash.toLowerCase()).executeTakeFirst();
  return row ? txFromRow(row) : undefined;
}

/**
 * The key mapping of the stock lists: rows whose transaction (`columns.tx`) `apiKey` recorded,
 * plus, with `userAddress`, every row of that wallet (`columns.user`): a key bound to a wallet
 * reads all of it, whoever recorded it.
 */
export function whereRecordedOrOwned<DB, TB extends keyof DB, O>(
  base: SelectQueryBuilder<DB, TB, O>,
  columns: { tx: StringReference<DB, TB>; user: StringReference<DB, TB> },
  who: { apiKey: string; userAddress?: string },
): SelectQueryBuilder<DB, TB, O> {
  // Untyped inside: the columns are checked against the caller's table by the signature.
  const q = base as SelectQueryBuilder<any, any, O>;
  const [tx, user] = [columns.tx as string, columns.user as string];
  const wallet = who.userAddress?.toLowerCase();
  return q.where((eb) => {
    const recorded = eb(tx, 'in', eb.selectFrom('stock_tx_records').select('tx_hash').where('api_key', '=', who.apiKey));
    return wallet === undefined ? recorded : eb.or([recorded, eb(user, '=', wallet)]);
  }) as SelectQueryBuilder<DB, TB, O>;
}

/** The key that recorded each of these transactions (those recorded), by lower-case hash: the stock streams' owners. */
export async function listTxRecorders(db: DbExecutor, txHashes: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const hashes of chunked(txHashes.map((h) => h.toLowerCase()))) {
    const rows = await kyselyOf(db).selectFrom('stock_tx_records').select(['tx_hash', 'api_key']).where('tx_hash', 'in', hashes).execute();
    for (const r of rows) out.set(r.tx_hash, r.api_key);
  }
  return out;
}

/** Records that `apiKey` built the calldata hashing to `calldataHash`. Idempotent like `recordTx`. */
export async function recordCalldata(
  db: DbExecutor,
  r: { calldataHash: string; apiKey: string; kind: string; createdAt: number },
): Promise<{ created: boolean; record: CalldataRecord }> {
  const calldataHash = r.calldataHash.toLowerCase();
  const k = kyselyOf(db);
  const inserted = await k
    .insertInto('stock_calldata_requests')
    .values({ calldata_hash: calldataHash, api_key: r.apiKey, kind: r.kind, created_at: r.createdAt })
    .onConflict((oc) => oc.column('calldata_hash').doNothing())
    .executeTakeFirst();
  const created = Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  if (created) return { created, record: { calldataHash, apiKey: r.apiKey, kind: r.kind, createdAt: r.createdAt } };
  const existing = await getCalldataRecord(k, calldataHash);
  if (!existing) throw new Error('tx-record-store: calldata record vanished after a conflicting insert');
  return { created: false, record: existing };
}

export async function getCalldataRecord(db: DbExecutor, calldataHash: string): Promise<CalldataRecord | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('stock_calldata_requests')
    .selectAll()
    .where('calldata_hash', '=', calldataHash.toLowerCase())
    .executeTakeFirst();
  return row ? calldataFromRow(row) : undefined;
}

const CALLDATA_INSERT: BulkTable = {
  table: 'stock_calldata_requests',
  columns: ['calldata_hash', 'api_key', 'kind', 'created_at'],
  onConflict: { columns: ['calldata_hash'], update: 'nothing' },
};

/**
 * Many calldata records in a few statements (first writer of a hash wins, as in recordCalldata);
 * the API's calldata journal flushes its buffer through this so a burst costs a few statements, not
 * one per request, with SQL texts reused from flush to flush (bulk-sql.ts).
 */
export async function recordCalldataBatch(
  db: DbExecutor,
  records: ReadonlyArray<{ calldataHash: string; apiKey: string; kind: string; createdAt: number }>,
): Promise<void> {
  // One statement may not name a key twice (PostgreSQL refuses); the first record of a hash wins.
  const seen = new Set<string>();
  const rows: unknown[][] = [];
  for (const r of records) {
    const hash = r.calldataHash.toLowerCase();
    if (seen.has(hash)) continue;
    seen.add(hash);
    rows.push([hash, r.apiKey, r.kind, r.createdAt]);
  }
  await bulkInsert(db, CALLDATA_INSERT, rows);
}
