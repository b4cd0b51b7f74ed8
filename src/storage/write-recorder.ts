/**
 * Store functions run against a recorder instead of a database: every query they issue is compiled
 * for the database's dialect and kept, not executed. The indexer prepares a whole batch of writes
 * this way (events, projections, checkpoint) while the previous batch is still being written, then
 * hands the list to a batch writer (batch-writer.ts) that runs it in one transaction.
 *
 * Only write functions may be recorded: they see empty results (no rows, nothing affected), so a
 * read is refused rather than silently answered wrongly.
 */
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Db, DialectName } from './database.ts';
import type { DatabaseSchema } from './schema.ts';

export interface WriteRecorder {
  /** Runs `fn` against the recorder and returns the queries it issued, in order. */
  record(fn: (rec: Kysely<DatabaseSchema>) => Promise<unknown>): Promise<CompiledQuery[]>;
}

class RecordingConnection implements DatabaseConnection {
  sink: CompiledQuery[] | undefined;
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.sink) throw new Error('write recorder: a query outside record()');
    if (SelectQueryNode.is(query.query) || /^\s*select\b/i.test(query.sql)) {
      throw new Error('write recorder: reads cannot be recorded');
    }
    this.sink.push(query);
    return { rows: [], numAffectedRows: 0n };
  }
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('write recorder: streaming is not supported');
  }
}

function recordingDialect(dialect: DialectName, connection: RecordingConnection): Dialect {
  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      return connection;
    },
    async beginTransaction() {},
    async commitTransaction() {},
    async rollbackTransaction() {},
    async releaseConnection() {},
    async destroy() {},
  };
  return dialect === 'postgres'
    ? {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => driver,
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      }
    : {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => driver,
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      };
}

export function createWriteRecorder(db: Pick<Db, 'dialect'>): WriteRecorder {
  const connection = new RecordingConnection();
  const kysely = new Kysely<DatabaseSchema>({ dialect: recordingDialect(db.dialect, connection) });
  let busy = false;
  return {
    async record(fn) {
      // One recording at a time: the queries of two would interleave in one list.
      if (busy) throw new Error('write recorder: record() is not reentrant');
      busy = true;
      const sink: CompiledQuery[] = [];
      connection.sink = sink;
      try {
        await fn(kysely);
        return sink;
      } finally {
        connection.sink = undefined;
        busy = false;
      }
    },
  };
}
