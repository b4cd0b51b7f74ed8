/**
 * Migrations are all or nothing on both engines (docs/upgrades.md "Versions and the database"):
 * the pending migrations of a start run in one transaction, so one that fails halfway (after it
 * created a table, altered another and wrote rows) leaves the database exactly as it was, the
 * migrations of the same start that succeeded before it included, and the error names it.
 */
import { SqliteAdapter, type Kysely, type Migration } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { MIGRATIONS, type MigrationList } from '../../src/storage/migrations/index.ts';
import { bareDatabases, schemaSnapshot, tablesOf, type BareHandle } from './release-test-helpers.ts';

/** What each test migration did before it returned or threw. */
let ran: string[] = [];

/** Succeeds: a table, a column and a row. */
const fine: Migration = {
  async up(db: Kysely<any>) {
    ran.push('fine');
    await db.schema.createTable('fine_table').addColumn('id', 'integer', (c) => c.primaryKey()).execute();
    await db.schema.alterTable('candles').addColumn('fine_note', 'text').execute();
    await db.insertInto('meta').values({ key: 'fine', value: 'applied' }).execute();
  },
};

/** Creates a table, alters another, changes rows, then fails (or, `fixed`, returns). */
function halfway(fixed = false): Migration {
  return {
    async up(db: Kysely<any>) {
      ran.push('halfway');
      await db.schema.createTable('half_done').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('note', 'text').execute();
      await db.insertInto('half_done').values({ id: 1, note: 'x' }).execute();
      await db.schema.alterTable('quotes').addColumn('half_note', 'text').execute();
      await db.schema.createIndex('quotes_half_note_idx').on('quotes').column('half_note').execute();
      await db.updateTable('meta').set({ value: 'overwritten' }).where('key', '=', 'before').execute();
      if (!fixed) throw new Error('broken on purpose after its changes');
    },
  };
}

const withTestMigrations = (fixed = false): MigrationList => [...MIGRATIONS, ['9998-fine', fine], ['9999-fails-halfway', halfway(fixed)]];

async function failure(run: Promise<unknown>): Promise<Error> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

describe.each(bareDatabases)('migrations all or nothing ($name)', ({ name, open }) => {
  let h: BareHandle;
  beforeEach(async () => {
    h = await open();
    ran = [];
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('runs the pending migrations in one transaction (SQLite too, with its adapter otherwise unchanged)', () => {
    const adapter = h.db.kysely.getExecutor().adapter;
    expect(adapter.supportsTransactionalDdl).toBe(true);
    // Migrations tell the engines apart by the adapter's class: SQLite's must still be one.
    expect(adapter instanceof SqliteAdapter).toBe(name === 'sqlite');
  });

  it('a migration failing halfway leaves tables, columns, indexes, rows and the migration record as they were; the error names it', async () => {
    await migrateToLatest(h.db, h.schema);
    await setMeta(h.db, 'before', 'kept');
    const before = await schemaSnapshot(h.db);
    expect(before.migrations.map((m) => m.name)).toEqual(MIGRATIONS.map(([n]) => n));

    const err = await failure(migrateToLatest(h.db, h.schema, withTestMigrations()));
    expect(err.message).toBe('storage: migration 9999-fails-halfway failed: broken on purpose after its changes; no migration of this start was kept, the database is as it was');
    // Both ran, in order, in the one transaction: the first one's work went with the second's failure.
    expect(ran).toEqual(['fine', 'halfway']);

    expect(await schemaSnapshot(h.db)).toEqual(before);
    expect(await getMeta(h.db, 'before')).toBe('kept');
    expect(await getMeta(h.db, 'fine')).toBeUndefined();

    // The next start with the migration fixed applies both, as if the failed one had never run.
    ran = [];
    await migrateToLatest(h.db, h.schema, withTestMigrations(true));
    expect(ran).toEqual(['fine', 'halfway']);
    const after = await schemaSnapshot(h.db);
    expect(after.migrations.map((m) => m.name)).toEqual([...MIGRATIONS.map(([n]) => n), '9998-fine', '9999-fails-halfway']);
    expect(tablesOf(after)).toEqual([...tablesOf(before), 'fine_table', 'half_done'].sort());
    expect(after.columns).toContain(name === 'sqlite' ? 'quotes.half_note TEXT' : 'quotes.half_note text');
    expect(await getMeta(h.db, 'before')).toBe('overwritten');
    expect(await getMeta(h.db, 'fine')).toBe('applied');
  });

  it('a first start whose last migration fails keeps none of the others either', async () => {
    const err = await failure(migrateToLatest(h.db, h.schema, [...MIGRATIONS, ['9999-fails-halfway', halfway()]]));
    expect(err.message).toMatch(/^storage: migration 9999-fails-halfway failed: /);
    const after = await schemaSnapshot(h.db);
    // Kysely makes its two bookkeeping tables before the transaction; nothing else is left.
    expect(tablesOf(after)).toEqual(['kysely_migration', 'kysely_migration_lock']);
    expect(after.migrations).toEqual([]);

    await migrateToLatest(h.db, h.schema);
    expect((await schemaSnapshot(h.db)).migrations.map((m) => m.name)).toEqual(MIGRATIONS.map(([n]) => n));
  });
});
