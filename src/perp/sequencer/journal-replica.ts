/**
 * A read-only copy of the engine for a perp API running in a process of its own: built like the
 * sequencer's restart (newest verified snapshot plus the journal after it), then following the
 * journal's durable rows as the engine writes them. Its books, accounts and positions are exactly
 * the engine's as of the journal row it has applied; it lags by at most one poll, and a caller that
 * must read its own write waits for that write's journal seq (`caughtUp`).
 *
 * It never writes: commands still go to the one engine through the gateway.
 */
import { APP_VERSION, compareVersions } from '../../config/build-info.ts';
import { createPositionWaiters } from '../../lib/async.ts';
import { listAppReleases } from '../../storage/database-version.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Db } from '../../storage/database.ts';
import type { PerpEngine, PerpEngineOptions } from '../engine/perp-engine.ts';
import { readJournalAfter } from '../store/engine-journal-store.ts';
import { JournalCorruptError, loadFromJournal, replayRow } from './journal-replay.ts';

export interface JournalReplica {
  engine(): PerpEngine;
  /** The last journal row applied. */
  readonly journalSeq: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves once the row `journalSeq` is applied (at once for null: nothing was journalled). */
  caughtUp(journalSeq: number | null): Promise<void>;
  /**
   * Set when a newer release has started on the database (`app_releases`): the replica stopped
   * following a journal it may not read, rather than misread it (docs/upgrades.md, "Scale-out").
   */
  readonly refusedRelease: string | undefined;
}

/** How often a replica looks for a newer release on its database. */
const RELEASE_CHECK_MS = 5_000;

export function createJournalReplica(opts: { db: Db; engineOptions?: PerpEngineOptions; pollMs?: number; releaseCheckMs?: number; logger?: Pick<Logger, 'warn' | 'error'> }): JournalReplica {
  const pollMs = opts.pollMs ?? 100;
  const releaseCheckMs = opts.releaseCheckMs ?? RELEASE_CHECK_MS;
  let checkedAt = 0;
  let refusedRelease: string | undefined;
  let engine: PerpEngine | undefined;
  let seq = 0;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> | undefined;
  const waiters = createPositionWaiters();

  /** A newer release's journal may hold what this build cannot replay: stop before reading it. */
  const newerRelease = async (): Promise<string | undefined> => {
    if (Date.now() - checkedAt < releaseCheckMs) return undefined;
    checkedAt = Date.now();
    const releases = await listAppReleases(opts.db).catch(() => []);
    return releases.map((r) => r.version).find((v) => compareVersions(v, APP_VERSION) > 0);
  };

  const follow = async (): Promise<void> => {
    const newer = await newerRelease();
    if (newer !== undefined) {
      refusedRelease = newer;
      running = false;
      opts.logger?.error({ databaseRelease: newer, release: APP_VERSION }, `perp replica: tokex ${newer} has started on this database; this process (tokex ${APP_VERSION}) stops following the journal rather than misread it: upgrade it`);
      return;
    }
    for (;;) {
      const rows = await readJournalAfter(opts.db, seq, 5_000);
      for (const row of rows) {
        if (row.seq !== seq + 1) throw new JournalCorruptError(`replica: gap before seq ${row.seq}`, { expected: seq + 1 });
        replayRow(engine!, row);
        seq = row.seq;
      }
      waiters.reached(seq);
      if (rows.length < 5_000) return;
    }
  };

  const read = (): Promise<void> => {
    reading ??= follow()
      .catch((err) => opts.logger?.error({ err }, 'perp replica: following the journal failed; retrying'))
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };

  const loop = () => {
    if (!running) return;
    void read().finally(() => {
      if (running) timer = setTimeout(loop, pollMs);
    });
  };

  return {
    engine() {
      if (!engine) throw new Error('perp replica: not started');
      return engine;
    },
    get journalSeq() {
      return seq;
    },
    get refusedRelease() {
      return refusedRelease;
    },
    async start() {
      const loaded = await loadFromJournal(opts.db, { engineOptions: opts.engineOptions, logger: opts.logger });
      engine = loaded.engine;
      seq = loaded.lastSeq;
      running = true;
      loop();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await reading;
      waiters.releaseAll();
    },
    caughtUp(journalSeq) {
      if (journalSeq === null || journalSeq <= seq) return Promise.resolve();
      // Read now rather than at the next poll: the caller waits on its own write.
      const p = waiters.wait(journalSeq);
      void read();
      return p;
    },
  };
}
