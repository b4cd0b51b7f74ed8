/**
 * Storage of the perpetual engine's journal and snapshots (docs/perp-sequencer.md). Plain rows:
 * the store knows nothing of the engine, the sequencer encodes commands and results as JSON text.
 */
import { bulkInsertRecords, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { Kysely, PostgresAdapter, sql } from 'kysely';
import { kyselyOf, type Db, type DbExecutor } from '../../storage/database.ts';
import type { PerpJournalTable } from '../../storage/schema.ts';
import { withTransaction } from '../../storage/transaction.ts';
import type { NonceClaimInput, OrderNonceClaimer } from './order-nonce-types.ts';

/** An order nonce claim as the journal's commits write it (order-nonce-types.ts). */
export type JournalNonceClaim = NonceClaimInput;
/** What makes those claims for the engine's transport (order-nonce-store.ts `createOrderNonceClaimer`), as the journal's side names it. */
export type JournalNonceClaimer = OrderNonceClaimer;
/** What the journal's commits take those claims from (order-nonce-store.ts `createJournalNonceLedger`). */
export type { JournalNonceWriter } from './order-nonce-types.ts';

export interface JournalRow {
  /** Journal order, 1, 2, … without gaps. */
  seq: number;
  commandId: string;
  kind: string;
  /** JSON of the command (bigints as decimal strings). */
  command: string;
  ts: number;
  code: string;
  /** The engine's last event seq after the command. */
  lastEventSeq: number;
  /** JSON of the answer without its events. */
  result: string;
}

export interface SnapshotRow {
  lastSeq: number;
  stateHash: string;
  /** JSON of the engine snapshot. */
  snapshot: string;
  createdAt: number;
}

const JOURNAL: BulkTable = {
  table: 'perp_journal',
  columns: ['seq', 'command_id', 'kind', 'command', 'ts', 'code', 'last_event_seq', 'result'],
};

type JournalDbRow = PerpJournalTable;

function fromDb(r: JournalDbRow): JournalRow {
  return {
    seq: Number(r.seq),
    commandId: r.command_id,
    kind: r.kind,
    command: r.command,
    ts: Number(r.ts),
    code: r.code,
    lastEventSeq: Number(r.last_event_seq),
    result: r.result,
  };
}

/**
 * Appends `rows` in one durable commit, with `nonces` (order nonces claimed by the journal's ledger,
 * order-nonce-store.ts) in the same commit: both or neither. A nonce already in the table is left
 * as it is (its first claim stands).
 */
export async function appendJournal(db: DbExecutor, rows: readonly JournalRow[], nonces: readonly NonceClaimInput[] = []): Promise<void> {
  if (rows.length === 0 && nonces.length === 0) return;
  const k = kyselyOf(db);
  if (k.getExecutor().adapter instanceof PostgresAdapter) {
    // One statement, one round trip, one SQL text for a batch of any size: each column as one array
    // parameter, `unnest` making rows of them. A single statement is atomic and commits durably on
    // its own, so the batch needs no BEGIN and COMMIT. The row-list form took BEGIN, one INSERT per
    // power-of-two chunk and COMMIT: 4–5 round trips a group commit, each a socket write and a wake-up
    // of the server (the engine process's largest cost once scaled out, issue 40).
    const journal = sql`insert into perp_journal (seq, command_id, kind, command, ts, code, last_event_seq, result)
      select * from unnest(
        ${rows.map((r) => r.seq)}::bigint[], ${rows.map((r) => r.commandId)}::text[], ${rows.map((r) => r.kind)}::text[],
        ${rows.map((r) => r.command)}::text[], ${rows.map((r) => r.ts)}::bigint[], ${rows.map((r) => r.code)}::text[],
        ${rows.map((r) => r.lastEventSeq)}::bigint[], ${rows.map((r) => r.result)}::text[]
      )`;
    if (nonces.length === 0) {
      await journal.execute(k);
      return;
    }
    // The nonces in the same statement (a data-modifying CTE runs whether or not it is read).
    await sql`with journal as (${journal})
      insert into perp_order_nonces (account, nonce, order_hash, expiry, used_at)
      select * from unnest(
        ${nonces.map((n) => n.account.toLowerCase())}::text[], ${nonces.map((n) => n.nonce)}::text[], ${nonces.map((n) => n.orderHash.toLowerCase())}::text[],
        ${nonces.map((n) => n.expiry)}::bigint[], ${nonces.map((n) => n.usedAt)}::bigint[]
      )
      on conflict (account, nonce) do nothing`.execute(k);
    return;
  }
  const prepared = preparedAppend(db);
  if (prepared !== undefined) {
    // SQLite on a Db of its own (the journal's writer): each row and each nonce one run of a
    // statement prepared once, in one synchronous transaction (Db.transactSync: behind the write
    // gate, BEGIN IMMEDIATE to COMMIT without a query builder or an await between them).
    // The query builder's part of a group commit (building and compiling the nonces' insert, the
    // rows' parameter list) cost about as much as SQLite's own work on the rows (issue 40,
    // bench/journal-index-cost-bench.ts).
    await prepared.transact(() => {
      for (const r of rows) prepared.row(r.seq, r.commandId, r.kind, r.command, r.ts, r.code, r.lastEventSeq, r.result);
      for (const n of nonces) prepared.nonce(n.account.toLowerCase(), n.nonce, n.orderHash.toLowerCase(), n.expiry, n.usedAt);
    });
    return;
  }
  await withTransaction(db, async (tx) => {
    if (rows.length > 0) {
      await bulkInsertRecords(tx, JOURNAL, rows);
    }
    for (const part of chunked(nonces, 500)) {
      await kyselyOf(tx)
        .insertInto('perp_order_nonces')
        .values(part.map((n) => ({ account: n.account.toLowerCase(), nonce: n.nonce, order_hash: n.orderHash.toLowerCase(), expiry: n.expiry, used_at: n.usedAt })))
        .onConflict((oc) => oc.columns(['account', 'nonce']).doNothing())
        .execute();
    }
  });
}

type Run = (...params: Array<string | number | bigint | null>) => void;
interface PreparedAppend {
  transact: NonNullable<Db['transactSync']>;
  row: Run;
  nonce: Run;
}
const appendStatements = new WeakMap<Db, PreparedAppend>();

/** The journal's two inserts prepared on `db`'s connection, where it has them (SQLite, not inside a caller's transaction). */
function preparedAppend(db: DbExecutor): PreparedAppend | undefined {
  if (db instanceof Kysely || db.prepareWrite === undefined || db.transactSync === undefined) return undefined;
  let s = appendStatements.get(db);
  if (s === undefined) {
    s = {
      transact: db.transactSync,
      row: db.prepareWrite('insert into perp_journal (seq, command_id, kind, command, ts, code, last_event_seq, result) values (?, ?, ?, ?, ?, ?, ?, ?)'),
      // A nonce already in the table keeps its first claim (as the multi-row insert did).
      nonce: db.prepareWrite('insert into perp_order_nonces (account, nonce, order_hash, expiry, used_at) values (?, ?, ?, ?, ?) on conflict (account, nonce) do nothing'),
    };
    appendStatements.set(db, s);
  }
  return s;
}

/** Up to `limit` rows with seq > afterSeq, in journal order. */
export async function readJournalAfter(db: DbExecutor, afterSeq: number, limit = 10_000): Promise<JournalRow[]> {
  const rows = await kyselyOf(db)
    .selectFrom('perp_journal')
    .selectAll()
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map(fromDb);
}

/** The last `count` rows, in journal order. */
export async function readJournalTail(db: DbExecutor, count: number): Promise<JournalRow[]> {
  if (count <= 0) return [];
  const rows = await kyselyOf(db).selectFrom('perp_journal').selectAll().orderBy('seq', 'desc').limit(count).execute();
  return rows.map(fromDb).reverse();
}

/** The journalled rows of these command ids (any order; ids not journalled are absent). */
export async function findJournalByCommandIds(db: DbExecutor, commandIds: readonly string[]): Promise<JournalRow[]> {
  const out: JournalRow[] = [];
  for (const ids of chunked([...new Set(commandIds)], 500)) {
    const rows = await kyselyOf(db).selectFrom('perp_journal').selectAll().where('command_id', 'in', ids).execute();
    for (const r of rows) out.push(fromDb(r));
  }
  return out;
}

/** The highest journal seq, 0 when empty. */
export async function lastJournalSeq(db: DbExecutor): Promise<number> {
  const row = await kyselyOf(db)
    .selectFrom('perp_journal')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return row?.seq == null ? 0 : Number(row.seq);
}

export async function saveSnapshot(db: DbExecutor, s: SnapshotRow): Promise<void> {
  await kyselyOf(db)
    .insertInto('perp_snapshots')
    .values({ last_seq: s.lastSeq, state_hash: s.stateHash, snapshot: s.snapshot, created_at: s.createdAt })
    .onConflict((oc) => oc.column('last_seq').doNothing())
    .execute();
}

/** Snapshots newest first (at most `limit`), for a restart that falls back past a bad one. */
export async function latestSnapshots(db: DbExecutor, limit = 3): Promise<SnapshotRow[]> {
  const rows = await kyselyOf(db).selectFrom('perp_snapshots').selectAll().orderBy('last_seq', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    lastSeq: Number(r.last_seq),
    stateHash: r.state_hash,
    snapshot: r.snapshot,
    createdAt: Number(r.created_at),
  }));
}

