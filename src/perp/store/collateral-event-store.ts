/**
 * The MarginVault's collateral movements (`perp_collateral_events`), written by the perp indexer
 * and consumed by the engine runtime (docs/indexer.md, "The perp indexer").
 *
 * Life of a row (`applied` is 0, 1 or 2):
 *   indexed (applied 0) ──markCollateralEventsApplied──▶ applied (1)
 *                       ──markCollateralEventsRefused──▶ refused (2): a deposit the engine refused
 *                         (it never credits it under that id); kept and shown, never retried
 *   a reorg removes its block: unapplied or refused → the row is deleted (the engine never credited it);
 *                              applied   → `orphaned` 1, kept until the engine has reversed it
 *                                          (listOrphanedCollateralEvents → acknowledgeOrphanedCollateralEvents).
 * An orphaned row whose transaction is mined again at the same log index on the new branch becomes
 * canonical again (orphaned 0, still applied): the engine's credit stands and nothing is reversed.
 *
 * The runtime transitions rows first and acts on the ids the call answers (those it moved): a row
 * the indexer changed meanwhile is then never credited or reversed twice.
 *
 * Amounts are integer strings in collateral-token units (the USDC's 6 decimals); times are ms.
 */
import type { Selectable, SelectQueryBuilder } from 'kysely';
import { kyselyOf, type DatabaseSchema, type DbExecutor } from '../../storage/database.ts';
import { bulkInsert, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { listPage, newestFirst } from '../../storage/list-query.ts';
import type { PerpCollateralEventsTable } from '../../storage/schema.ts';

/** Engine command ids of vault deposits: `dep:<eventId>` (the projection and the collateral task share it). */
export const DEPOSIT_COMMAND_PREFIX = 'dep:';
import { findJournalByCommandIds } from './engine-journal-store.ts';

/** `applied` column values. */
const PENDING = 0;
const APPLIED = 1;
const REFUSED = 2;

export type CollateralEventKind = 'deposit' | 'withdrawal';

/** A movement as the indexer reads it off a log. */
export interface NewCollateralEvent {
  kind: CollateralEventKind;
  /** Any case; stored lower-case. */
  account: string;
  /** Integer string, collateral-token units. */
  amount: string;
  txHash: string;
  blockNumber: number;
  logIndex: number;
  /** Block timestamp, ms. */
  blockTimestamp: number;
  /** The withdrawal's bytes32 id (0x…); null for a deposit. */
  withdrawalId: string | null;
}

export interface CollateralEventRecord extends NewCollateralEvent {
  /** `${txHash}-${logIndex}`. */
  eventId: string;
  applied: boolean;
  appliedAt: number | null;
  orphaned: boolean;
}

/** Where a movement stands with the engine. */
export type CollateralEventStatus = 'pending' | 'applied' | 'refused';

/** A movement with its standing, as an account's history shows it. */
export interface CollateralMovement extends CollateralEventRecord {
  status: CollateralEventStatus;
  /**
   * Why the engine refused a deposit (`refused`): its journalled answer to the deposit command,
   * `CODE: message`. Null otherwise.
   */
  refusal: string | null;
}

/** The row key of the log at `logIndex` of `txHash`. */
export function collateralEventId(txHash: string, logIndex: number): string {
  return `${txHash.toLowerCase()}-${logIndex}`;
}

const COLUMNS = ['event_id', 'kind', 'account', 'amount', 'tx_hash', 'block_number', 'log_index', 'block_timestamp', 'withdrawal_id', 'orphaned'] as const;

const UPSERT: BulkTable = {
  table: 'perp_collateral_events',
  columns: COLUMNS,
  // A row present already is an orphan mined again: canonical once more, `applied` kept.
  onConflict: { columns: ['event_id'], update: COLUMNS.slice(1) },
};

function toRecord(r: Selectable<PerpCollateralEventsTable>): CollateralEventRecord {
  return {
    eventId: r.event_id,
    kind: r.kind as CollateralEventKind,
    account: r.account,
    amount: r.amount,
    txHash: r.tx_hash,
    blockNumber: Number(r.block_number),
    logIndex: Number(r.log_index),
    blockTimestamp: Number(r.block_timestamp),
    withdrawalId: r.withdrawal_id,
    applied: Number(r.applied) === 1,
    appliedAt: r.applied_at === null ? null : Number(r.applied_at),
    orphaned: Number(r.orphaned) === 1,
  };
}

/** Indexer write: the batch's movements (write-only, so it may run against the batch's recorder). */
export async function upsertCollateralEvents(db: DbExecutor, events: readonly NewCollateralEvent[]): Promise<void> {
  await bulkInsert(
    db,
    UPSERT,
    events.map((e) => [
      collateralEventId(e.txHash, e.logIndex),
      e.kind,
      e.account.toLowerCase(),
      e.amount,
      e.txHash.toLowerCase(),
      e.blockNumber,
      e.logIndex,
      e.blockTimestamp,
      e.withdrawalId?.toLowerCase() ?? null,
      0,
    ]),
  );
}

/**
 * Indexer rollback: the movements in blocks above `blockNumber` left the chain. Unapplied and
 * refused ones are deleted (the engine credited nothing); applied ones are marked orphaned for the
 * engine to reverse.
 */
export async function rollbackCollateralEventsAbove(db: DbExecutor, blockNumber: number): Promise<void> {
  const k = kyselyOf(db);
  await k.deleteFrom('perp_collateral_events').where('block_number', '>', blockNumber).where('applied', '<>', APPLIED).execute();
  await k.updateTable('perp_collateral_events').set({ orphaned: 1 }).where('block_number', '>', blockNumber).where('applied', '=', APPLIED).execute();
}

/** The first `limit` rows of `where` in chain order (oldest first). */
function inChainOrder(
  db: DbExecutor,
  where: (q: SelectQueryBuilder<DatabaseSchema, 'perp_collateral_events', {}>) => SelectQueryBuilder<DatabaseSchema, 'perp_collateral_events', {}>,
  limit: number,
): Promise<Selectable<PerpCollateralEventsTable>[]> {
  return where(kyselyOf(db).selectFrom('perp_collateral_events')).selectAll().orderBy('block_number').orderBy('log_index').limit(Math.max(0, limit)).execute();
}

/** The movements the engine has not applied, oldest first (chain order); orphans and refused deposits excluded. */
export async function listUnappliedCollateralEvents(db: DbExecutor, limit: number): Promise<CollateralEventRecord[]> {
  const rows = await inChainOrder(db, (q) => q.where('applied', '=', PENDING), limit);
  return rows.map(toRecord);
}

/**
 * Marks movements applied. Answers the ids marked now: an id unknown (deleted by a reorg meanwhile)
 * or already applied is left out, and must not be applied by the caller.
 */
export async function markCollateralEventsApplied(db: DbExecutor, ids: readonly string[], now: number = Date.now()): Promise<string[]> {
  const marked: string[] = [];
  for (const part of chunked([...new Set(ids)])) {
    const rows = await kyselyOf(db)
      .updateTable('perp_collateral_events')
      .set({ applied: APPLIED, applied_at: now })
      .where('event_id', 'in', part)
      .where('applied', '=', PENDING)
      .where('orphaned', '=', 0)
      .returning('event_id')
      .execute();
    for (const r of rows) marked.push(r.event_id);
  }
  return marked;
}

/**
 * Marks deposits the engine refused (`applied_at` = when): they leave the pending list and stay
 * visible. Answers the ids marked now, like markCollateralEventsApplied.
 */
export async function markCollateralEventsRefused(db: DbExecutor, ids: readonly string[], now: number = Date.now()): Promise<string[]> {
  const marked: string[] = [];
  for (const part of chunked([...new Set(ids)])) {
    const rows = await kyselyOf(db)
      .updateTable('perp_collateral_events')
      .set({ applied: REFUSED, applied_at: now })
      .where('event_id', 'in', part)
      .where('applied', '=', PENDING)
      .where('orphaned', '=', 0)
      .where('kind', '=', 'deposit')
      .returning('event_id')
      .execute();
    for (const r of rows) marked.push(r.event_id);
  }
  return marked;
}

/**
 * Each record with its standing; a refused deposit with the engine's answer to it, read from the
 * journal (the deposit's command id is `dep:<eventId>`): the journal is where the refusal is
 * recorded, so the reason needs no copy here.
 */
async function withStatus(db: DbExecutor, rows: Selectable<PerpCollateralEventsTable>[]): Promise<CollateralMovement[]> {
  const refusedIds = rows.filter((r) => Number(r.applied) === REFUSED).map((r) => `${DEPOSIT_COMMAND_PREFIX}${r.event_id}`);
  const answers = new Map<string, string>();
  if (refusedIds.length > 0) {
    for (const j of await findJournalByCommandIds(db, refusedIds)) {
      let message = '';
      try {
        message = String((JSON.parse(j.result) as { message?: unknown }).message ?? '');
      } catch {
        // The code alone still says why.
      }
      answers.set(j.commandId.slice(DEPOSIT_COMMAND_PREFIX.length), message ? `${j.code}: ${message}` : j.code);
    }
  }
  return rows.map((r) => {
    const applied = Number(r.applied);
    const status: CollateralEventStatus = applied === APPLIED ? 'applied' : applied === REFUSED ? 'refused' : 'pending';
    return { ...toRecord(r), status, refusal: status === 'refused' ? (answers.get(r.event_id) ?? 'refused by the engine') : null };
  });
}

/** Deposits the engine refused, oldest first: for the operator, who must settle them by hand. */
export async function listRefusedCollateralEvents(db: DbExecutor, limit: number): Promise<CollateralMovement[]> {
  return withStatus(db, await inChainOrder(db, (q) => q.where('applied', '=', REFUSED).where('orphaned', '=', 0), limit));
}

/** Applied movements a reorg removed from the chain, oldest first: the engine must reverse them. */
export async function listOrphanedCollateralEvents(db: DbExecutor, limit: number): Promise<CollateralEventRecord[]> {
  const rows = await inChainOrder(db, (q) => q.where('orphaned', '=', 1), limit);
  return rows.map(toRecord);
}

/**
 * The engine reversed these orphaned movements: their rows are deleted. Answers the ids removed
 * now; one that became canonical again meanwhile (or was acknowledged before) is left out and must
 * not be reversed.
 */
export async function acknowledgeOrphanedCollateralEvents(db: DbExecutor, ids: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const part of chunked([...new Set(ids)])) {
    const rows = await kyselyOf(db)
      .deleteFrom('perp_collateral_events')
      .where('event_id', 'in', part)
      .where('orphaned', '=', 1)
      .returning('event_id')
      .execute();
    for (const r of rows) removed.push(r.event_id);
  }
  return removed;
}

