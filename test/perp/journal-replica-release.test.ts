/**
 * A perp API's journal replica beside a newer release (docs/upgrades.md, "Scale-out"): once a newer
 * release has started on the database, the replica stops following the journal (whose rows that
 * release may write in a form this build cannot replay) and says so, instead of misreading it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { createJournalReplica } from '../../src/perp/sequencer/journal-replica.ts';
import { recordAppRelease } from '../../src/storage/database-version.ts';
import type { Db } from '../../src/storage/database.ts';
import { until } from '../support/poll.ts';
import { testDatabases } from '../support/test-databases.ts';

const opened: Db[] = [];
afterAll(async () => {
  for (const db of opened) await db.close();
});

describe.each(testDatabases)('a journal replica on %s', (engine) => {
  it('follows the engine, then stops at a newer release and keeps the state it had', async () => {
    const db = await engine.open();
    opened.push(db);
    const sequencer = new EngineSequencer({ db });
    await sequencer.start();
    const errors: string[] = [];
    const replica = createJournalReplica({ db, pollMs: 20, releaseCheckMs: 0, logger: { warn: () => undefined, error: (_o: unknown, msg?: string) => void errors.push(msg ?? '') } });
    await replica.start();
    try {
      const account = `0x${'a1'.repeat(20)}`;
      const first = await sequencer.submit({ kind: 'deposit', id: 'dep-1', ts: Date.now(), account, amount: 1_000_000n });
      await replica.caughtUp(first.journalSeq);
      expect(replica.journalSeq).toBe(first.journalSeq);
      expect(replica.refusedRelease).toBeUndefined();

      await recordAppRelease(db, '99.0.0');
      const second = await sequencer.submit({ kind: 'deposit', id: 'dep-2', ts: Date.now(), account, amount: 2_000_000n });
      await until(async () => replica.refusedRelease, (v) => v !== undefined, 10_000);
      expect(replica.refusedRelease).toBe('99.0.0');
      expect(replica.journalSeq).toBe(first.journalSeq);
      expect(second.journalSeq).toBeGreaterThan(first.journalSeq!);
      expect(errors).toEqual([`perp replica: tokex 99.0.0 has started on this database; this process (tokex ${APP_VERSION}) stops following the journal rather than misread it: upgrade it`]);
    } finally {
      await replica.stop();
      await sequencer.stop();
    }
  }, 60_000);
});
