/**
 * kill -9 under load: a child process runs the sequencer and submits commands as fast as it can;
 * it is killed at a random moment, twice. After each kill the journal must hold every command the
 * child answered, with gap-free seqs, and the state rebuilt from snapshot + journal must equal a
 * replay of the whole journal from an empty engine. The second run must continue the sequence.
 * The first start lists the default instruments (one journal row each) before the child submits.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type OpenDatabaseOptions } from '../../src/storage/database.ts';
import { loadEngineFromJournal } from '../../src/perp/sequencer/engine-sequencer.ts';
import { uniqueSchemaName } from '../support/test-databases.ts';
import { START_ROWS, expectStartRows } from '../support/journal-start.ts';
import { readWholeJournal } from '../support/journal-read.ts';

const CHILD = resolve(import.meta.dirname, 'sequencer-kill-child.ts');

/** Journal rows the sequencer writes on its first start, before any submitted command. */
const LISTED = START_ROWS;

interface RunOutcome {
  readyNextSeq: number;
  readyHash: string;
  answered: Map<string, number>;
  killAfterMs: number;
}

async function runAndKill(env: Record<string, string>): Promise<RunOutcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<NodeJS.Signals | number | null>((res) => child.on('exit', (code, signal) => res(signal ?? code)));
  const answered = new Map<string, number>();
  let readyNextSeq = 0;
  let readyHash = '';
  const killAfterMs = 300 + Math.floor(Math.random() * 1_200);
  const ready = new Promise<void>((res, rej) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [tag, a, b] = line.split(' ');
      if (tag === 'ready') {
        readyNextSeq = Number(a);
        readyHash = b;
        res();
      } else if (tag === 'ok') answered.set(a, Number(b));
    });
    void exited.then(() => rej(new Error(`child exited before ready: ${stderr}`)));
  });
  await ready;
  await new Promise((r) => setTimeout(r, killAfterMs));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  // Let readline drain what the child wrote before dying.
  await new Promise((r) => setImmediate(r));
  return { readyNextSeq, readyHash, answered, killAfterMs };
}

const targets: Array<{ name: string; setup(): { env: Record<string, string>; open: OpenDatabaseOptions; cleanup(): Promise<void> } }> = [
  {
    name: 'sqlite',
    setup() {
      const dir = mkdtempSync(join(tmpdir(), 'tokex-kill-'));
      const sqlitePath = join(dir, 'journal.sqlite');
      return { env: { KILL_SQLITE_PATH: sqlitePath }, open: { sqlitePath }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    // As the perp-engine role runs a SQLite file: the commits on the journal's writer thread, the
    // answers released when it reports them durable.
    name: 'sqlite, commits on the writer thread',
    setup() {
      const dir = mkdtempSync(join(tmpdir(), 'tokex-kill-'));
      const sqlitePath = join(dir, 'journal.sqlite');
      return { env: { KILL_SQLITE_PATH: sqlitePath, KILL_JOURNAL: 'worker' }, open: { sqlitePath }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  ...(process.env.DATABASE_URL
    ? [
        {
          name: 'postgres',
          setup() {
            const url = process.env.DATABASE_URL as string;
            const schema = uniqueSchemaName('kill');
            return {
              env: { KILL_PG_URL: url, KILL_PG_SCHEMA: schema },
              open: { url, schema },
              async cleanup() {
                const db = await openDatabase({ url, migrate: false });
                await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely);
                await db.close();
              },
            };
          },
        },
      ]
    : []),
];

describe.each(targets)('perp sequencer under kill -9 ($name)', ({ setup }) => {
  it('loses no answered command and rebuilds the journal state exactly, twice', { timeout: 30_000 }, async () => {
    const t = setup();
    try {
      let previous: { last: number; hash: string } = { last: 0, hash: '' };
      for (const run of [1, 2]) {
        const outcome = await runAndKill({ ...t.env, KILL_RUN: String(run), KILL_SEED: String(run * 7) });
        // Only the first start lists the instruments: the restart finds them in the journal.
        const listed = run === 1 ? LISTED : 0;
        expect(outcome.readyNextSeq, 'the restart continues the journal').toBe(previous.last + listed + 1);
        if (run > 1) expect(outcome.readyHash, 'the restarted child rebuilt the state').toBe(previous.hash);
        expect(outcome.answered.size, `answers within ${outcome.killAfterMs} ms`).toBeGreaterThan(0);

        const db = await openDatabase(t.open);
        try {
          const rows = await readWholeJournal(db);
          expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
          expectStartRows(rows);
          const bySeq = new Map(rows.map((r) => [r.commandId, r.seq]));
          const missing = [...outcome.answered].filter(([id, seq]) => bySeq.get(id) !== seq);
          expect(missing, 'answered commands absent from the journal').toEqual([]);
          expect(rows.length).toBeGreaterThanOrEqual(previous.last + listed + outcome.answered.size);

          const full = await loadEngineFromJournal(db, undefined, { ignoreSnapshots: true });
          const fromSnapshot = await loadEngineFromJournal(db);
          expect(fromSnapshot.engine.stateHash()).toBe(full.engine.stateHash());
          expect(fromSnapshot.nextJournalSeq).toBe(rows.length + 1);
          expect(fromSnapshot.engine.lastSeq).toBe(rows.length === 0 ? 0 : rows[rows.length - 1].lastEventSeq);
          previous = { last: rows.length, hash: full.engine.stateHash() };
        } finally {
          await db.close();
        }
      }
    } finally {
      await t.cleanup();
    }
  });
});
