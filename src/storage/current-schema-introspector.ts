/**
 * A PostgreSQL introspector that sees only the connection's current schema, the one this
 * application owns. Kysely's own introspector lists every schema in the database and calls
 * name-based catalog functions on each; a schema another process drops meanwhile fails that read
 * with 3F000 (invalid_schema_name). The migrator runs on this introspection at every open, so with
 * the stock one a deployment sharing its database (or parallel test suites, each in a schema) could
 * fail to start. These queries read pg_catalog by join only, with no per-row functions.
 */
import { sql, type DatabaseIntrospector, type DatabaseMetadata, type DatabaseMetadataOptions, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely';

const KYSELY_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.#db);
    return rows.map((r) => ({ name: r.name }));
  }

  /** Tables and views of the current schema, without columns (nothing here reads them). */
  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string; kind: string }>`
      select n.nspname as schema, c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname`.execute(this.#db);
    return rows
      .filter((r) => options.withInternalKyselyTables || !KYSELY_TABLES.has(r.name))
      .map((r) => ({ name: r.name, schema: r.schema, isView: r.kind === 'v', columns: [] }));
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
