import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { insertEvents, listEventsAbove } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { isUniqueViolation } from '../../src/storage/storage-errors.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { eventRecord, hash, legacyEventRow, migrator } from './migration-test-helpers.ts';



describe.each(testDatabases)('migration 0003: chain_events keyed by position ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('keeps every stored event across the change, and down and up again', async () => {
    const m = await migrator(db);
    const down = await m.migrateTo('0002-stock-indexer');
    expect(down.error).toBeUndefined();
    const before = [eventRecord(5, 0, 'o:5'), eventRecord(5, 1, null), eventRecord(7, 0, 'o:7'), eventRecord(9, 3, 'o:5')];
    // The store's insert names the new key in its ON CONFLICT; under the old layout, plain rows.
    await (db.kysely as Kysely<any>)
      .insertInto('chain_events')
      .values(
        before.map(legacyEventRow),
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
    await insertEvents(db, 'stock', [eventRecord(5, 0, 'o:5')]);
    const again = sql`insert into chain_events (indexer, block_hash, block_number, block_timestamp, tx_hash, log_index, ordinal, address, event_name, args, entity_key)
      values ('stock', ${hash(1)}, 5, 0, ${hash(2)}, 0, 0, '0x00', 'X', '{}', null)`.execute(db.kysely);
    const err = await again.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isUniqueViolation(err)).toBe(true);
    // The indexer's own insert of an event it already stored is a no-op, not an error.
    await insertEvents(db, 'stock', [eventRecord(5, 0, 'o:5')]);
    expect(await listEventsAbove(db, 'stock', 0)).toEqual([eventRecord(5, 0, 'o:5')]);
  });
});
