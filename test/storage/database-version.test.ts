/**
 * No silent downgrade of the database (docs/upgrades.md "Versions and the database"): each start
 * records its release in `app_releases`; a release refuses, naming both versions and writing
 * nothing, a database a newer one wrote; and builds before 0.2.0, which never read `app_releases`,
 * refuse an upgraded database for the migration they do not know.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { assertDatabaseReadable, listAppReleases, NewerDatabaseError, readDatabaseVersion, recordAppRelease } from '../../src/storage/database-version.ts';
import { checkDatabaseReadable, migrateToLatest, openDatabase, pendingMigrations, type Db } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { MIGRATIONS, migrationProviderOf } from '../../src/storage/migrations/index.ts';
import { bareDatabases, schemaSnapshot, type BareHandle } from './release-test-helpers.ts';
import { holdWriteLock } from '../support/test-databases.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const LATEST = MIGRATIONS.at(-1)![0];

async function refusal(run: Promise<unknown>): Promise<NewerDatabaseError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NewerDatabaseError);
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe('CONFLICT');
  expect((err as AppError).retryable).toBe(false);
  const message = (err as Error).message;
  // Never where the database is.
  expect(message).not.toMatch(/postgres(ql)?:\/\/|\.sqlite|tokex-rel-|127\.0\.0\.1/);
  return err as NewerDatabaseError;
}

/** A row in kysely_migration as Kysely writes it. */
const appliedMigration = (db: Db, name: string) =>
  sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date(1_800_000_000_000).toISOString()})`.execute(db.kysely);

/** Everything the refusals must leave alone: the shape, the releases, a row of data. */
async function state(db: Db) {
  const facts = await readDatabaseVersion(db);
  return { shape: await schemaSnapshot(db), releases: facts.releases, meta: await getMeta(db, 'marker') };
}


/** The migrations 0.1.0 knew: everything before 0026-app-releases. */
const MIGRATIONS_OF_0_1_0 = MIGRATIONS.slice(0, MIGRATIONS.findIndex(([name]) => name === '0026-app-releases'));
describe('APP_VERSION', () => {
  it("is package.json's version", async () => {
    const { readFileSync } = await import('node:fs');
    expect(APP_VERSION).toBe((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version);
  });
});

describe.each(bareDatabases)('the database records its releases and refuses a downgrade ($name)', ({ open }) => {
  let h: BareHandle;
  beforeEach(async () => {
    h = await open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('records this release once, at its first start', async () => {
    expect(await readDatabaseVersion(h.db)).toEqual({ appliedMigrations: undefined, releases: undefined });
    const before = Date.now();
    const first = await h.reopen();
    const releases = await listAppReleases(first);
    expect(releases.map((r) => r.version)).toEqual([APP_VERSION]);
    expect(releases[0].firstStartedAt).toBeGreaterThanOrEqual(before);
    expect(releases[0].firstStartedAt).toBeLessThanOrEqual(Date.now());
    const again = await h.reopen();
    expect(await listAppReleases(again)).toEqual(releases);
    // An older release recorded beside it is no obstacle, and the list is in version order.
    await recordAppRelease(again, '0.1.0', 1);
    expect((await listAppReleases(again)).map((r) => r.version)).toEqual(['0.1.0', APP_VERSION]);
    await expect(h.reopen()).resolves.toBeDefined();
    // Versions compare as versions: 10.0.0 is newer than 9.0.0 although it sorts first as text.
    await recordAppRelease(again, '10.0.0', 2);
    await recordAppRelease(again, '9.0.0', 3);
    expect((await listAppReleases(again)).map((r) => r.version)).toEqual(['0.1.0', APP_VERSION, '9.0.0', '10.0.0']);
    expect((await refusal(h.reopen())).databaseVersion).toBe('10.0.0');
  });

  it('refuses a database a newer release has opened, naming both versions, and writes nothing', async () => {
    const db = await h.reopen();
    await setMeta(db, 'marker', 'untouched');
    await recordAppRelease(db, '0.3.0', 1_800_000_000_000);
    // So that a start which went on would show: it would add this release's row again.
    await sql`delete from app_releases where version = ${APP_VERSION}`.execute(db.kysely);
    const before = await state(db);

    const err = await refusal(h.reopen());
    expect(err.message).toBe(`this database was written by tokex 0.3.0 (schema ${LATEST}); this is tokex ${APP_VERSION}, which cannot read it: start tokex 0.3.0 or later`);
    expect(err.databaseVersion).toBe('0.3.0');
    expect(err.appVersion).toBe(APP_VERSION);
    expect(err.unknownMigrations).toEqual([]);
    expect(await state(db)).toEqual(before);

    // A prerelease of a newer version is newer too; this release's own and older ones are not.
    await sql`delete from app_releases`.execute(db.kysely);
    await recordAppRelease(db, '0.3.0-rc.1');
    expect((await refusal(h.reopen())).message).toContain('written by tokex 0.3.0-rc.1 (');
    await sql`delete from app_releases`.execute(db.kysely);
    await recordAppRelease(db, '0.1.0');
    await recordAppRelease(db, APP_VERSION);
    await expect(h.reopen()).resolves.toBeDefined();
  });

  it('refuses a database holding a migration this build does not know, before applying its own pending ones', async () => {
    // 0.1.0's last schema, then a newer release's migration on top (as if it had skipped ours).
    await migrateToLatest(h.db, h.schema, MIGRATIONS_OF_0_1_0);
    await setMeta(h.db, 'marker', 'untouched');
    await appliedMigration(h.db, '0031-future-thing');
    const before = await state(h.db);
    expect(before.releases).toBeUndefined();

    const err = await refusal(h.reopen());
    expect(err.message).toBe(
      `this database was written by a later build of tokex (schema 0031-future-thing, which this build does not know); this is tokex ${APP_VERSION} (schema ${LATEST}), which cannot read it: start the tokex that wrote it or a later one`,
    );
    expect(err.unknownMigrations).toEqual(['0031-future-thing']);
    // 0026 and later were pending and not applied: no app_releases table, nothing else either.
    expect(await state(h.db)).toEqual(before);

    // A newer release that ran every migration of ours and its own, and recorded itself: named.
    await sql`delete from kysely_migration where name = '0031-future-thing'`.execute(h.db.kysely);
    const current = await h.reopen();
    await appliedMigration(current, '0031-future-thing');
    await recordAppRelease(current, '0.3.0');
    expect((await refusal(h.reopen())).message).toBe(
      `this database was written by tokex 0.3.0 (schema 0031-future-thing, which this build does not know); this is tokex ${APP_VERSION} (schema ${LATEST}), which cannot read it: start tokex 0.3.0 or later`,
    );
  });

  it('says the same when a newer release migrates the database between the check and the migrations', async () => {
    const db = await h.reopen();
    await appliedMigration(db, '0031-future-thing');
    // migrateToLatest alone, as after a check that passed: Kysely's "corrupted migrations", explained.
    const err = await refusal(migrateToLatest(db, h.schema));
    expect(err.unknownMigrations).toEqual(['0031-future-thing']);
    await expect(assertDatabaseReadable(db, { schema: h.schema })).rejects.toBeInstanceOf(NewerDatabaseError);
    // The list of a later build that knows it passes.
    await expect(assertDatabaseReadable(db, { schema: h.schema, migrations: [...MIGRATIONS, ['0031-future-thing', { up: async () => undefined }]] })).resolves.toEqual({
      appliedMigrations: [...MIGRATIONS.map(([n]) => n), '0031-future-thing'],
      releases: [{ version: APP_VERSION, firstStartedAt: expect.any(Number) }],
    });
  });

  it('a build before 0.2.0 (without migration 0026) refuses the upgraded database and changes nothing', async () => {
    const db = await h.reopen();
    await setMeta(db, 'marker', 'untouched');
    const before = await state(db);
    expect(before.releases?.map((r) => r.version)).toEqual([APP_VERSION]);

    // 0.1.0's own migration run, as its database.ts made it: a Migrator over the migrations it knew.
    const older = MIGRATIONS_OF_0_1_0;
    expect(older.at(-1)![0]).toBe('0025-quote-multiplier');
    const migrator = new Migrator({ db: db.kysely, provider: migrationProviderOf(older), ...(h.schema ? { migrationTableSchema: h.schema } : {}) });
    const { error, results } = await migrator.migrateToLatest();
    expect(String((error as Error | undefined)?.message)).toBe('corrupted migrations: previously executed migration 0026-app-releases is missing');
    expect(results).toBeUndefined();
    expect(await state(db)).toEqual(before);
  });
});

describe('the migrations a start would apply (pendingMigrations, for `tokex upgrade`)', () => {
  it.each(bareDatabases)('lists them in order, reading only, and refuses a newer database ($name)', async ({ open }) => {
    const h = await open();
    try {
      const where = h.schema ? { url: DATABASE_URL, schema: h.schema } : { sqlitePath: (await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(h.db.kysely)).rows[0].file };
      expect(await pendingMigrations(where)).toEqual(MIGRATIONS.map(([n]) => n));
      await migrateToLatest(h.db, h.schema, MIGRATIONS.slice(0, 18));
      const before = await schemaSnapshot(h.db);
      expect(await pendingMigrations(where)).toEqual(MIGRATIONS.slice(18).map(([n]) => n));
      expect(await schemaSnapshot(h.db)).toEqual(before);
      await h.reopen();
      expect(await pendingMigrations(where)).toEqual([]);
      await recordAppRelease(h.db, '9.0.0');
      expect((await refusal(pendingMigrations(where))).databaseVersion).toBe('9.0.0');
    } finally {
      await h.dispose();
    }
  });

  it('lists every migration for a SQLite file that does not exist, without creating it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokex-rel-'));
    try {
      expect(await pendingMigrations({ sqlitePath: join(dir, 'data', 'tokex.sqlite') })).toEqual(MIGRATIONS.map(([n]) => n));
      expect(existsSync(join(dir, 'data'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the early check of `tokex start` (checkDatabaseReadable)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('opening a database that needs nothing writes nothing: it opens beside a writer holding the SQLite lock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokex-rel-'));
    dirs.push(dir);
    const sqlitePath = join(dir, 'tokex.sqlite');
    const holder = await openDatabase({ sqlitePath });
    const lock = await holdWriteLock(holder);
    try {
      // A migration transaction or the release's row would wait for the lock, and give up after 200 ms.
      const reader = await openDatabase({ sqlitePath, connectTimeoutMs: 200 });
      expect((await listAppReleases(reader)).map((r) => r.version)).toEqual([APP_VERSION]);
      await reader.close();
    } finally {
      lock.release();
      await lock.committed;
      await holder.close();
    }
  });

  it('passes a SQLite file that does not exist without creating it, and refuses a newer one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokex-rel-'));
    dirs.push(dir);
    const sqlitePath = join(dir, 'data', 'tokex.sqlite');
    await checkDatabaseReadable({ sqlitePath });
    expect(existsSync(join(dir, 'data'))).toBe(false);

    const db = await openDatabase({ sqlitePath });
    await recordAppRelease(db, '9.0.0');
    await db.close();
    const err = await refusal(checkDatabaseReadable({ sqlitePath }));
    expect(err.message).toMatch(/^this database was written by tokex 9\.0\.0 \(schema /);
    await refusal(openDatabase({ sqlitePath }));
  });

  it.skipIf(!DATABASE_URL)('refuses a newer PostgreSQL schema, and passes one that does not exist yet', async () => {
    const h = await bareDatabases.find((d) => d.name === 'postgres')!.open();
    try {
      await checkDatabaseReadable({ url: DATABASE_URL, schema: `${h.schema}_absent` });
      const db = await h.reopen();
      await recordAppRelease(db, '9.0.0');
      expect((await refusal(checkDatabaseReadable({ url: DATABASE_URL, schema: h.schema }))).databaseVersion).toBe('9.0.0');
    } finally {
      await h.dispose();
      const cleanup = await openDatabase({ url: DATABASE_URL, migrate: false });
      await sql`drop schema if exists ${sql.id(`${h.schema}_absent`)} cascade`.execute(cleanup.kysely);
      await cleanup.close();
    }
  });
});
