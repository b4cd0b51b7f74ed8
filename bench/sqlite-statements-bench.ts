/**
 * SQLite statements prepared once per text (src/storage/sqlite-statement-cache.ts) against prepared
 * for every query as Kysely does (issue 40): the perp engine's durable path alone, without HTTP or
 * signatures, so that the difference is not lost in the order path's run-to-run noise. Each round
 * opens two fresh SQLite files (synchronous = FULL, as in production), one with the cache and one
 * without, and on each runs a sequencer and the projector in this process (projection on the
 * order thread, the SQLite default) through the same commands (test/support/perp-command-stream.ts:
 * deposits, marks, limit and market orders, cancels) from BENCH_STMT_CONCURRENCY submitters at once
 * (default 32, the REST bench's connections, so commits carry as many rows as there), until the
 * projection has caught up. The process's CPU (user + system) per command is the figure; the two
 * sides take turns going first, and the ratio is taken within each round, since this machine's speed
 * drifts by 20 % and more between minutes.
 *
 *   BENCH_ONLY=sqlite-statements npm run bench     or    npx tsx bench/sqlite-statements-bench.ts
 *   (BENCH_STMT_COMMANDS, default 30 000 a side a round; BENCH_STMT_ROUNDS, default 4; BENCH_STMT_CONCURRENCY)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPerpProjector } from '../src/perp/projection/perp-projector.ts';
import { EngineSequencer } from '../src/perp/sequencer/engine-sequencer.ts';
import { openDatabase } from '../src/storage/database.ts';
import { submitConcurrently } from './perp-journal-bench.ts';
import { perpCommandStream, STREAM_ACCOUNTS } from '../test/support/perp-command-stream.ts';

export interface StatementsSide {
  cpuUsPerCommand: number;
  commandsPerSec: number;
}

export interface StatementsRound {
  cached: StatementsSide;
  uncached: StatementsSide;
  /** cached.cpuUsPerCommand ÷ uncached.cpuUsPerCommand. */
  cpuRatio: number;
}

async function side(dir: string, name: string, statementCache: boolean, commands: number, concurrency: number): Promise<StatementsSide> {
  const db = await openDatabase({ sqlitePath: join(dir, `${name}.sqlite`), statementCache });
  try {
    const sequencer = new EngineSequencer({ db, snapshotEvery: 0 });
    await sequencer.start();
    const projector = createPerpProjector({ db, gateway: sequencer, feeAccount: STREAM_ACCOUNTS[0] });
    await projector.start();
    // Warm-up: the statements' texts, V8's code and the tables' first pages.
    const warm = perpCommandStream(7, `${name}-warm`);
    for (let i = 0; i < 500; i++) await sequencer.submit(warm.next().value!);
    await projector.caughtUp(sequencer.lastDurableEventSeq);
    const stream = perpCommandStream(11, name);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await submitConcurrently(sequencer, stream, commands, concurrency);
    await projector.caughtUp(sequencer.lastDurableEventSeq);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    await projector.stop();
    await sequencer.stop();
    return { cpuUsPerCommand: (cpu.user + cpu.system) / commands, commandsPerSec: commands / seconds };
  } finally {
    await db.close();
  }
}

export async function runSqliteStatementsBench(opts: { commands?: number; rounds?: number; concurrency?: number; print?: (line: string) => void } = {}): Promise<{ rounds: StatementsRound[]; table: string }> {
  const commands = opts.commands ?? Number(process.env.BENCH_STMT_COMMANDS ?? 30_000);
  const roundCount = opts.rounds ?? Number(process.env.BENCH_STMT_ROUNDS ?? 4);
  const concurrency = opts.concurrency ?? Number(process.env.BENCH_STMT_CONCURRENCY ?? 32);
  const dir = mkdtempSync(join(tmpdir(), 'tokex-stmt-bench-'));
  const rounds: StatementsRound[] = [];
  try {
    // A round not counted first: the first side of a process pays for V8's compilation of the whole path.
    await side(dir, 'unmeasured-cached', true, Math.min(commands, 5_000), concurrency);
    await side(dir, 'unmeasured-uncached', false, Math.min(commands, 5_000), concurrency);
    for (let r = 0; r < roundCount; r++) {
      const order = r % 2 === 0 ? [true, false] : [false, true];
      const got = new Map<boolean, StatementsSide>();
      for (const cached of order) got.set(cached, await side(dir, `r${r}-${cached ? 'cached' : 'uncached'}`, cached, commands, concurrency));
      const cachedSide = got.get(true)!;
      const uncachedSide = got.get(false)!;
      rounds.push({ cached: cachedSide, uncached: uncachedSide, cpuRatio: cachedSide.cpuUsPerCommand / uncachedSide.cpuUsPerCommand });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (n: number) => n.toFixed(1);
  const lines = [
    `SQLite statements kept per text against prepared per query: sequencer + projector in one process, ${commands.toLocaleString('en-US')} commands a side, ${concurrency} submitters, synchronous = FULL`,
    '| round | CPU per command, kept | CPU per command, prepared each time | kept ÷ prepared | commands/s, kept / prepared |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...rounds.map(
      (x, i) =>
        `| ${i + 1} | ${f(x.cached.cpuUsPerCommand)} µs | ${f(x.uncached.cpuUsPerCommand)} µs | **${x.cpuRatio.toFixed(2)}** | ${Math.round(x.cached.commandsPerSec)} / ${Math.round(x.uncached.commandsPerSec)} |`,
    ),
  ];
  const table = lines.join('\n');
  opts.print?.(table);
  return { rounds, table };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runSqliteStatementsBench({ print: (l) => console.log(l) });
}
