/**
 * The SQLite file's page size across an upgrade (src/storage/sqlite-page-size.ts): a new file gets
 * 4 KiB pages, a file of an earlier release keeps its 64 KiB ones when this code opens it, and
 * `rewriteSqlitePages` turns it into 4 KiB pages with every row as it was, or refuses, changing
 * nothing, while another connection has it open.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { appendJournal, readJournalAfter, type JournalRow } from '../../src/perp/store/engine-journal-store.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { SqliteFileInUseError, readSqlitePages, rewriteSqlitePages } from '../../src/storage/sqlite-page-size.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempFile(name: string): string {
  const d = mkdtempSync(join(tmpdir(), 'tokex-pages-'));
  dirs.push(d);
  return join(d, name);
}

const journalRow = (seq: number, size = 200): JournalRow => ({
  seq,
  commandId: `ord:${(seq * 7919).toString(16).padStart(64, '0')}`,
  kind: 'placeOrder',
  command: JSON.stringify({ kind: 'placeOrder', pad: 'x'.repeat(size) }),
  ts: 1_700_000_000_000 + seq,
  code: 'OK',
  lastEventSeq: seq * 9,
  result: '{"code":"OK"}',
});
const nonce = (i: number) => ({ account: `0x${(i % 16).toString(16).padStart(40, '0')}`, nonce: String(1_000_000 + i), orderHash: `0x${i.toString(16).padStart(64, '0')}`, expiry: 1_800_000_000_000 + i, usedAt: 1_700_000_000_000 + i });

/** Every row of every table, in a stable order: what a rewrite must keep. */
function dump(path: string): Record<string, string[]> {
  const raw = new BetterSqlite3(path, { readonly: true });
  try {
    const tables = raw.prepare("select name from sqlite_schema where type = 'table' and name not like 'sqlite_%' order by name").pluck().all() as string[];
    // Sorted as text: some tables have no rowid to order by.
    return Object.fromEntries(tables.map((t) => [t, raw.prepare(`select * from "${t}"`).all().map((row) => JSON.stringify(row)).sort()]));
  } finally {
    raw.close();
  }
}

/** A file of a release with 64 KiB pages: migrated, a journal of 3,000 orders with their nonces, one row past a page (overflow), a meta value. */
async function earlierReleaseFile(): Promise<string> {
  const path = tempFile('tokex.sqlite');
  const db = await openDatabase({ sqlitePath: path, pageSize: 65_536 });
  try {
    for (let from = 1; from <= 3_000; from += 500) {
      const rows = Array.from({ length: 500 }, (_, i) => journalRow(from + i, from + i === 1_234 ? 200_000 : 200));
      await appendJournal(db, rows, rows.map((r) => nonce(r.seq)));
    }
    await setMeta(db, 'perp:projection:cursor', '27000');
  } finally {
    await db.close();
  }
  return path;
}

describe('the SQLite page size', () => {
  it('is 4 KiB for a new file, and an earlier release\'s 64 KiB file keeps its pages and its rows when this code opens it', async () => {
    const fresh = tempFile('new.sqlite');
    await (await openDatabase({ sqlitePath: fresh })).close();
    expect(readSqlitePages(fresh)?.pageSize).toBe(4096);

    const earlier = await earlierReleaseFile();
    const before = dump(earlier);
    const db = await openDatabase({ sqlitePath: earlier });
    await db.close();
    expect(readSqlitePages(earlier)?.pageSize).toBe(65_536);
    expect(dump(earlier)).toEqual(before);
  });

  it('rewriteSqlitePages turns 64 KiB pages into 4 KiB ones with every row, the WAL mode and the database usable as before', async () => {
    const path = await earlierReleaseFile();
    const before = dump(path);
    expect(before.perp_journal).toHaveLength(3_000);
    expect(before.perp_order_nonces).toHaveLength(3_000);

    expect(rewriteSqlitePages(path)).toEqual({ before: 65_536, after: 4096 });
    expect(readSqlitePages(path)?.pageSize).toBe(4096);
    expect(dump(path)).toEqual(before);
    const raw = new BetterSqlite3(path);
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      raw.close();
    }

    // The rewritten file opens (nothing to migrate), reads and takes writes as before.
    const db = await openDatabase({ sqlitePath: path });
    try {
      expect(await getMeta(db, 'perp:projection:cursor')).toBe('27000');
      const tail = await readJournalAfter(db, 2_998);
      expect(tail.map((r) => r.seq)).toEqual([2_999, 3_000]);
      expect((await readJournalAfter(db, 1_233, 1))[0].command).toHaveLength(JSON.stringify({ kind: 'placeOrder', pad: 'x'.repeat(200_000) }).length);
      await appendJournal(db, [journalRow(3_001)], [nonce(3_001)]);
      expect((await readJournalAfter(db, 3_000)).map((r) => r.seq)).toEqual([3_001]);
    } finally {
      await db.close();
    }
    // A second run has nothing to do.
    expect(rewriteSqlitePages(path)).toEqual({ before: 4096, after: 4096 });
  });

  it('refuses while another connection has the file open, and leaves it as it was', async () => {
    const path = await earlierReleaseFile();
    const before = dump(path);
    const running = await openDatabase({ sqlitePath: path });
    try {
      await getMeta(running, 'perp:projection:cursor');
      expect(() => rewriteSqlitePages(path)).toThrow(SqliteFileInUseError);
    } finally {
      await running.close();
    }
    expect(readSqlitePages(path)?.pageSize).toBe(65_536);
    expect(dump(path)).toEqual(before);
    // Once it is closed, the rewrite goes through.
    expect(rewriteSqlitePages(path).after).toBe(4096);
  });

  it('takes only SQLite\'s page sizes', async () => {
    expect(() => rewriteSqlitePages(tempFile('x.sqlite'), 3000)).toThrow('page size: 3000 is not a power of two from 512 to 65536');
    await expect(openDatabase({ sqlitePath: tempFile('y.sqlite'), pageSize: 131_072 })).rejects.toThrow('pageSize');
  });
});
