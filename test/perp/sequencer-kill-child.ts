/**
 * The process the kill test (sequencer-kill.test.ts) kills: a sequencer on a real database, fed a
 * deterministic command stream by 64 concurrent submitters until SIGKILL. It prints
 * `ready <nextSeq> <stateHash>` once started and `ok <commandId> <journalSeq>` for every answer, so
 * the parent knows which commands were answered before the kill.
 *
 * Environment: KILL_SQLITE_PATH, or KILL_PG_URL and KILL_PG_SCHEMA; KILL_RUN (command id prefix),
 * KILL_SEED; KILL_JOURNAL=worker: the group commits on the journal's writer thread (journal-writer.ts),
 * as the perp-engine role runs them on a SQLite file.
 */
import { openDatabase } from '../../src/storage/database.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { workerJournalWriter } from '../../src/perp/sequencer/journal-writer.ts';
import { perpCommandStream } from '../support/perp-command-stream.ts';

const env = process.env;
// Never outlive a parent that failed before killing us.
setTimeout(() => process.exit(3), 20_000).unref();
process.stdout.on('error', () => process.exit(4));
const db = await openDatabase(
  env.KILL_PG_URL ? { url: env.KILL_PG_URL, schema: env.KILL_PG_SCHEMA } : { sqlitePath: env.KILL_SQLITE_PATH },
);
const journalWriter = env.KILL_JOURNAL === 'worker' ? workerJournalWriter({ database: { sqlitePath: env.KILL_SQLITE_PATH } }) : undefined;
const sequencer = new EngineSequencer({ db, snapshotEvery: 250, maxBatch: 500, ...(journalWriter ? { journalWriter } : {}) });
await sequencer.start();
const out = (line: string) => process.stdout.write(`${line}\n`);
out(`ready ${sequencer.nextSeq} ${sequencer.engine.stateHash()}`);

const stream = perpCommandStream(Number(env.KILL_SEED ?? 1), `run${env.KILL_RUN ?? '0'}`);
async function submitter(): Promise<void> {
  for (;;) {
    const cmd = stream.next().value!;
    const r = await sequencer.submit(cmd);
    out(`ok ${cmd.id} ${r.journalSeq}`);
  }
}
await Promise.all(Array.from({ length: 64 }, submitter));
