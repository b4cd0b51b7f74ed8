import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../src/errors/app-error.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { MIGRATIONS } from '../../src/storage/migrations/index.ts';
import { withTransaction } from '../../src/storage/transaction.ts';
import { holdWriteLock, testDatabases, uniqueSchemaName } from '../support/test-databases.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokex-dbt-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** Every table the migrations create; a new migration's tables are added here on purpose. */
const APP_TABLES = [
  'api_keys',
  'app_releases',
  'candles',
  'chain_blocks',
  'chain_events',
  'corporate_actions',
  'dividend_payouts',
  'indexer_checkpoints',
  'leases',
  'meta',
  'perp_api_key_nonces',
  'perp_candles',
  'perp_collateral_events',
  'perp_funding_rates',
  'perp_insurance_moves',
  'perp_journal',
  'perp_liquidity_moves',
  'perp_order_nonces',
  'perp_orders',
  'perp_reserve_epochs',
  'perp_reserve_leaves',
  'perp_reserve_nodes',
  'perp_session_addresses',
  'perp_session_nonces',
  'perp_sessions',
  'perp_snapshots',
  'perp_trades',
  'perp_transactions',
  'perp_vault_txs',
  'perp_withdrawals',
  'quotes',
  'role_status',
  'stock_calldata_requests',
  'stock_cash_operations',
  'stock_operations',
  'stock_order_fills',
  'stock_order_reasons',
  'stock_orders',
  'stock_positions',
  'stock_relay_requests',
  'stock_tx_records',
];

async function tableNames(db: Db): Promise<string[]> {
  const tables = await db.kysely.introspection.getTables();
  return tables.map((t) => t.name).sort();
}

