import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedStatements } from '../../src/storage/sqlite-statement-cache.ts';

describe('SQLite statements prepared once per text', () => {
  const open: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const d of open.splice(0)) d.close();
  });

  function fresh(limits?: Parameters<typeof cachedStatements>[1]) {
    const raw = new BetterSqlite3(':memory:');
    raw.exec('create table t (id integer primary key, name text not null)');
    let prepares = 0;
    const counting = {
      prepare: (text: string) => {
        prepares++;
        return raw.prepare(text);
      },
      close: () => raw.close(),
    };
    const db = cachedStatements(counting, limits);
    open.push(db);
    return { raw, db, prepares: () => prepares };
  }

  it('runs a text seen before on its kept statement, with the new parameters', () => {
    const { db, prepares } = fresh();
    const insert = 'insert into t (id, name) values (?, ?)';
    db.prepare(insert).run([1, 'a']);
    db.prepare(insert).run([2, 'b']);
    db.prepare(insert).run([3, 'c']);
    const rows = db.prepare('select id, name from t where id >= ? order by id').all([2]);
    expect(rows).toEqual([
      { id: 2, name: 'b' },
      { id: 3, name: 'c' },
    ]);
    expect(prepares()).toBe(2);
    expect(db.stats).toEqual({ prepared: 2, reused: 2, size: 2, textBytes: insert.length + 'select id, name from t where id >= ? order by id'.length });
  });

  it('gives a query whose kept statement is still being iterated a statement of its own', () => {
    const { db } = fresh();
    const insert = db.prepare('insert into t (id, name) values (?, ?)');
    for (let i = 1; i <= 3; i++) insert.run([i, `n${i}`]);
    const text = 'select id from t where id >= ? order by id';
    const outer = db.prepare(text).iterate([1]);
    const first = outer.next();
    // The outer iteration is open: the same text again must not reset it.
    const inner = db.prepare(text).all([3]);
    const rest = [...outer];
    expect(first.value).toEqual({ id: 1 });
    expect(inner).toEqual([{ id: 3 }]);
    expect(rest).toEqual([{ id: 2 }, { id: 3 }]);
    // The busy one stays the kept one: once its iteration ended it is reused again.
    expect(db.stats.prepared).toBe(3);
    db.prepare(text).all([1]);
    expect(db.stats).toMatchObject({ prepared: 3, size: 2 });
  });

  it('keeps at most maxStatements texts, dropping the least recently used', () => {
    const { db, prepares } = fresh({ maxStatements: 2 });
    const a = 'select 1 as v';
    const b = 'select 2 as v';
    const c = 'select 3 as v';
    db.prepare(a).all([]);
    db.prepare(b).all([]);
    db.prepare(a).all([]); // a is now the most recent
    db.prepare(c).all([]); // drops b
    expect(db.stats.size).toBe(2);
    db.prepare(a).all([]);
    expect(prepares()).toBe(3);
    expect(db.prepare(b).all([])).toEqual([{ v: 2 }]);
    expect(prepares()).toBe(4);
  });

  it('keeps no text longer than maxStatementBytes, and at most maxTextBytes of text in all', () => {
    const { db, prepares } = fresh({ maxStatementBytes: 40, maxTextBytes: 60 });
    const long = `select 1 as v where 1 in (${Array.from({ length: 20 }, (_, i) => i).join(',')})`;
    expect(long.length).toBeGreaterThan(40);
    db.prepare(long).all([]);
    db.prepare(long).all([]);
    expect(prepares()).toBe(2);
    expect(db.stats).toMatchObject({ size: 0, textBytes: 0 });
    // Three texts of 25 to 27 characters: the third pushes the first out (60 in all at most).
    const texts = ['select 11 as value_one   ', 'select 22 as value_two    ', 'select 33 as value_three  '];
    for (const t of texts) db.prepare(t).all([]);
    expect(db.stats).toMatchObject({ size: 2, textBytes: texts[1].length + texts[2].length });
    db.prepare(texts[0]).all([]);
    expect(prepares()).toBe(6);
    db.prepare(texts[0]).all([]);
    expect(prepares()).toBe(6);
  });

  it('sees a schema change made after a text was kept (SQLite prepares it again itself)', () => {
    const { db } = fresh();
    db.prepare('insert into t (id, name) values (?, ?)').run([1, 'a']);
    const text = 'select * from t';
    expect(db.prepare(text).all([])).toEqual([{ id: 1, name: 'a' }]);
    db.prepare("alter table t add column note text not null default 'x'").run([]);
    expect(db.prepare(text).all([])).toEqual([{ id: 1, name: 'a', note: 'x' }]);
  });

  it('does not keep a text that fails to prepare, and reports the error', () => {
    const { db } = fresh();
    expect(() => db.prepare('select nope from t')).toThrow(/no such column/);
    expect(db.stats).toEqual({ prepared: 0, reused: 0, size: 0, textBytes: 0 });
  });

  it('answers through Kysely exactly as the uncached connection does', async () => {
    const raw = new BetterSqlite3(':memory:');
    const k = new Kysely<any>({ dialect: new SqliteDialect({ database: cachedStatements(raw) }) });
    try {
      await sql`create table o (id integer primary key, v text)`.execute(k);
      for (let i = 0; i < 5; i++) await k.insertInto('o').values({ id: i, v: `v${i}` }).execute();
      await k.transaction().execute(async (tx) => {
        await tx.updateTable('o').set({ v: 'changed' }).where('id', '=', 2).execute();
        await tx.deleteFrom('o').where('id', '=', 4).execute();
      });
      const rows = await k.selectFrom('o').selectAll().orderBy('id').execute();
      expect(rows).toEqual([
        { id: 0, v: 'v0' },
        { id: 1, v: 'v1' },
        { id: 2, v: 'changed' },
        { id: 3, v: 'v3' },
      ]);
      const streamed: unknown[] = [];
      for await (const r of k.selectFrom('o').select('id').orderBy('id').stream()) {
        // A query of the same text while the stream is open waits for Kysely's one connection.
        streamed.push(r);
      }
      expect(streamed).toEqual([{ id: 0 }, { id: 1 }, { id: 2 }, { id: 3 }]);
    } finally {
      await k.destroy();
    }
  });
});
