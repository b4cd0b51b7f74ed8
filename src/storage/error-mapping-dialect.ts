import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { StorageUnavailableError } from '../errors/app-error.ts';
import type { SqliteWriteGate } from './sqlite-write-gate.ts';
import { toStorageError } from './storage-errors.ts';

/**
 * Wraps a Kysely dialect so that every store sees StorageUnavailableError for a lost or refused
 * connection, whichever engine is underneath, instead of a driver-specific error.
 *
 * On SQLite it also starts transactions with BEGIN IMMEDIATE: a deferred transaction that reads and
 * then writes can fail with SQLITE_BUSY at once when another process wrote in between (the busy
 * timeout does not apply to that upgrade), whereas IMMEDIATE takes the write lock up front and waits.
 *
 * And with `transactionalDdl` it tells Kysely that schema changes are transactional, which SQLite's
 * are although Kysely's SqliteAdapter says otherwise: its Migrator then runs the pending migrations
 * of a start in one transaction (BEGIN IMMEDIATE, so a second process migrating the same file waits
 * and then finds nothing pending), and a migration that fails leaves the database as it was instead
 * of half migrated. Only the Migrator reads the flag.
 *
 * With a `writeGate` (SQLite, sqlite-write-gate.ts) every write of this connection passes the
 * process's gate of the file first: a transaction from before its BEGIN to its COMMIT or ROLLBACK,
 * a statement outside a transaction that is not a SELECT for its own run. Reads in a transaction
 * are inside it already; reads outside one need no lock in WAL mode.
 */
export class ErrorMappingDialect implements Dialect {
  readonly #inner: Dialect;
  readonly #immediateTransactions: boolean;
  readonly #transactionalDdl: boolean;

  readonly #introspector: ((db: Kysely<any>) => DatabaseIntrospector) | undefined;
  readonly #writeGate: SqliteWriteGate | undefined;

  constructor(
    inner: Dialect,
    options: { immediateTransactions?: boolean; transactionalDdl?: boolean; introspector?: (db: Kysely<any>) => DatabaseIntrospector; writeGate?: SqliteWriteGate } = {},
  ) {
    this.#inner = inner;
    this.#immediateTransactions = options.immediateTransactions ?? false;
    this.#transactionalDdl = options.transactionalDdl ?? false;
    this.#introspector = options.introspector;
    this.#writeGate = options.writeGate;
  }

  createDriver(): Driver {
    return new ErrorMappingDriver(this.#inner.createDriver(), this.#immediateTransactions, this.#writeGate);
  }
  createQueryCompiler(): QueryCompiler {
    return this.#inner.createQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    const adapter = this.#inner.createAdapter();
    if (!this.#transactionalDdl || adapter.supportsTransactionalDdl) return adapter;
    // The same adapter in every other respect, `instanceof` included (migrations tell the engines
    // apart by their adapter's class).
    return Object.create(adapter, { supportsTransactionalDdl: { value: true } }) as DialectAdapter;
  }
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.#introspector ? this.#introspector(db) : this.#inner.createIntrospector(db);
  }
}

async function mapped<T>(run: () => Promise<T>): Promise<T> {
  try {
    // `run` may throw synchronously (better-sqlite3's prepare does): keep it inside the try.
    return await run();
  } catch (err) {
    throw toStorageError(err);
  }
}

class ErrorMappingConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  readonly gate: SqliteWriteGate | undefined;
  /** Between BEGIN and COMMIT or ROLLBACK (set by the driver). */
  inTransaction = false;
  /** This connection passed the gate and has not left it. */
  holdsGate = false;
  constructor(inner: DatabaseConnection, gate: SqliteWriteGate | undefined) {
    this.inner = inner;
    this.gate = gate;
  }
  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const gate = this.gate;
    if (gate === undefined || this.inTransaction || compiledQuery.query.kind === 'SelectQueryNode') return mapped(() => this.inner.executeQuery<R>(compiledQuery));
    return mapped(async () => {
      await gate.enter();
      try {
        return await this.inner.executeQuery<R>(compiledQuery);
      } finally {
        gate.leave();
      }
    });
  }
  enterGate(): Promise<void> | undefined {
    if (this.gate === undefined || this.holdsGate) return undefined;
    this.holdsGate = true;
    return this.gate.enter();
  }
  leaveGate(): void {
    if (!this.holdsGate) return;
    this.holdsGate = false;
    this.gate?.leave();
  }
  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(compiledQuery, chunkSize);
    } catch (err) {
      throw toStorageError(err);
    }
  }
}

class ErrorMappingDriver implements Driver {
  readonly #inner: Driver;
  readonly #immediate: boolean;
  readonly #gate: SqliteWriteGate | undefined;
  // Kysely hands our wrapper back to us; the inner driver needs its own connection object.
  readonly #wrappers = new WeakMap<DatabaseConnection, ErrorMappingConnection>();

  constructor(inner: Driver, immediate: boolean, gate: SqliteWriteGate | undefined) {
    this.#inner = inner;
    this.#immediate = immediate;
    this.#gate = gate;
  }

  #wrap(conn: DatabaseConnection): ErrorMappingConnection {
    let w = this.#wrappers.get(conn);
    if (!w) {
      w = new ErrorMappingConnection(conn, this.#gate);
      this.#wrappers.set(conn, w);
    }
    return w;
  }

  init(): Promise<void> {
    return mapped(() => this.#inner.init());
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      return this.#wrap(await this.#inner.acquireConnection());
    } catch (err) {
      // Not getting a connection at all is unavailability, whatever the driver called it.
      throw err instanceof StorageUnavailableError ? err : new StorageUnavailableError({ cause: err });
    }
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const inner = unwrap(connection);
    const w = connection instanceof ErrorMappingConnection ? connection : undefined;
    const entering = w?.enterGate();
    if (entering !== undefined) await entering;
    try {
      if (this.#immediate) await mapped(async () => void (await inner.executeQuery(CompiledQuery.raw('begin immediate'))));
      else await mapped(() => this.#inner.beginTransaction(inner, settings));
    } catch (err) {
      w?.leaveGate();
      throw err;
    }
    if (w) w.inTransaction = true;
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await mapped(() => this.#inner.commitTransaction(unwrap(connection)));
    // A failed COMMIT keeps the gate: Kysely rolls back next, and the rollback leaves it.
    this.#ended(connection);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await mapped(() => this.#inner.rollbackTransaction(unwrap(connection)));
    } finally {
      this.#ended(connection);
    }
  }
  #ended(connection: DatabaseConnection): void {
    if (!(connection instanceof ErrorMappingConnection)) return;
    connection.inTransaction = false;
    connection.leaveGate();
  }
  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    const fn = this.#inner.savepoint;
    if (!fn) throw new Error('savepoints are not supported by this driver');
    return mapped(() => fn.call(this.#inner, unwrap(connection), name, compile));
  }
  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    const fn = this.#inner.rollbackToSavepoint;
    if (!fn) throw new Error('savepoints are not supported by this driver');
    return mapped(() => fn.call(this.#inner, unwrap(connection), name, compile));
  }
  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    const fn = this.#inner.releaseSavepoint;
    if (!fn) throw new Error('savepoints are not supported by this driver');
    return mapped(() => fn.call(this.#inner, unwrap(connection), name, compile));
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(unwrap(connection));
  }
  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof ErrorMappingConnection ? connection.inner : connection;
}
