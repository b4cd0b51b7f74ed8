/**
 * The One Click relay journal (`stock_relay_requests`, migration 0006): what the API asked the
 * relayer to send, the signed versions of each transaction before they were broadcast, and how it
 * ended. The API inserts a request and reads it back; only the relayer moves it on.
 */
import type { Selectable } from 'kysely';
import type { Address, Hex } from 'viem';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import type { RelayRequestsTable } from '../../storage/schema.ts';

/** What a relayed transaction does for the user. */
export type RelayKind =
  | 'delegate'
  | 'undelegate'
  | 'order'
  | 'cancel'
  | 'cash-deposit'
  | 'cash-withdrawal'
  | 'stock-deposit'
  | 'stock-withdrawal';

export type RelayStatus = 'queued' | 'sent' | 'mined' | 'reverted' | 'failed';

export interface RelayVersion {
  hash: Hex;
  raw: Hex;
  nonce: number;
}

/** Ids the receipt showed: orders placed, cash or stock operations. */
export interface RelayResult {
  orderIds: string[];
  operationIds: string[];
}

export interface RelayRequest {
  requestId: string;
  apiKey: string;
  userAddress: Address;
  kind: RelayKind;
  to: Address;
  data: Hex;
  gasLimit: bigint;
  status: RelayStatus;
  nonce: number | null;
  /** The latest signed version's hash; the landed version's once mined or reverted. */
  txHash: Hex | null;
  versions: RelayVersion[];
  blockNumber: bigint | null;
  gasUsed: bigint | null;
  result: RelayResult | null;
  /** Why it reverted or failed: a short text safe to show the client. */
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * The note of a `delegate` request whose transaction reverted because the same delegation was
 * submitted first (an earlier attempt, a concurrent enable, anyone holding the signature): the
 * relayer is the wallet's delegate, so the request is recorded `mined` (the delegation holds) with
 * this note, and `1ct/enable` answers enabled.
 */
export const ALREADY_DELEGATED = 'already delegated: the same delegation was submitted first; this transaction reverted and changed nothing';

export const FINAL_RELAY_STATUSES: ReadonlySet<RelayStatus> = new Set(['mined', 'reverted', 'failed']);

function fromRow(r: Selectable<RelayRequestsTable>): RelayRequest {
  return {
    requestId: r.request_id,
    apiKey: r.api_key,
    userAddress: r.user_address as Address,
    kind: r.kind as RelayKind,
    to: r.to_address as Address,
    data: r.calldata as Hex,
    gasLimit: BigInt(r.gas_limit),
    status: r.status as RelayStatus,
    nonce: r.nonce === null ? null : Number(r.nonce),
    txHash: r.tx_hash as Hex | null,
    versions: r.tx_versions ? (JSON.parse(r.tx_versions) as RelayVersion[]) : [],
    blockNumber: r.block_number === null ? null : BigInt(r.block_number),
    gasUsed: r.gas_used === null ? null : BigInt(r.gas_used),
    result: r.result ? (JSON.parse(r.result) as RelayResult) : null,
    error: r.error,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export async function insertRelayRequest(
  db: DbExecutor,
  r: {
    requestId: string; apiKey: string; userAddress: Address; kind: RelayKind; to: Address; data: Hex; gasLimit: bigint; createdAt: number;
    /** The client's Idempotency-Key and its request's fingerprint: a second insert under the same key for the API key fails as a unique violation. */
    idempotency?: { key: string; fingerprint: string };
  },
): Promise<void> {
  await kyselyOf(db)
    .insertInto('stock_relay_requests')
    .values({
      request_id: r.requestId,
      api_key: r.apiKey,
      user_address: r.userAddress.toLowerCase(),
      kind: r.kind,
      to_address: r.to.toLowerCase(),
      calldata: r.data,
      gas_limit: r.gasLimit.toString(),
      status: 'queued',
      idempotency_key: r.idempotency?.key ?? null,
      request_fingerprint: r.idempotency?.fingerprint ?? null,
      created_at: r.createdAt,
      updated_at: r.createdAt,
    })
    .execute();
}

/** The request an API key queued under an Idempotency-Key, with the fingerprint it was queued with. */
export async function findRelayRequestByIdempotencyKey(db: DbExecutor, apiKey: string, key: string): Promise<{ request: RelayRequest; fingerprint: string | null } | undefined> {
  const row = await kyselyOf(db).selectFrom('stock_relay_requests').selectAll().where('api_key', '=', apiKey).where('idempotency_key', '=', key).executeTakeFirst();
  return row ? { request: fromRow(row), fingerprint: row.request_fingerprint } : undefined;
}

export async function getRelayRequest(db: DbExecutor, requestId: string): Promise<RelayRequest | undefined> {
  const row = await kyselyOf(db).selectFrom('stock_relay_requests').selectAll().where('request_id', '=', requestId).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Requests waiting for the relayer, oldest first. */
export async function listQueuedRelayRequests(db: DbExecutor, limit: number): Promise<RelayRequest[]> {
  const rows = await kyselyOf(db)
    .selectFrom('stock_relay_requests')
    .selectAll()
    .where('status', '=', 'queued')
    .orderBy('created_at')
    .orderBy('request_id')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/** Signed and not yet resolved (a relayer stopped while following them), in nonce order. */
export async function listSentRelayRequests(db: DbExecutor): Promise<RelayRequest[]> {
  const rows = await kyselyOf(db).selectFrom('stock_relay_requests').selectAll().where('status', '=', 'sent').orderBy('nonce').execute();
  return rows.map(fromRow);
}

/**
 * Journals a signed version before it is broadcast. A first version replaces any earlier one: the
 * sender re-signs with another nonce only when the earlier bytes were refused.
 */
export async function recordSignedVersion(db: DbExecutor, requestId: string, v: RelayVersion, replaces: Hex | undefined, now: number): Promise<void> {
  const k = kyselyOf(db);
  let versions: RelayVersion[] = [v];
  if (replaces) {
    const row = await k.selectFrom('stock_relay_requests').select('tx_versions').where('request_id', '=', requestId).executeTakeFirst();
    versions = [...(row?.tx_versions ? (JSON.parse(row.tx_versions) as RelayVersion[]) : []), v];
  }
  await k
    .updateTable('stock_relay_requests')
    .set({ status: 'sent', nonce: v.nonce, tx_hash: v.hash, tx_versions: JSON.stringify(versions), updated_at: now })
    .where('request_id', '=', requestId)
    .where('status', 'in', ['queued', 'sent'])
    .execute();
}

export async function finishRelayRequest(
  db: DbExecutor,
  requestId: string,
  f: { status: 'mined' | 'reverted' | 'failed'; txHash?: Hex | null; blockNumber?: bigint; gasUsed?: bigint; result?: RelayResult; error?: string; now: number },
): Promise<void> {
  await kyselyOf(db)
    .updateTable('stock_relay_requests')
    .set({
      status: f.status,
      ...(f.txHash !== undefined ? { tx_hash: f.txHash } : {}),
      block_number: f.blockNumber === undefined ? null : Number(f.blockNumber),
      gas_used: f.gasUsed === undefined ? null : f.gasUsed.toString(),
      result: f.result ? JSON.stringify(f.result) : null,
      error: f.error ?? null,
      updated_at: f.now,
    })
    .where('request_id', '=', requestId)
    .execute();
}

/** Fails queued requests older than `before` (ms): the user asked too long ago to act on it now. */
export async function expireQueuedRelayRequests(db: DbExecutor, before: number, error: string, now: number): Promise<string[]> {
  const rows = await kyselyOf(db)
    .updateTable('stock_relay_requests')
    .set({ status: 'failed', error, updated_at: now })
    .where('status', '=', 'queued')
    .where('created_at', '<', before)
    .returning('request_id')
    .execute();
  return rows.map((r) => r.request_id);
}
