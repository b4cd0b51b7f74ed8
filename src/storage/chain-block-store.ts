/**
 * The indexers' record of on-chain facts: blocks each has seen (`chain_blocks`), the decoded events
 * of its contracts (`chain_events`, one row per log, primary key (indexer, block_number,
 * log_index), as only one branch is ever stored per indexer), and checkpoints
 * (`indexer_checkpoints`: the last block whose events are all stored, by number and hash).
 * Projections are derived from `chain_events`; a reorg deletes the orphaned blocks' rows here and
 * the projections are re-derived (docs/indexer.md).
 *
 * Every function takes the indexer's name (its checkpoint's name) and reads or writes that
 * indexer's rows only: several indexers share these tables and roll back independently.
 */
import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';
import { bulkInsert, bulkInsertWith, chunked, type BulkTable } from './bulk-sql.ts';
import type { ChainEventsTable } from './schema.ts';

export interface ChainBlockRecord {
  hash: string;
  number: number;
  /** Null when the block is known only from its logs. */
  parentHash: string | null;
  /** Milliseconds. */
  timestamp: number;
}

export interface ChainEventRecord {
  blockHash: string;
  blockNumber: number;
  /** Block timestamp, ms. */
  timestamp: number;
  txHash: string;
  logIndex: number;
  /** Position among the transaction's logs from the indexed contracts (see operation-id.ts). */
  ordinal: number;
  /** Lower-case address of the emitting contract. */
  address: string;
  /** Event name, or `Unknown` for a log the decoder does not know (args then hold topics and data). */
  name: string;
  args: Record<string, string | number | boolean | string[]>;
  /** Projection entity (`o:<orderId>`, `c:<operationId>`, `s:<operationId>`), if the event feeds one. */
  entityKey: string | null;
}

export interface Checkpoint {
  number: number;
  hash: string;
}

// ----------------------------------------------------------------- checkpoints

export async function getCheckpoint(db: DbExecutor, name: string): Promise<Checkpoint | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('indexer_checkpoints')
    .select(['block_number', 'block_hash'])
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? { number: Number(row.block_number), hash: row.block_hash } : undefined;
}

/** Creates the checkpoint unless it exists; returns the stored one. */
export async function initCheckpoint(db: DbExecutor, name: string, cp: Checkpoint, now: number): Promise<Checkpoint> {
  await kyselyOf(db)
    .insertInto('indexer_checkpoints')
    .values({ name, block_number: cp.number, block_hash: cp.hash, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  return (await getCheckpoint(db, name)) as Checkpoint;
}

/**
 * Moves the checkpoint from `expected` to `next`; false (nothing changed) when it is no longer at
 * `expected` — another indexer wrote, and the caller must abort its transaction.
 */
export async function moveCheckpoint(db: DbExecutor, name: string, expected: Checkpoint, next: Checkpoint, now: number): Promise<boolean> {
  const res = await kyselyOf(db)
    .updateTable('indexer_checkpoints')
    .set({ block_number: next.number, block_hash: next.hash, updated_at: now })
    .where('name', '=', name)
    .where('block_number', '=', expected.number)
    .where('block_hash', '=', expected.hash)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

// ---------------------------------------------------------------------- blocks

/** An indexer's name: it is written into SQL text (bulk-sql constants) and meta keys. */
const INDEXER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

export function isIndexerName(name: string): boolean {
  return INDEXER_NAME.test(name);
}

function checkName(indexer: string): string {
  if (!INDEXER_NAME.test(indexer)) throw new Error('chain-block-store: an indexer name is 1-32 lower-case letters, digits, _ or -');
  return indexer;
}

/** Insert specs per indexer: the name is a constant of the SQL text, not a value bound per row. */
const specs = new Map<string, { blocks: BulkTable; events: BulkTable }>();

function specsOf(indexer: string): { blocks: BulkTable; events: BulkTable } {
  let s = specs.get(indexer);
  if (!s) {
    const constants = { indexer: checkName(indexer) };
    s = {
      blocks: { ...BLOCK_INSERT, constants },
      events: { ...EVENT_INSERT, constants },
    };
    specs.set(indexer, s);
  }
  return s;
}

const BLOCK_INSERT: BulkTable = {
  table: 'chain_blocks',
  columns: ['hash', 'number', 'parent_hash', 'timestamp'],
  onConflict: { columns: ['indexer', 'hash'], update: 'nothing' },
};

export async function insertBlocks(db: DbExecutor, indexer: string, blocks: readonly ChainBlockRecord[]): Promise<void> {
  await bulkInsert(db, specsOf(indexer).blocks, blocks.map((b) => [b.hash, b.number, b.parentHash, b.timestamp]));
}

export async function getBlockByHash(db: DbExecutor, indexer: string, hash: string): Promise<ChainBlockRecord | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('chain_blocks')
    .selectAll()
    .where('indexer', '=', indexer)
    .where('hash', '=', hash.toLowerCase())
    .executeTakeFirst();
  return row ? { hash: row.hash, number: Number(row.number), parentHash: row.parent_hash, timestamp: Number(row.timestamp) } : undefined;
}

/** Stored blocks at or below `maxNumber`, highest first (the walk back to a common ancestor). */
export async function listBlocksDescending(db: DbExecutor, indexer: string, maxNumber: number, limit: number): Promise<ChainBlockRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('chain_blocks')
    .selectAll()
    .where('indexer', '=', indexer)
    .where('number', '<=', maxNumber)
    .orderBy('number', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ hash: r.hash, number: Number(r.number), parentHash: r.parent_hash, timestamp: Number(r.timestamp) }));
}

