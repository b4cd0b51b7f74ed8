/**
 * The journal's group commits on a worker thread (perp/sequencer/journal-writer.ts), as the
 * perp-engine role runs them on a SQLite file:
 * - the journal it writes is the one the thread writes for the same commands, row for row, and the
 *   commits group the commands that arrive while one is in flight;
 * - a writer thread that dies inside a commit loses no answered command: the sequencer rebuilds
 *   from the journal, the next commit starts a new thread, and the live state is the journal's.
 * (The kill -9 of the whole process: sequencer-kill.test.ts and order-kill-replay.test.ts.)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { EngineSequencer, loadEngineFromJournal } from '../../src/perp/sequencer/engine-sequencer.ts';
import { journalOnWorker, workerJournalWriter } from '../../src/perp/sequencer/journal-writer.ts';
import { measureSyncLatencyMs } from '../../src/storage/disk-sync-probe.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { perpCommandStream } from '../support/perp-command-stream.ts';
import { readWholeJournal } from '../support/journal-read.ts';
import { until } from '../support/poll.ts';

const take = (n: number, prefix: string): EngineCommand[] => {
  const out: EngineCommand[] = [];
  const s = perpCommandStream(11, prefix);
  for (let i = 0; i < n; i++) out.push(s.next().value!);
  return out;
};

describe("the journal's writer thread", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tokex-journal-writer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('PERP_JOURNAL_WRITER=auto: a SQLite file on the worker unless two cores or fewer and a disk that syncs in a millisecond; PostgreSQL and an in-memory file on the thread', () => {
    const host = (cores: number, syncMs: number) => ({ cores: () => cores, syncMs: () => syncMs });
    const file = { sqlitePath: '/tmp/x.sqlite' };
    expect(journalOnWorker('auto', file, host(4, 0.2))).toBe(true);
    expect(journalOnWorker('auto', file, host(2, 0.2))).toBe(false);
    expect(journalOnWorker('auto', file, host(2, 1))).toBe(false);
    expect(journalOnWorker('auto', file, host(2, 1.01))).toBe(true);
    expect(journalOnWorker('auto', file, host(1, 8))).toBe(true);
    // A disk that could not be measured (Infinity) is taken for a slow one.
    expect(journalOnWorker('auto', file, host(2, Infinity))).toBe(true);
    expect(journalOnWorker('auto', { url: 'postgres://h/db' }, host(2, 0.2))).toBe(false);
    expect(journalOnWorker('auto', { sqlitePath: ':memory:' }, host(8, 0.2))).toBe(false);
    expect(journalOnWorker('worker', { sqlitePath: ':memory:' })).toBe(false);
    expect(journalOnWorker('worker', file, host(2, 0.2))).toBe(true);
    expect(journalOnWorker('thread', file, host(8, 9))).toBe(false);
  });

  it('the disk probe measures a durable write in the directory and leaves nothing there', () => {
    const ms = measureSyncLatencyMs(dir);
    expect(Number.isFinite(ms) && ms >= 0).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith('.tokex-sync-probe'))).toEqual([]);
    expect(measureSyncLatencyMs(join(dir, 'no-such-directory'))).toBe(Infinity);
  });

  it('writes the journal the thread writes, in group commits of what arrived while one was in flight', { timeout: 60_000 }, async () => {
    const commands = take(1_500, 'same');
    const run = async (name: string, onWorker: boolean) => {
      const sqlitePath = join(dir, `${name}.sqlite`);
      const db = await openDatabase({ sqlitePath });
      const journalWriter = onWorker ? workerJournalWriter({ database: { sqlitePath } }) : undefined;
      const sequencer = new EngineSequencer({ db, snapshotEvery: 0, now: () => 1_700_000_000_000, ...(journalWriter ? { journalWriter } : {}) });
      await sequencer.start();
      // All submitted at once: they are applied in this order, whichever thread commits them.
      const answers = await Promise.all(commands.map((c) => sequencer.submit(c)));
      const stats = sequencer.stats;
      const hash = sequencer.engine.stateHash();
      await sequencer.stop();
      const rows = await readWholeJournal(db);
      await db.close();
      return { answers, rows, stats, hash };
    };
    const thread = await run('thread', false);
    const worker = await run('worker', true);
    expect(worker.answers.map((a) => [a.ok, a.journalSeq])).toEqual(thread.answers.map((a) => [a.ok, a.journalSeq]));
    expect(worker.rows.map((r) => [r.seq, r.commandId, r.command, r.code, r.result])).toEqual(thread.rows.map((r) => [r.seq, r.commandId, r.command, r.code, r.result]));
    expect(worker.hash).toBe(thread.hash);
    // The first commit takes what was applied before it; the rest gather while it is in flight.
    expect(worker.stats.rows).toBe(thread.stats.rows);
    expect(worker.stats.batches).toBeLessThan(commands.length / 10);
  });

  it('a commit that fails on the writer thread answers none of its commands; the rebuild and the commits after it go on, on a new thread after one is lost', { timeout: 60_000 }, async () => {
    const sqlitePath = join(dir, 'crash.sqlite');
    const db = await openDatabase({ sqlitePath });
    // The writer's connection gives up on a locked file after 100 ms (SQLITE_BUSY).
    const journalWriter = workerJournalWriter({ database: { sqlitePath, connectTimeoutMs: 100 } });
    const sequencer = new EngineSequencer({ db, snapshotEvery: 0, recoveryRetryMs: 20, journalWriter });
    try {
      await sequencer.start();
      const commands = take(400, 'crash');
      const answered = new Map<string, number | null>();
      for (const [i, r] of (await Promise.all(commands.slice(0, 200).map((c) => sequencer.submit(c)))).entries()) answered.set(commands[i].id, r.journalSeq);
      // Another connection holds the file's write lock: the next commit fails on the writer's thread.
      const other = new BetterSqlite3(sqlitePath);
      other.exec('BEGIN IMMEDIATE');
      let failed = 0;
      await Promise.all(
        commands.slice(200).map((c) =>
          sequencer.submit(c).then(
            (r) => void answered.set(c.id, r.journalSeq),
            () => void failed++,
          ),
        ),
      );
      other.exec('ROLLBACK');
      other.close();
      expect(failed, 'the commands of the failed commit are refused, not answered').toBe(200);
      expect(sequencer.stats.recoveries).toBe(1);
      await until(async () => sequencer.state === 'running', (ok) => ok);
      // The thread lost between commits (ended while it waits for the next): the next commit starts a new one.
      await journalWriter.terminate();
      const again = await Promise.all(commands.slice(200).map((c) => sequencer.submit(c)));
      for (const [i, r] of again.entries()) answered.set(commands[200 + i].id, r.journalSeq);
      expect(again.every((r) => (r.journalSeq ?? 0) > 200)).toBe(true);
      expect(answered.size).toBe(400);

      const rows = await readWholeJournal(db);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
      const bySeq = new Map(rows.map((r) => [r.commandId, r.seq]));
      expect([...answered].filter(([id, seq]) => bySeq.get(id) !== seq), 'answered commands absent from the journal').toEqual([]);
      const loaded = await loadEngineFromJournal(db, undefined, { ignoreSnapshots: true });
      expect(sequencer.engine.stateHash()).toBe(loaded.engine.stateHash());
      expect(sequencer.nextSeq).toBe(rows.length + 1);
    } finally {
      await sequencer.stop();
      await db.close();
    }
  });
});