describe('openDatabase on SQLite', () => {
  it('creates the parent folder and sets durable pragmas', async () => {
    const path = join(tempDir(), 'nested', 'deeper', 'app.sqlite');
    const db = await openDatabase({ sqlitePath: path });
    try {
      expect(db.dialect).toBe('sqlite');
      expect(existsSync(path)).toBe(true);
      const pragma = async (name: string) => (await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(db.kysely)).rows[0];
      expect(await pragma('journal_mode')).toEqual({ journal_mode: 'wal' });
      expect(await pragma('synchronous')).toEqual({ synchronous: 2 }); // 2 = FULL
      expect(await pragma('page_size')).toEqual({ page_size: 4096 });
      expect(await pragma('foreign_keys')).toEqual({ foreign_keys: 1 });
      expect(await pragma('temp_store')).toEqual({ temp_store: 2 }); // 2 = MEMORY: statement journals never spill to a file
      expect(Number(Object.values((await pragma('busy_timeout'))!)[0])).toBeGreaterThan(0);
      expect(await tableNames(db)).toEqual(APP_TABLES);
    } finally {
      await db.close();
    }
  });

  it('runs migrations once: reopening is a no-op and keeps the data', async () => {
    const path = join(tempDir(), 'reopen.sqlite');
    const first = await openDatabase({ sqlitePath: path });
    await setMeta(first, 'cursor', '12345678901234567890.000000000000000001');
    await first.close();

    const second = await openDatabase({ sqlitePath: path });
    try {
      expect(await getMeta(second, 'cursor')).toBe('12345678901234567890.000000000000000001');
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(second.kysely);
      expect(applied.rows.map((r) => r.name)).toEqual(MIGRATIONS.map(([name]) => name));
    } finally {
      await second.close();
    }
  });

  it('works in memory', async () => {
    const db = await openDatabase({ sqlitePath: ':memory:' });
    await setMeta(db, 'k', 'v');
    expect(await getMeta(db, 'k')).toBe('v');
    await db.close();
    await db.close(); // idempotent
  });

  it('runs a prepared write only inside a transaction of its database, committed or rolled back with it', async () => {
    const db = await openDatabase({ sqlitePath: join(tempDir(), 'prepared.sqlite') });
    try {
      const put = db.prepareWrite!('insert into meta (key, value) values (?, ?)');
      // Outside a transaction it would write behind the write gate's back: refused, nothing written.
      expect(() => put('outside', '1')).toThrow(/outside a transaction/);
      expect(() => db.prepareWrite!('select value from meta where key = ?')).toThrow(/not a write/);
      await withTransaction(db, async () => {
        put('kept', 'a');
        put('kept-too', 'b');
      });
      await expect(
        withTransaction(db, async () => {
          put('dropped', 'c');
          // The key is taken: the error is the storage error Kysely's would be, and the whole transaction goes.
          put('kept', 'again');
        }),
      ).rejects.toMatchObject({ code: expect.any(String) });
      const rows = await db.kysely.selectFrom('meta').select(['key', 'value']).where('key', 'in', ['outside', 'kept', 'kept-too', 'dropped']).orderBy('key').execute();
      expect(rows).toEqual([
        { key: 'kept', value: 'a' },
        { key: 'kept-too', value: 'b' },
      ]);
    } finally {
      await db.close();
    }
  });

  it('runs a synchronous transaction after a Kysely transaction open on the connection, never inside it, and rolls it back whole', async () => {
    const db = await openDatabase({ sqlitePath: join(tempDir(), 'transact.sqlite') });
    try {
      const put = db.prepareWrite!('insert into meta (key, value) values (?, ?)');
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let begun!: () => void;
      const open = new Promise<void>((r) => (begun = r));
      const order: string[] = [];
      // A Kysely transaction holds the connection across an await…
      const slow = withTransaction(db, async (tx) => {
        await setMeta(tx, 'slow', '1');
        begun();
        await held;
        order.push('slow commits');
      });
      await open;
      // …so the synchronous one waits for it rather than running its statements inside it.
      const quick = db.transactSync!(() => {
        put('quick', '2');
        order.push('quick runs');
        return 'done';
      });
      await new Promise((r) => setImmediate(r));
      expect(order).toEqual([]);
      release();
      expect(await quick).toBe('done');
      await slow;
      expect(order).toEqual(['slow commits', 'quick runs']);
      await expect(
        db.transactSync!(() => {
          put('gone', '3');
          put('quick', 'again');
        }),
      ).rejects.toMatchObject({ code: expect.any(String) });
      const rows = await db.kysely.selectFrom('meta').select(['key', 'value']).where('key', 'in', ['slow', 'quick', 'gone']).orderBy('key').execute();
      expect(rows).toEqual([
        { key: 'quick', value: '2' },
        { key: 'slow', value: '1' },
      ]);
    } finally {
      await db.close();
    }
  });

  it('leaves the schema alone with migrate: false', async () => {
    const db = await openDatabase({ sqlitePath: join(tempDir(), 'bare.sqlite'), migrate: false });
    try {
      expect(await tableNames(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('raises StorageUnavailableError when the file cannot be created', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a-file'), 'x');
    await expect(openDatabase({ sqlitePath: join(dir, 'a-file', 'db.sqlite') })).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it('raises StorageUnavailableError when another process holds the write lock past the busy timeout', async () => {
    const path = join(tempDir(), 'busy.sqlite');
    const holder = await openDatabase({ sqlitePath: path });
    const other = await openDatabase({ sqlitePath: path, connectTimeoutMs: 100 });
    try {
      const lock = await holdWriteLock(holder);
      const err = await setMeta(other, 'blocked', '1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StorageUnavailableError);
      expect((err as StorageUnavailableError).retryable).toBe(true);
      lock.release();
      await lock.committed;
      expect(await getMeta(other, 'held')).toBe('1');
    } finally {
      await other.close();
      await holder.close();
    }
  });
});

describe('openDatabase on PostgreSQL', () => {
  it('raises StorageUnavailableError when the server is unreachable', async () => {
    const err = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 2_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect((err as StorageUnavailableError).code).toBe('STORAGE_UNAVAILABLE');
    expect((err as StorageUnavailableError).retryable).toBe(true);
  });

  it.skipIf(!DATABASE_URL)('creates the schema, migrates into it once and keeps data across reopen', async () => {
    const schema = uniqueSchemaName('reopen');
    const first = await openDatabase({ url: DATABASE_URL, schema });
    try {
      expect(first.dialect).toBe('postgres');
      await setMeta(first, 'cursor', '98765432109876543210.5');
      const where = await sql<{ table_name: string }>`
        select table_name from information_schema.tables where table_schema = ${schema} order by table_name`.execute(first.kysely);
      expect(where.rows.map((r) => r.table_name)).toEqual(
        [...APP_TABLES, 'kysely_migration', 'kysely_migration_lock'].sort(),
      );
      await first.close();

      const second = await openDatabase({ url: DATABASE_URL, schema });
      try {
        expect(await getMeta(second, 'cursor')).toBe('98765432109876543210.5');
        const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(second.kysely);
        expect(applied.rows.map((r) => r.name)).toEqual(MIGRATIONS.map(([name]) => name));
      } finally {
        await sql`drop schema ${sql.id(schema)} cascade`.execute(second.kysely);
        await second.close();
      }
    } finally {
      await first.close();
    }
  });

  it.skipIf(!DATABASE_URL)('migrates a new schema while other schemas of the database are created and dropped', async () => {
    // Kysely's migration set-up reads every schema's catalog; a schema dropped during that read
    // used to fail the open with 3F000 (the test suites, each in a schema, do exactly this).
    const churn = await openDatabase({ url: DATABASE_URL, migrate: false });
    let stop = false;
    const churner = (async () => {
      while (!stop) {
        const s = uniqueSchemaName('churn');
        await sql`create schema ${sql.id(s)}`.execute(churn.kysely);
        await sql`create table ${sql.id(s)}.t (id serial primary key, v text)`.execute(churn.kysely);
        await sql`drop schema ${sql.id(s)} cascade`.execute(churn.kysely);
      }
    })();
    const failures: string[] = [];
    try {
      for (let i = 0; i < 15; i++) {
        const schema = uniqueSchemaName('race');
        try {
          await (await openDatabase({ url: DATABASE_URL, schema })).close();
        } catch (err) {
          failures.push(String((err as { cause?: { message?: string } }).cause?.message ?? err));
        } finally {
          await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(churn.kysely);
        }
      }
    } finally {
      stop = true;
      await churner;
      await churn.close();
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it.skipIf(!DATABASE_URL)('parses BIGINT as number and NUMERIC as string without touching pg global parsers', async () => {
    const db = await openDatabase({ url: DATABASE_URL, migrate: false });
    try {
      const { rows } = await sql<{ big: unknown; num: unknown; cnt: unknown }>`
        select 1700000000123::bigint as big, 12345678901234567890.123456789::numeric as num, count(*) as cnt
        from (values (1), (2)) v(x)`.execute(db.kysely);
      expect(rows[0]).toEqual({ big: 1700000000123, num: '12345678901234567890.123456789', cnt: 2 });
      // A plain pg client still gets pg's default: BIGINT as string.
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        const r = await client.query('select 5::bigint as b');
        expect(r.rows[0].b).toBe('5');
      } finally {
        await client.end();
      }
    } finally {
      await db.close();
    }
  });

  it.skipIf(!DATABASE_URL)('maps a connection killed mid-transaction to StorageUnavailableError and recovers', async () => {
    const schema = uniqueSchemaName('kill');
    const db = await openDatabase({ url: DATABASE_URL, schema, poolSize: 2 });
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      const err = await withTransaction(db, async (tx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
        await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
        await setMeta(tx, 'never', '1');
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StorageUnavailableError);
      // The pool drops the dead client; the next call gets a fresh connection.
      await setMeta(db, 'after', '1');
      expect(await getMeta(db, 'after')).toBe('1');
      expect(await getMeta(db, 'never')).toBeUndefined();
    } finally {
      await admin.end();
      await sql`drop schema ${sql.id(schema)} cascade`.execute(db.kysely);
      await db.close();
    }
  });
});

describe.each(testDatabases)('harness ($name)', ({ name, open }) => {
  it('gives each open() an empty database of its own', async () => {
    const a = await open();
    const b = await open();
    try {
      expect(a.dialect).toBe(name);
      await setMeta(a, 'only-in-a', 'x');
      expect(await getMeta(a, 'only-in-a')).toBe('x');
      expect(await getMeta(b, 'only-in-a')).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
