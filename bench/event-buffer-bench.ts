/**
 * The sequencer's cost per command as its event buffer fills (issue 40, docs/performance.md "The
 * event buffer's trim"): the same command stream through one EngineSequencer on an in-memory
 * SQLite journal (no fsync: the loop's own work), from BENCH_EVENT_SUBMITTERS (default 2) submitters
 * so that a group commit holds a few commands, as single orders at a moderate rate make them. The
 * process's CPU per command is printed for each block of BENCH_EVENT_BLOCK (default 10 000) commands,
 * with the events published so far against the buffer (PERP_EVENT_BUFFER, default 100 000): a
 * buffer that costs what it holds shows as a step once it is full.
 *
 *   npx tsx bench/event-buffer-bench.ts     (BENCH_EVENT_BLOCKS, default 8)
 */
import { pathToFileURL } from 'node:url';
import { EngineSequencer } from '../src/perp/sequencer/engine-sequencer.ts';
import { openDatabase } from '../src/storage/database.ts';
import { perpCommandStream } from '../test/support/perp-command-stream.ts';
import { submitConcurrently } from './perp-journal-bench.ts';

export interface EventBufferBlock {
  /** Commands submitted before the block ended. */
  commands: number;
  /** Events published before the block ended. */
  events: number;
  cpuUsPerCommand: number;
}

export async function runEventBufferBench(o: { blocks?: number; block?: number; submitters?: number; eventBuffer?: number } = {}): Promise<{ blocks: EventBufferBlock[]; table: string }> {
  const blocks = o.blocks ?? Number(process.env.BENCH_EVENT_BLOCKS ?? 8);
  const block = o.block ?? Number(process.env.BENCH_EVENT_BLOCK ?? 10_000);
  const submitters = o.submitters ?? Number(process.env.BENCH_EVENT_SUBMITTERS ?? 2);
  const eventBuffer = o.eventBuffer ?? Number(process.env.PERP_EVENT_BUFFER ?? 100_000);
  const db = await openDatabase({ sqlitePath: ':memory:' });
  const sequencer = new EngineSequencer({ db, snapshotEvery: 0, eventBuffer });
  await sequencer.start();
  const stream = perpCommandStream(21, 'buffer');
  const out: EventBufferBlock[] = [];
  try {
    for (let b = 0; b < blocks; b++) {
      const c0 = process.cpuUsage();
      await submitConcurrently(sequencer, stream, block, submitters);
      const c = process.cpuUsage(c0);
      out.push({ commands: (b + 1) * block, events: sequencer.engine.lastSeq, cpuUsPerCommand: (c.user + c.system) / block });
    }
  } finally {
    await sequencer.stop();
    await db.close();
  }
  const table = [
    `| commands so far | events published (buffer ${eventBuffer}) | CPU per command in the block |`,
    '| ---: | ---: | ---: |',
    ...out.map((r) => `| ${r.commands} | ${r.events}${r.events > eventBuffer ? ' (full)' : ''} | ${r.cpuUsPerCommand.toFixed(1)} µs |`),
  ].join('\n');
  return { blocks: out, table };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log((await runEventBufferBench()).table);
}
