/**
 * What the sequencer (engine-sequencer.ts) is given and answers: its options, its logger, its
 * states and the shape of its answers. Apart from the class so that the journal's replay
 * (journal-replay.ts), which the class uses, can name them too.
 */
import type { Db } from '../../storage/database.ts';
import type { CommandResult, EngineEvent } from '../engine/engine-types.ts';
import type { PerpEngineOptions } from '../engine/perp-engine.ts';
import type { JournalNonceWriter } from '../store/engine-journal-store.ts';
import type { JournalWriter } from './journal-writer.ts';

/** An answer of the sequencer: the engine's result and where the command sits in the journal. */
export type SequencedResult = CommandResult & {
  /** The command's journal seq; null when it was refused before the engine (no usable id). */
  journalSeq: number | null;
  /**
   * True when this answers a command id journalled before: nothing was applied now, and `events`
   * (and `fills`) are empty; `subscribe` replays them if needed. (A duplicate of a command still
   * in flight shares its answer, events included.)
   */
  resubmitted?: true;
};

export interface SequencerLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface EngineSequencerOptions {
  db: Db;
  /**
   * The genesis options (fee account, default leverage) and the instruments to list: instruments the
   * journal lacks are listed, and changed settings journalled, on start. Default: DEFAULT_INSTRUMENTS.
   */
  engineOptions?: PerpEngineOptions;
  /** Most journal rows per group commit. Default 2 000. */
  maxBatch?: number;
  /** A snapshot after this many journalled commands. Default 10 000; 0 = only on stop(). */
  snapshotEvery?: number;
  /** Snapshots kept (older ones are deleted after a new one is written). Default 3. */
  keepSnapshots?: number;
  /** Answers remembered by command id for resubmissions. Default 100 000. */
  recentResults?: number;
  /** Durable events kept in memory for subscribers that start behind (at least this many, up to a quarter more between trims). Default 100 000. */
  eventBuffer?: number;
  /** Wait between attempts to rebuild after a failed journal write. Default 1 000 ms. */
  recoveryRetryMs?: number;
  logger?: SequencerLogger;
  /** Clock of the snapshots' created_at and of the instrument listings' ts. Default Date.now. */
  now?: () => number;
  /**
   * Order nonces claimed in process, written in each journal commit (order-nonce-store.ts,
   * `createJournalNonceLedger`). It outlives the sequencer: a later one writes what this one could not.
   */
  nonceLedger?: JournalNonceWriter;
  /**
   * Where the group commits run (journal-writer.ts): default on this thread. The sequencer closes it
   * when it stops.
   */
  journalWriter?: JournalWriter;
}

export type SequencerState = 'new' | 'running' | 'recovering' | 'stopping' | 'stopped';

export type EventListener = (event: EngineEvent) => void;

export const silentLogger: SequencerLogger = { warn() {}, error() {} };