export async function getCollateralEvent(db: DbExecutor, eventId: string): Promise<CollateralEventRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('perp_collateral_events').selectAll().where('event_id', '=', eventId).executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

const CHAIN_ORDER_NEWEST_FIRST = { newestFirst: ['block_number', 'log_index'] } as const;

/** An account's canonical movements (orphans excluded), newest first. */
export async function listCollateralEvents(
  db: DbExecutor,
  opts: { account?: string; kind?: CollateralEventKind; limit?: number } = {},
): Promise<CollateralEventRecord[]> {
  const base = kyselyOf(db).selectFrom('perp_collateral_events').where('orphaned', '=', 0);
  // An empty account or kind, like an absent one, filters nothing.
  const filters = [['account', opts.account ? opts.account.toLowerCase() : undefined], ['kind', opts.kind || undefined]] as const;
  const spec = { filters, ...CHAIN_ORDER_NEWEST_FIRST };
  const rows = await newestFirst(base, spec).limit(Math.max(0, opts.limit ?? 500)).execute();
  return rows.map(toRecord);
}

/**
 * A page of an account's canonical movements of one kind, newest first, with the total; each with
 * its status (a refused deposit with the engine's reason).
 */
export async function listCollateralEventsPage(
  db: DbExecutor,
  q: { account: string; kind: CollateralEventKind; offset: number; limit: number; startTime?: number; endTime?: number },
): Promise<{ total: number; rows: CollateralMovement[] }> {
  const base = kyselyOf(db)
    .selectFrom('perp_collateral_events')
    .where('orphaned', '=', 0)
    .where('account', '=', q.account.toLowerCase())
    .where('kind', '=', q.kind);
  const page = await listPage(base, { time: 'block_timestamp', ...CHAIN_ORDER_NEWEST_FIRST }, q, (r) => r);
  return { total: page.total, rows: await withStatus(db, page.rows) };
}
