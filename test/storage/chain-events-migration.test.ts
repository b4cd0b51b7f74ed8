import { Migrator, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { insertEvents, listEventsAbove, type ChainEventRecord } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { migrationProvider } from '../../src/storage/migrations/index.ts';
import { isUniqueViolation } from '../../src/storage/storage-errors.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function event(block: number, logIndex: number, entity: string | null): ChainEventRecord {
  return {
    blockHash: hash(1000 + block),
    blockNumber: block,
    timestamp: 1_700_000_000_000 + block * 2000,
    txHash: hash(block * 10 + logIndex),
    logIndex,
    ordinal: logIndex,
    address: '0x00000000000000000000000000000000000000aa',
    name: 'OrderFilled',
    args: { orderId: String(block), quantity: '1000000000000000000000000', user: '0x00000000000000000000000000000000000000bb' },
    entityKey: entity,
  };
}

async function migrator(db: Db): Promise<Migrator> {
  const schema =
    db.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0].s : undefined;
  return new Migrator({ db: db.kysely, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
}

describe.each(testDatabases)('migration 0003: chain_events keyed by position ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('keeps every stored event across the change, and down and up again', async () => {
    const m = await migrator(db);
    const down = await m.migrateTo('0002-stock-indexer');
    expect(down.error).toBeUndefined();
    const before = [event(5, 0, 'o:5'), event(5, 1, null), event(7, 0, 'o:7'), event(9, 3, 'o:5')];
    // The store's insert names the new key in its ON CONFLICT; under the old layout, plain rows.
    await (db.kysely as Kysely<any>)
      .insertInto('chain_events')
      .values(
        before.map((e) => ({
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
        })),
      )
      .execute();
    // Under the old key (block_hash, log_index) the same position in another block is a new row.
    await sql`insert into chain_events (block_hash, block_number, block_timestamp, tx_hash, log_index, ordinal, address, event_name, args, entity_key)
      values (${hash(1)}, 9, 0, ${hash(2)}, 3, 0, '0x00', 'X', '{}', null)`.execute(db.kysely);
    await sql`delete from chain_events where block_hash = ${hash(1)}`.execute(db.kysely);

    const up = await m.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(await listEventsAbove(db, 'stock', 0)).toEqual(before);
    expect(await listEventsAbove(db, 'stock', 6)).toEqual(before.slice(2));
  });

  it('refuses a second event at a stored position, whatever its block hash', async () => {
    await insertEvents(db, 'stock', [event(5, 0, 'o:5')]);
    const again = sql`insert into chain_events (indexer, block_hash, block_number, block_timestamp, tx_hash, log_index, ordinal, address, event_name, args, entity_key)
      values ('stock', ${hash(1)}, 5, 0, ${hash(2)}, 0, 0, '0x00', 'X', '{}', null)`.execute(db.kysely);
    const err = await again.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isUniqueViolation(err)).toBe(true);
    // The indexer's own insert of an event it already stored is a no-op, not an error.
    await insertEvents(db, 'stock', [event(5, 0, 'o:5')]);
    expect(await listEventsAbove(db, 'stock', 0)).toEqual([event(5, 0, 'o:5')]);
  });
});