// ---------------------------------------------------------------------- events

const EVENT_INSERT: BulkTable = {
  table: 'chain_events',
  columns: [
    'block_hash',
    'block_number',
    'block_timestamp',
    'tx_hash',
    'log_index',
    'ordinal',
    'address',
    'event_name',
    'args',
    'entity_key',
  ],
  onConflict: { columns: ['indexer', 'block_number', 'log_index'], update: 'nothing' },
};

export async function insertEvents(db: DbExecutor, indexer: string, events: readonly ChainEventRecord[]): Promise<void> {
  await bulkInsertWith(db, specsOf(indexer).events, events.length, (p, o, i) => {
    const e = events[i];
    const args = JSON.stringify(e.args);
    // V8 answers JSON.stringify with a chain of pieces (32, 64, 128... characters); reading a
    // character flattens it in place. The indexer holds a batch's rows until they are written, and
    // a flat string is one object for the garbage collector to copy instead of five or six.
    args.charCodeAt(0);
    p[o] = e.blockHash;
    p[o + 1] = e.blockNumber;
    p[o + 2] = e.timestamp;
    p[o + 3] = e.txHash;
    p[o + 4] = e.logIndex;
    p[o + 5] = e.ordinal;
    p[o + 6] = e.address;
    p[o + 7] = e.name;
    p[o + 8] = args;
    p[o + 9] = e.entityKey;
  });
}

function eventFromRow(r: Selectable<ChainEventsTable>): ChainEventRecord {
  return {
    blockHash: r.block_hash,
    blockNumber: Number(r.block_number),
    timestamp: Number(r.block_timestamp),
    txHash: r.tx_hash,
    logIndex: Number(r.log_index),
    ordinal: Number(r.ordinal),
    address: r.address,
    name: r.event_name,
    args: JSON.parse(r.args) as ChainEventRecord['args'],
    entityKey: r.entity_key,
  };
}

/** The indexer's events of blocks above `number`, in chain order. */
export async function listEventsAbove(db: DbExecutor, indexer: string, number: number): Promise<ChainEventRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('chain_events')
    .selectAll()
    .where('indexer', '=', indexer)
    .where('block_number', '>', number)
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  return rows.map(eventFromRow);
}

/** Every stored event of these entities of the indexer, in chain order. */
export async function listEventsOfEntities(db: DbExecutor, indexer: string, entityKeys: readonly string[]): Promise<ChainEventRecord[]> {
  const out: ChainEventRecord[] = [];
  for (const keys of chunked(entityKeys)) {
    const rows = await kyselyOf(db)
      .selectFrom('chain_events')
      .selectAll()
      .where('indexer', '=', indexer)
      .where('entity_key', 'in', keys)
      .execute();
    for (const r of rows) out.push(eventFromRow(r));
  }
  return out.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

export async function countEvents(db: DbExecutor, indexer: string): Promise<number> {
  const row = await kyselyOf(db)
    .selectFrom('chain_events')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('indexer', '=', indexer)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes the indexer's blocks above `number` and their events (the orphaned part of a reorg). */
export async function deleteBlocksAbove(db: DbExecutor, indexer: string, number: number): Promise<void> {
  const k = kyselyOf(db);
  await k.deleteFrom('chain_events').where('indexer', '=', indexer).where('block_number', '>', number).execute();
  await k.deleteFrom('chain_blocks').where('indexer', '=', indexer).where('number', '>', number).execute();
}
