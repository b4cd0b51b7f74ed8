/**
 * The perpetual engine's journal: durable commands per second through the sequencer with group
 * commit (many submitters in flight, each answer released only when its batch is committed),
 * against single-row durable commits (one journal row per transaction, awaited one by one) on the
 * same database in the same run. SQLite always (a fresh file, synchronous = FULL as in production);
 * PostgreSQL too when DATABASE_URL is set (a fresh schema).
 *
 *   npx tsx bench/perp-journal-bench.ts     (BENCH_JOURNAL_COMMANDS, BENCH_JOURNAL_SINGLE,
 *                                            BENCH_JOURNAL_CONCURRENCY=64,1024)
 *
 * The single-row side writes the same journal rows (the same commands' JSON) without running the
 * engine, so the comparison is of the commits alone, tilted if anything toward single rows.
 * `runPerpJournalBench()` is exported for the main bench.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { commandToText } from '../src/perp/sequencer/engine-codec.ts';
import type { EngineCommand } from '../src/perp/engine/engine-types.ts';
import { EngineSequencer } from '../src/perp/sequencer/engine-sequencer.ts';
import { appendJournal, lastJournalSeq } from '../src/perp/store/engine-journal-store.ts';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { perpCommandStream } from '../test/support/perp-command-stream.ts';

export interface PerpJournalBenchOptions {
  /** Commands through the sequencer per database. Default 20 000 (BENCH_JOURNAL_COMMANDS). */
  commands?: number;
  /** Single-row commits per database. Default 1 000 (BENCH_JOURNAL_SINGLE). */
  singleRow?: number;
  /** Submitters in flight, one group-commit run each. Default [64, 1024] (BENCH_JOURNAL_CONCURRENCY, comma-separated). */
  concurrency?: number[];
  /** PostgreSQL too. Default process.env.DATABASE_URL. */
  databaseUrl?: string;
  print?: (line: string) => void;
}

export interface JournalFigures {
  database: 'sqlite' | 'postgres';
  concurrency: number;
  groupCommit: { commands: number; seconds: number; perSec: number; batches: number; avgBatch: number; maxBatch: number };
  singleRow: { commands: number; seconds: number; perSec: number };
  /** groupCommit.perSec / singleRow.perSec. */
  ratio: number;
}

export interface PerpJournalBenchResult {
  figures: JournalFigures[];
  table: string;
}

interface GroupRun {
  commands: number;
  seconds: number;
  perSec: number;
  batches: number;
  avgBatch: number;
  maxBatch: number;
}

/** Submits `commands` commands of `stream` from `concurrency` submitters, each awaiting its answer before the next. */
export async function submitConcurrently(sequencer: Pick<EngineSequencer, 'submit'>, stream: Iterator<EngineCommand>, commands: number, concurrency: number): Promise<void> {
  let left = commands;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        await sequencer.submit(stream.next().value as EngineCommand);
      }
    }),
  );
}

/** Group commit through a sequencer on a journal that may already hold rows (ids are unique per run). */
async function groupCommit(db: Db, commands: number, concurrency: number): Promise<GroupRun> {
  const sequencer = new EngineSequencer({ db, snapshotEvery: 0 });
  await sequencer.start();
  const stream = perpCommandStream(11, `bench${concurrency}`);
  const t0 = performance.now();
  await submitConcurrently(sequencer, stream, commands, concurrency);
  const groupSeconds = (performance.now() - t0) / 1000;
  const { batches, rows, maxBatchRows } = sequencer.stats;
  await sequencer.stop();
  return { commands, seconds: groupSeconds, perSec: commands / groupSeconds, batches, avgBatch: rows / batches, maxBatch: maxBatchRows };
}

/** One journal row per transaction, awaited one by one. */
async function singleRows(db: Db, singleRow: number): Promise<{ commands: number; seconds: number; perSec: number }> {
  let seq = await lastJournalSeq(db);
  const single = perpCommandStream(12, 'single');
  const t1 = performance.now();
  for (let i = 0; i < singleRow; i++) {
    const cmd = single.next().value!;
    seq++;
    await appendJournal(db, [
      { seq, commandId: cmd.id, kind: cmd.kind, command: commandToText(cmd), ts: cmd.ts, code: 'OK', lastEventSeq: 0, result: '{"ok":true,"code":"OK"}' },
    ]);
  }
  const singleSeconds = (performance.now() - t1) / 1000;
  return { commands: singleRow, seconds: singleSeconds, perSec: singleRow / singleSeconds };
}

async function measure(db: Db, database: JournalFigures['database'], commands: number, singleRow: number, concurrency: number[]): Promise<JournalFigures[]> {
  const groups: GroupRun[] = [];
  for (const c of concurrency) groups.push(await groupCommit(db, commands, c));
  const single = await singleRows(db, singleRow);
  return groups.map((g, i) => ({ database, concurrency: concurrency[i], groupCommit: g, singleRow: single, ratio: g.perSec / single.perSec }));
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export async function runPerpJournalBench(opts: PerpJournalBenchOptions = {}): Promise<PerpJournalBenchResult> {
  const commands = opts.commands ?? Number(process.env.BENCH_JOURNAL_COMMANDS ?? 20_000);
  const singleRow = opts.singleRow ?? Number(process.env.BENCH_JOURNAL_SINGLE ?? 1_000);
  const concurrency = opts.concurrency ?? (process.env.BENCH_JOURNAL_CONCURRENCY ?? '64,1024').split(',').map(Number);
  const url = opts.databaseUrl ?? process.env.DATABASE_URL;
  const figures: JournalFigures[] = [];

  const dir = mkdtempSync(join(tmpdir(), 'tokex-journal-bench-'));
  try {
    const db = await openDatabase({ sqlitePath: join(dir, 'bench.sqlite') });
    try {
      figures.push(...(await measure(db, 'sqlite', commands, singleRow, concurrency)));
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (url) {
    const schema = `journal_bench_${process.pid}_${Date.now().toString(36)}`;
    const db = await openDatabase({ url, schema });
    try {
      figures.push(...(await measure(db, 'postgres', commands, singleRow, concurrency)));
    } finally {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely).catch(() => undefined);
      await db.close();
    }
  }

  const lines = [
    `perp journal: durable commands/s, ${fmt(commands)} commands per group-commit run, ${fmt(singleRow)} single-row commits`,
    '| database | in flight | group commit cmd/s | batches | avg batch | max batch | single-row commits/s | ratio |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...figures.map(
      (f) =>
        `| ${f.database} | ${f.concurrency} | ${fmt(f.groupCommit.perSec)} | ${fmt(f.groupCommit.batches)} | ${f.groupCommit.avgBatch.toFixed(1)} | ${f.groupCommit.maxBatch} | ${fmt(f.singleRow.perSec)} | ${f.ratio.toFixed(1)}× |`,
    ),
  ];
  const table = lines.join('\n');
  opts.print?.(table);
  return { figures, table };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runPerpJournalBench({ print: (l) => console.log(l) });
}