/** Deletes all but the newest `keep` snapshots; answers how many went. */
export async function pruneSnapshots(db: DbExecutor, keep: number): Promise<number> {
  const k = kyselyOf(db);
  const kept = await k.selectFrom('perp_snapshots').select('last_seq').orderBy('last_seq', 'desc').limit(1).offset(Math.max(0, keep - 1)).executeTakeFirst();
  if (kept === undefined) return 0;
  const res = await k.deleteFrom('perp_snapshots').where('last_seq', '<', Number(kept.last_seq)).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

export interface JournalWriterLock {
  release(): Promise<void>;
}

/**
 * PostgreSQL: a session advisory lock on this schema's journal, held on a pooled connection of its
 * own until `release()` (or until that session ends, as when the process dies). Answers null when
 * another session holds it. SQLite: nothing to hold (a no-op lock); the journal's primary key is
 * what stops a second writer there.
 */
export async function acquireJournalWriterLock(db: Db): Promise<JournalWriterLock | null> {
  if (db.dialect !== 'postgres') return { release: async () => undefined };
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const key = sql`hashtext(current_schema() || '.perp_journal')`;
  return new Promise<JournalWriterLock | null>((resolve, reject) => {
    const session = db.kysely
      .connection()
      .execute(async (conn) => {
        const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${key}) as ok`.execute(conn);
        if (!rows[0]?.ok) {
          resolve(null);
          return;
        }
        resolve({
          release: async () => {
            release();
            await session;
          },
        });
        await released;
        await sql`select pg_advisory_unlock(${key})`.execute(conn);
      })
      .catch((err) => {
        reject(err);
        return undefined;
      });
  });
}
