/**
 * No silent downgrade of the database (docs/upgrades.md "Versions and the database"). Each release
 * records itself in `app_releases` (migration 0026) when it opens the database; a release refuses,
 * before it migrates or writes anything, a database that
 * - holds a migration it does not know (a newer release's schema), or
 * - was opened by a newer release (whose data it may not read, even without a schema change).
 *
 * Releases before 0.2.0 do not read `app_releases`; they refuse the database for migration 0026's
 * name, which they do not know (Kysely's "corrupted migrations").
 */
import { Kysely, sql } from 'kysely';
import { APP_VERSION, compareVersions, isVersion } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import { MIGRATIONS, type MigrationList } from './migrations/index.ts';
import type { Db, DbExecutor } from './database-handle.ts';

/** The tables the check reads: Kysely's record of applied migrations, and the releases'. */
const MIGRATION_TABLE = 'kysely_migration';
const RELEASES_TABLE = 'app_releases';

/** A database written by a release newer than this one: it is left as it was. */
export class NewerDatabaseError extends AppError {
  /** The newest release recorded in the database, when it is newer than this one. */
  readonly databaseVersion: string | undefined;
  readonly appVersion: string;
  /** Applied migrations this build does not know, by name. */
  readonly unknownMigrations: readonly string[];

  constructor(facts: { databaseVersion?: string; appVersion: string; unknownMigrations: readonly string[]; schema?: string; knownSchema?: string }) {
    const by = facts.databaseVersion !== undefined ? `tokex ${facts.databaseVersion}` : 'a later build of tokex';
    const schema = facts.schema === undefined ? '' : facts.unknownMigrations.length > 0 ? ` (schema ${facts.schema}, which this build does not know)` : ` (schema ${facts.schema})`;
    const mine = facts.unknownMigrations.length > 0 && facts.knownSchema !== undefined ? ` (schema ${facts.knownSchema})` : '';
    const start = facts.databaseVersion !== undefined ? `tokex ${facts.databaseVersion} or later` : 'the tokex that wrote it or a later one';
    // CONFLICT: the request (this start) is refused for the state it meets; nothing is wrong with either.
    super('CONFLICT', `this database was written by ${by}${schema}; this is tokex ${facts.appVersion}${mine}, which cannot read it: start ${start}`, {
      detail: { databaseVersion: facts.databaseVersion, appVersion: facts.appVersion, unknownMigrations: facts.unknownMigrations },
    });
    this.databaseVersion = facts.databaseVersion;
    this.appVersion = facts.appVersion;
    this.unknownMigrations = facts.unknownMigrations;
  }
}

/** What the database says of the releases that wrote it. */
export interface DatabaseVersionFacts {
  /** Names of the applied migrations, sorted; undefined when no migration ever ran. */
  appliedMigrations: string[] | undefined;
  /** Releases recorded in `app_releases`; undefined before migration 0026. */
  releases: AppRelease[] | undefined;
}

export interface AppRelease {
  version: string;
  /** ms since the epoch. */
  firstStartedAt: number;
}

export interface DatabaseVersionOptions {
  /** PostgreSQL: the schema holding the tables. Default: the connection's current schema. */
  schema?: string;
  /** The migrations this build knows. Default: MIGRATIONS. */
  migrations?: MigrationList;
  /** This build's release. Default: APP_VERSION. */
  appVersion?: string;
}

type VersionDb = Pick<Db, 'kysely' | 'dialect'>;

/** Reads the applied migrations and the recorded releases, without writing or creating anything. */
export async function readDatabaseVersion(db: VersionDb, opts: Pick<DatabaseVersionOptions, 'schema'> = {}): Promise<DatabaseVersionFacts> {
  const names = [MIGRATION_TABLE, RELEASES_TABLE];
  const { rows: tables } =
    db.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name in (${sql.join(names)})`.execute(db.kysely)
      : await sql<{ name: string }>`
          select table_name as name from information_schema.tables
          where table_schema = ${opts.schema ?? sql`current_schema()`} and table_name in (${sql.join(names)})`.execute(db.kysely);
  const has = new Set(tables.map((t) => t.name));
  // On PostgreSQL the tables are named in their schema: the search path may lead elsewhere.
  const table = (name: string) => (db.dialect === 'postgres' && opts.schema ? sql.id(opts.schema, name) : sql.id(name));
  const appliedMigrations = has.has(MIGRATION_TABLE)
    ? (await sql<{ name: string }>`select name from ${table(MIGRATION_TABLE)}`.execute(db.kysely)).rows.map((r) => r.name).sort()
    : undefined;
  const releases = has.has(RELEASES_TABLE)
    ? (await sql<{ version: string; first_started_at: number | string }>`select version, first_started_at from ${table(RELEASES_TABLE)}`.execute(db.kysely)).rows
        .map((r) => ({ version: r.version, firstStartedAt: Number(r.first_started_at) }))
        .sort(byVersion)
    : undefined;
  return { appliedMigrations, releases };
}

/** Oldest first; a version that is not one sorts last (it is treated as newer than any). */
function byVersion(a: AppRelease, b: AppRelease): number {
  const va = isVersion(a.version);
  const vb = isVersion(b.version);
  if (va && vb) return compareVersions(a.version, b.version);
  if (va !== vb) return va ? -1 : 1;
  return a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

/**
 * Throws NewerDatabaseError when the database was written by a newer release: it holds a migration
 * this build does not know, or `app_releases` names a version above this build's; else answers what
 * it read. Reads only; a database without the tables (empty, or older than 0026) passes. openDatabase calls it before it
 * migrates, and `tokex start` before it starts anything (src/app/run-stack.ts).
 */
export async function assertDatabaseReadable(db: VersionDb, opts: DatabaseVersionOptions = {}): Promise<DatabaseVersionFacts> {
  const appVersion = opts.appVersion ?? APP_VERSION;
  const migrations = opts.migrations ?? MIGRATIONS;
  const facts = await readDatabaseVersion(db, opts);
  const { appliedMigrations = [], releases = [] } = facts;
  const known = new Set(migrations.map(([name]) => name));
  const unknownMigrations = appliedMigrations.filter((name) => !known.has(name));
  const newest = releases.at(-1)?.version;
  const newer = newest !== undefined && (!isVersion(newest) || compareVersions(newest, appVersion) > 0);
  if (unknownMigrations.length === 0 && !newer) return facts;
  throw new NewerDatabaseError({
    databaseVersion: newer ? newest : undefined,
    appVersion,
    unknownMigrations,
    schema: unknownMigrations.at(-1) ?? appliedMigrations.at(-1),
    knownSchema: migrations.map(([name]) => name).sort().at(-1),
  });
}

/** The releases recorded in `app_releases`, oldest first. */
export async function listAppReleases(db: DbExecutor): Promise<AppRelease[]> {
  const rows = await (db instanceof Kysely ? db : db.kysely).selectFrom('app_releases').select(['version', 'first_started_at']).execute();
  return rows.map((r) => ({ version: r.version, firstStartedAt: Number(r.first_started_at) })).sort(byVersion);
}

/** Records `version` as started on this database, once: a later start of it keeps the first time. */
export async function recordAppRelease(db: DbExecutor, version: string = APP_VERSION, at: number = Date.now()): Promise<void> {
  await (db instanceof Kysely ? db : db.kysely)
    .insertInto('app_releases')
    .values({ version, first_started_at: at })
    .onConflict((oc) => oc.column('version').doNothing())
    .execute();
}
