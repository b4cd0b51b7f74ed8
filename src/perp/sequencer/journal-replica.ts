/**
 * A read-only copy of the engine for a perp API running in a process of its own: built like the
 * sequencer's restart (newest verified snapshot plus the journal after it), then following the
 * journal's durable rows as the engine writes them. Its books, accounts and positions are exactly
 * the engine's as of the journal row it has applied; it lags by at most one poll, and a caller that
 * must read its own write waits for that write's journal seq (`caughtUp`).
 *
 * It never writes: commands still go to the one engine through the gateway.
 */
import { createPositionWaiters } from '../../lib/async.ts';
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
}

export function createJournalReplica(opts: { db: Db; engineOptions?: PerpEngineOptions; pollMs?: number; logger?: Pick<Logger, 'warn' | 'error'> }): JournalReplica {
  const pollMs = opts.pollMs ?? 100;
  let engine: PerpEngine | undefined;
  let seq = 0;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> | undefined;
  const waiters = createPositionWaiters();

  const follow = async (): Promise<void> => {
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
