/**
 * The bulk steps of a start that run beside a held lease (docs/operations.md, "No long synchronous
 * work beside a lease"): the 30-day history seed and the perpetual journal replay. For each, the
 * whole step's time, the longest the event loop waited meanwhile (perf_hooks' event-loop delay,
 * what a lease renewal timer would wait), and, for the seed, the same slices inside one caller's
 * transaction in the same run (one commit instead of one per slice): the price of committing each
 * slice. The longest wait is set beside half the default lease TTL (5 s), past which a holder counts
 * its lease lost; before issue 27 the seed held the loop for its whole length (7.5 s on a busy
 * machine), with no turn at all.
 *
 *   npx tsx bench/startup-slices-bench.ts    (BENCH_REPLAY_COMMANDS, default 20 000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { seedHistory } from '../src/marketdata/history-seeder.ts';
import { DEMO_SYMBOLS, PERP_INDEX_SYMBOLS } from '../src/marketdata/symbol-catalog.ts';
import { EngineSequencer } from '../src/perp/sequencer/engine-sequencer.ts';
import { loadFromJournal } from '../src/perp/sequencer/journal-replay.ts';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { withTransaction } from '../src/storage/transaction.ts';
import { perpCommandStream } from '../test/support/perp-command-stream.ts';

const HALF_TTL_MS = 5_000;

export interface SliceFigure {
  step: string;
  ms: number;
  /** The longest the event loop was held (ms): what a timer due meanwhile waited at most. */
  maxLoopBlockMs: number;
  detail: string;
}

/** Runs `fn` with an event-loop delay monitor around it. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; maxLoopBlockMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  h.disable();
  return { value, ms, maxLoopBlockMs: h.max / 1e6 };
}

async function withFreshSqlite<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tokex-slices-'));
  const db = await openDatabase({ sqlitePath: join(dir, 'app.sqlite') });
  try {
    return await fn(db);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runStartupSlicesBench(opts: { replayCommands?: number; print?: (line: string) => void } = {}): Promise<SliceFigure[]> {
  const print = opts.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const symbols = [...DEMO_SYMBOLS, ...PERP_INDEX_SYMBOLS];
  const now = Date.now();
  const figures: SliceFigure[] = [];

  // The baseline: the same slices inside one caller's transaction (one commit at the end).
  const whole = await withFreshSqlite((db) => measured(() => withTransaction(db, (tx) => seedHistory({ db: tx, symbols, seed: 42, now }))));
  figures.push({ step: 'history seed, slices in one transaction', ms: whole.ms, maxLoopBlockMs: whole.maxLoopBlockMs, detail: `${whole.value.candlesWritten} candles` });
  const sliced = await withFreshSqlite((db) => measured(() => seedHistory({ db, symbols, seed: 42, now })));
  figures.push({
    step: 'history seed, a symbol-day a slice',
    ms: sliced.ms,
    maxLoopBlockMs: sliced.maxLoopBlockMs,
    detail: `${sliced.value.slices} slices, longest ${sliced.value.longestSliceMs.toFixed(0)} ms; ${(sliced.ms / whole.ms).toFixed(2)}× the one commit's time`,
  });

  const commands = opts.replayCommands ?? Number(process.env.BENCH_REPLAY_COMMANDS ?? 20_000);
  const replay = await withFreshSqlite(async (db) => {
    const sequencer = new EngineSequencer({ db, snapshotEvery: 0 });
    await sequencer.start();
    const stream = perpCommandStream(21, 'slices');
    let left = commands;
    await Promise.all(
      Array.from({ length: 256 }, async () => {
        while (left > 0) {
          left--;
          await sequencer.submit(stream.next().value!);
        }
      }),
    );
    await sequencer.stop();
    return measured(() => loadFromJournal(db, { ignoreSnapshots: true }));
  });
  figures.push({
    step: 'perp journal replay, 2,000 rows a page',
    ms: replay.ms,
    maxLoopBlockMs: replay.maxLoopBlockMs,
    detail: `${replay.value.lastSeq} rows, ${Math.round(replay.value.lastSeq / (replay.ms / 1000))} rows/s`,
  });

  print('start-up slices (SQLite; the event loop beside a held lease)');
  print('  step                                        total ms   longest loop wait ms   of TTL/2   detail');
  for (const f of figures) {
    print(`  ${f.step.padEnd(42)}  ${f.ms.toFixed(0).padStart(8)}   ${f.maxLoopBlockMs.toFixed(0).padStart(20)}   ${(f.maxLoopBlockMs / HALF_TTL_MS).toFixed(3).padStart(8)}   ${f.detail}`);
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStartupSlicesBench();
}
