/**
 * The one replay of the perpetual journal, used by the sequencer's start-up and recovery, by event
 * catch-up and by the journal replica: from a genesis engine (no instruments: they are journalled
 * commands too) or a verified snapshot, each row is applied in order and must reproduce its journalled
 * code and last event seq; where a stored snapshot lies on the way, the state must hash to it.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../../errors/app-error.ts';
import type { Db } from '../../storage/database.ts';
import type { EngineEvent, EngineSnapshot } from '../engine/engine-types.ts';
import { PerpEngine, type PerpEngineOptions } from '../engine/perp-engine.ts';
import { latestSnapshots, readJournalAfter, type JournalRow, type SnapshotRow } from '../store/engine-journal-store.ts';
import { commandFromJson } from './engine-codec.ts';
import { silentLogger, type SequencerLogger } from './sequencer-options.ts';

/** Rows read and applied per slice of the replay (docs/performance.md "Start-up slices"). */
const REPLAY_PAGE = 2_000;

/** The journal was written by something that this engine does not reproduce. */
export class JournalCorruptError extends AppError {
  constructor(message: string, detail?: Record<string, unknown>) {
    super('INTERNAL', `perp journal: ${message}`, { detail });
  }
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The engine every journal starts from: the fee account and default leverage, no instrument, and
 * the first rules (a journal from before rule versions has no setRules row; a newer one raises them
 * by one at its first start).
 */
export function genesisEngine(options?: PerpEngineOptions): PerpEngine {
  return new PerpEngine({ ...options, instruments: [], rules: 1 });
}

/** A snapshot row as an engine, or why not (its text does not hash to its hash, or it does not restore to it). */
export function engineOfSnapshot(row: SnapshotRow): PerpEngine {
  if (sha256(row.snapshot) !== row.stateHash) throw new Error('hash of the stored text differs');
  const engine = PerpEngine.fromSnapshot(JSON.parse(row.snapshot) as EngineSnapshot);
  if (engine.stateHash() !== row.stateHash) throw new Error('restored engine hashes differently');
  return engine;
}

/** Applies one journal row; throws JournalCorruptError when it does not reproduce. */
export function replayRow(engine: PerpEngine, row: JournalRow, onEvents?: (events: EngineEvent[]) => void): void {
  if (row.code === 'OK') {
    const r = engine.apply(commandFromJson(JSON.parse(row.command)));
    if (!r.ok) throw new JournalCorruptError(`seq ${row.seq} replayed as ${r.code}`, { commandId: row.commandId });
    if (onEvents !== undefined && r.events.length > 0) onEvents(r.events);
  }
  if (engine.lastSeq !== row.lastEventSeq) {
    throw new JournalCorruptError(`seq ${row.seq} replayed to event seq ${engine.lastSeq}, journalled ${row.lastEventSeq}`);
  }
}

export interface ReplayOptions {
  /** The last row already in `engine`. */
  afterSeq: number;
  /** Stop after this row (default: the end of the journal). */
  upToSeq?: number;
  /** State hashes the engine must have after the given rows (stored snapshots on the way). */
  checkpoints?: ReadonlyMap<number, string>;
  onEvents?: (events: EngineEvent[]) => void;
}

/** Replays rows after `afterSeq` into `engine`; answers the last row applied. */
export async function replayJournal(db: Db, engine: PerpEngine, opts: ReplayOptions): Promise<number> {
  let last = opts.afterSeq;
  const upTo = opts.upToSeq ?? Number.MAX_SAFE_INTEGER;
  while (last < upTo) {
    const rows = await readJournalAfter(db, last, Math.min(REPLAY_PAGE, upTo - last));
    for (const row of rows) {
      if (row.seq !== last + 1) throw new JournalCorruptError(`gap before seq ${row.seq}`, { expected: last + 1 });
      replayRow(engine, row, opts.onEvents);
      last = row.seq;
      const want = opts.checkpoints?.get(row.seq);
      if (want !== undefined && engine.stateHash() !== want) {
        throw new JournalCorruptError(`seq ${row.seq} replays to a state other than its snapshot's`, { seq: row.seq });
      }
    }
    if (rows.length < Math.min(REPLAY_PAGE, upTo - last + rows.length)) break;
    if (rows.length === 0) break;
    // A turn of the event loop between pages: a long replay at start (or in a replica) must not
    // starve the lease renewal and heartbeats of the process (issue 27).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return last;
}

export interface LoadedEngine {
  engine: PerpEngine;
  /** The last journal row applied. */
  lastSeq: number;
  /** The journal seq of the snapshot the replay started from (0: genesis). */
  baseSeq: number;
}

/**
 * The engine as of the end of the journal: from the second-newest verified snapshot (or genesis),
 * replayed through the newest, whose state hash the replay must reach, and on to the end. Starting one
 * snapshot back costs at most one snapshot interval of replay and proves that the journal still
 * reproduces the state, settings included, on every start.
 */
export async function loadFromJournal(
  db: Db,
  options: { engineOptions?: PerpEngineOptions; logger?: { warn(obj: object, msg?: string): void }; onEvents?: (events: EngineEvent[]) => void; ignoreSnapshots?: boolean },
): Promise<LoadedEngine> {
  const verified: Array<{ row: SnapshotRow; engine: PerpEngine }> = [];
  if (!options.ignoreSnapshots) {
    for (const row of await latestSnapshots(db, 5)) {
      try {
        verified.push({ row, engine: engineOfSnapshot(row) });
      } catch (err) {
        // An older snapshot plus a longer replay gives the same state.
        options.logger?.warn({ err, lastSeq: row.lastSeq }, 'perp journal: snapshot skipped');
      }
      if (verified.length === 2) break;
    }
  }
  const base = verified.length === 2 ? verified[1] : undefined;
  const engine = base?.engine ?? genesisEngine(options.engineOptions);
  const baseSeq = base?.row.lastSeq ?? 0;
  const checkpoints = new Map<number, string>();
  if (verified.length > 0) checkpoints.set(verified[0].row.lastSeq, verified[0].row.stateHash);
  const lastSeq = await replayJournal(db, engine, { afterSeq: baseSeq, checkpoints, onEvents: options.onEvents });
  if (verified.length > 0 && lastSeq < verified[0].row.lastSeq) {
    throw new JournalCorruptError(`the journal ends at ${lastSeq}, before its snapshot at ${verified[0].row.lastSeq}`);
  }
  return { engine, lastSeq, baseSeq };
}

interface Loaded {
  engine: PerpEngine;
  nextJournalSeq: number;
  snapshotSeq: number;
  /** Events regenerated by the replay after the snapshot. */
  replayed: EngineEvent[];
}

/**
 * Rebuilds the engine from the journal (journal-replay.ts: one snapshot back, checked by state hash),
 * keeping the last `keepEvents` events the replay regenerated.
 */
export async function loadEngineFromJournal(
  db: Db,
  engineOptions?: PerpEngineOptions,
  opts: { keepEvents?: number; logger?: SequencerLogger; ignoreSnapshots?: boolean } = {},
): Promise<Loaded> {
  const keepEvents = opts.keepEvents ?? 0;
  const replayed: EngineEvent[] = [];
  const loaded = await loadFromJournal(db, {
    engineOptions,
    logger: opts.logger ?? silentLogger,
    ignoreSnapshots: opts.ignoreSnapshots,
    onEvents: keepEvents > 0 ? (events) => {
      for (const e of events) replayed.push(e);
      if (replayed.length > 2 * keepEvents) replayed.splice(0, replayed.length - keepEvents);
    } : undefined,
  });
  if (replayed.length > keepEvents) replayed.splice(0, replayed.length - keepEvents);
  return { engine: loaded.engine, nextJournalSeq: loaded.lastSeq + 1, snapshotSeq: loaded.baseSeq, replayed };
}

/**
 * Regenerates the events of seq ≥ fromEventSeq produced by journal rows up to `upToJournalSeq`:
 * from the newest snapshot taken before fromEventSeq (or genesis), replaying forward.
 */
export async function replayJournalEvents(
  db: Db,
  fromEventSeq: number,
  upToJournalSeq: number,
  emit: (event: EngineEvent) => void,
  engineOptions?: PerpEngineOptions,
): Promise<void> {
  let engine: PerpEngine | undefined;
  let after = 0;
  for (const s of await latestSnapshots(db, 100)) {
    if (s.lastSeq > upToJournalSeq) continue;
    try {
      const snap = JSON.parse(s.snapshot) as EngineSnapshot;
      if (snap.nextSeq > fromEventSeq) continue;
      engine = engineOfSnapshot(s);
    } catch {
      continue;
    }
    after = s.lastSeq;
    break;
  }
  engine ??= genesisEngine(engineOptions);
  const last = await replayJournal(db, engine, {
    afterSeq: after,
    upToSeq: upToJournalSeq,
    onEvents: (events) => {
      for (const e of events) if (e.seq >= fromEventSeq) emit(e);
    },
  });
  if (last < upToJournalSeq) throw new JournalCorruptError(`rows after ${last} missing`);
}
