/** What the migration tests share: a Migrator over the test database, and event rows as stored. */
import { Migrator, sql } from 'kysely';
import type { ChainEventRecord } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { migrationProvider } from '../../src/storage/migrations/index.ts';

export const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
export const USER = '0x00000000000000000000000000000000000000bb';

/** A Migrator for `db`, with its migration table in the test's own PostgreSQL schema. */
export async function migrator(db: Db): Promise<Migrator> {
  const schema =
    db.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0].s : undefined;
  return new Migrator({ db: db.kysely, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
}

/** An `OrderFilled` event at (block, logIndex), of entity `entity`. */
export function eventRecord(block: number, logIndex: number, entity: string | null): ChainEventRecord {
  return {
    blockHash: hash(1000 + block),
    blockNumber: block,
    timestamp: 1_700_000_000_000 + block * 2000,
    txHash: hash(block * 10 + logIndex),
    logIndex,
    ordinal: logIndex,
    address: '0x00000000000000000000000000000000000000aa',
    name: 'OrderFilled',
    args: { orderId: String(block), quantity: '1000000000000000000000000', user: USER },
    entityKey: entity,
  };
}

/** The row an event had in `chain_events` before the indexer column (migrations 0002–0004). */
export function legacyEventRow(e: ChainEventRecord) {
  return {
    block_hash: e.blockHash,
    block_number: e.blockNumber,
    block_timestamp: e.timestamp,
    tx_hash: e.txHash,
    log_index: e.logIndex,
    ordinal: e.ordinal,
    address: e.address,
    event_name: e.name,
    args: JSON.stringify(e.args),
    entity_key: e.entityKey,
  };
}
