/**
 * The perpetual engine's single writer (docs/perp-sequencer.md). Commands are applied to the
 * engine synchronously in arrival order; their journal rows are written in batches (group commit:
 * whatever arrived while the previous batch was being written), and each answer is released only
 * once its batch is durable. Snapshots bound the replay a restart needs.
 *
 * Invariant: the engine's state = the latest snapshot + the journal rows after it, plus the rows
 * applied but not yet durable (`buffer` and the batch being written). No answer leaves before its
 * row is durable, so a crash loses only commands nobody was told about.
 */
import { AppError, ConflictError, StorageUnavailableError } from '../../errors/app-error.ts';
import type { Db } from '../../storage/database.ts';
import type { CommandResult, EngineCommand, EngineEvent, EngineSnapshot } from '../engine/engine-types.ts';
import { DEFAULT_INSTRUMENTS, instrumentSpec, type InstrumentConfig } from '../engine/instruments.ts';
import { PerpEngine, type PerpEngineOptions } from '../engine/perp-engine.ts';
import { MAX_COMMAND_ID } from '../engine/state/validate.ts';
import {
  acquireJournalWriterLock,
  findJournalByCommandIds,
  pruneSnapshots,
  readJournalTail,
  saveSnapshot,
  type JournalNonceWriter,
  type JournalRow,
  type JournalWriterLock,
} from '../store/engine-journal-store.ts';
import { commandToText, resultFromSummary, resultSummaryToJson } from './engine-codec.ts';
import { ENGINE_COMMAND_KINDS, metricsClock, recordJournalFailure, recordJournalFlush } from '../../observability/metrics-registry.ts';
import { ENGINE_RULES, type CommandKind } from '../engine/engine-types.ts';

// The metrics' label range is every command kind, and nothing else: the compiler keeps them equal.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const KINDS_ARE_LABELLED: Same<(typeof ENGINE_COMMAND_KINDS)[number], CommandKind> = true;
void KINDS_ARE_LABELLED;
import { threadJournalWriter, type JournalWriter } from './journal-writer.ts';
import { JournalCorruptError, genesisEngine, loadEngineFromJournal, replayJournalEvents, sha256 } from './journal-replay.ts';
import { silentLogger, type EngineSequencerOptions, type EventListener, type SequencedResult, type SequencerLogger, type SequencerState } from './sequencer-options.ts';
import { EventRing } from './event-ring.ts';
import { FifoStringTable } from '../../lib/fifo-string-table.ts';

export { JournalCorruptError } from './journal-replay.ts';

export type { EngineSequencerOptions, EventListener, SequencedResult, SequencerLogger, SequencerState } from './sequencer-options.ts';
export { loadEngineFromJournal, replayJournalEvents } from './journal-replay.ts';

interface Pending {
  row: JournalRow;
  result: SequencedResult;
  resolve: (r: SequencedResult) => void;
  reject: (e: unknown) => void;
  /** metricsClock() when applied (0 while metrics are off). */
  appliedAt: number;
  /** The submitMany group it belongs to (0: none): a group is never split across journal batches. */
  group: number;
}

interface Subscriber {
  /** The next seq it expects. */
  next: number;
  fn: EventListener;
  /** Live events held while a catch-up replay runs. */
  queued: EngineEvent[] | null;
}

interface Waiting {
  cmd: EngineCommand;
  resolve: (r: SequencedResult) => void;
  reject: (e: unknown) => void;
  group: number;
}

function notRunning(state: SequencerState): AppError {
  return new AppError('STORAGE_UNAVAILABLE', `perp engine: the sequencer is ${state}, try again later`, { retryable: true });
}

function unknownOutcome(cause: unknown): AppError {
  return new StorageUnavailableError({
    cause,
    // The batch may or may not have committed (a connection lost during COMMIT): the client
    // resubmits with the same id and gets the journalled answer if it did.
    data: { outcome: 'unknown', retry: 'resubmit with the same command id' },
  });
}

/** A command id for an instrument listing or settings change: unique, since the journal seq only grows. */
function instrumentCommandId(kind: 'add' | 'update', symbol: string, seq: number): string {
  return `instrument:${kind}:${symbol}:${seq}`;
}

/** Whether the configured settings differ from those in force (compared in canonical form). */
function settingsDiffer(configured: InstrumentConfig, current: InstrumentConfig): boolean {
  const a = instrumentSpec(configured);
  const b = instrumentSpec(current);
  const keys = Object.keys(a).filter((k) => k !== 'unitMicros').sort();
  return keys.some((k) => (a as unknown as Record<string, unknown>)[k] !== (b as unknown as Record<string, unknown>)[k]);
}

export class EngineSequencer {
  private readonly db: Db;
  private readonly opts: Required<Omit<EngineSequencerOptions, 'db' | 'engineOptions' | 'logger' | 'nonceLedger' | 'journalWriter'>>;
  private readonly journalWriter: JournalWriter;
  private readonly nonceLedger?: JournalNonceWriter;
  private readonly engineOptions?: PerpEngineOptions;
  private readonly logger: SequencerLogger;

  private _state: SequencerState = 'new';
  private _engine: PerpEngine = genesisEngine();
  private nextJournalSeq = 1;
  private durableSeq = 0;

  /** Applied, journal row not yet being written. */
  private buffer: Pending[] = [];
  private flushing = false;
  private flushScheduled = false;
  private readonly idle: Array<() => void> = [];
  /** Reads waiting for every command applied before them to be durable (readBarrier). */
  private barriers: Array<{ upTo: number; resolve: () => void }> = [];

  /** Command ids applied and not yet answered. */
  private readonly inflight = new Map<string, Promise<SequencedResult>>();
  /**
   * Answers by command id, oldest first, bounded: the journalled form (the row's `result` text and
   * its seq), a few hundred bytes each, held outside the JS heap (FifoStringTable says why).
   */
  private readonly recent = new FifoStringTable();
  /** True once the journal may hold ids that `recent` no longer has: new ids are looked up first. */
  private lookupMode = false;
  private lookupQueue: Waiting[] = [];
  private lookupRunning = false;

  private lastSnapshotSeq = 0;
  private snapshotDue: { lastSeq: number; snap: EngineSnapshot } | null = null;
  private snapshotWrite: Promise<void> = Promise.resolve();

  private readonly listeners = new Set<Subscriber>();
  private readonly ring: EventRing;
  private publishedSeq = 0;
  private recovery: Promise<void> | null = null;
  /** The engine holds commands that are not (known to be) journalled: never snapshot it. */
  private engineAhead = false;
  private lock: JournalWriterLock | null = null;
  private readonly counters = { batches: 0, rows: 0, maxBatchRows: 0, recoveries: 0 };

  constructor(options: EngineSequencerOptions) {
    this.db = options.db;
    this.engineOptions = options.engineOptions;
    this.logger = options.logger ?? silentLogger;
    this.nonceLedger = options.nonceLedger;
    this.journalWriter = options.journalWriter ?? threadJournalWriter(options.db);
    this.opts = {
      maxBatch: options.maxBatch ?? 2_000,
      snapshotEvery: options.snapshotEvery ?? 10_000,
      keepSnapshots: Math.max(1, options.keepSnapshots ?? 3),
      recentResults: Math.max(1, options.recentResults ?? 100_000),
      eventBuffer: Math.max(0, options.eventBuffer ?? 100_000),
      recoveryRetryMs: options.recoveryRetryMs ?? 1_000,
      now: options.now ?? Date.now,
    };
    this.ring = new EventRing(this.opts.eventBuffer);
  }

  get state(): SequencerState {
    return this._state;
  }

  /**
   * The live engine, for reads (books, accounts, margin). Never call its commands: only the
   * sequencer writes. After a recovery this is a new object, so read it through this getter.
   */
  get engine(): PerpEngine {
    return this._engine;
  }

  /** The journal seq the next applied command will take. */
  get nextSeq(): number {
    return this.nextJournalSeq;
  }

  /** The highest journal seq known durable. */
  get durableJournalSeq(): number {
    return this.durableSeq;
  }

  /** Group commit figures since start: batches written, rows in them, the largest batch. */
  get stats(): { batches: number; rows: number; maxBatchRows: number; recoveries: number } {
    return { ...this.counters };
  }

  /** The last event seq published to subscribers (every event up to it is durable). */
  get lastDurableEventSeq(): number {
    return this.publishedSeq;
  }

  /** Loads the newest verified snapshot and replays the journal after it. */
  async start(): Promise<void> {
    if (this._state !== 'new') throw new Error('sequencer: start() called twice');
    const lock = await acquireJournalWriterLock(this.db);
    if (lock === null) throw new ConflictError('perp journal: another sequencer is writing this journal');
    try {
      await this.load();
      // The writer's thread is started now, not at the first order: one that cannot open the file
      // fails the start, and the first order after a restart does not wait for a thread to boot.
      await this.journalWriter.start();
    } catch (err) {
      await lock.release().catch(() => undefined);
      throw err;
    }
    this.lock = lock;
    this._state = 'running';
    await this.syncRules();
    await this.syncInstruments();
  }

  /**
   * Journals this release's engine rules when the journal is under earlier ones: the rows before
   * replay under the rules they were applied under, those after under these (ENGINE_RULES).
   */
  private async syncRules(): Promise<void> {
    const from = this._engine.rules;
    if (from >= ENGINE_RULES) return;
    const r = await this.submit({ kind: 'setRules', id: `rules:${ENGINE_RULES}:${this.nextJournalSeq}`, ts: this.opts.now(), rules: ENGINE_RULES });
    if (!r.ok) throw new ConflictError(`perp journal: the engine's rules cannot be raised from ${from} to ${ENGINE_RULES}: ${r.message}`);
  }

  /**
   * Lists the configured instruments the journal does not have and journals a settings change for
   * those whose configuration changed: the settings a trade was made under stay in the journal.
   */
  private async syncInstruments(): Promise<void> {
    const configured = this.engineOptions?.instruments ?? DEFAULT_INSTRUMENTS;
    for (const config of configured) {
      const current = this._engine.instrument(config.symbol);
      if (current === undefined) {
        const r = await this.submit({ kind: 'addInstrument', id: instrumentCommandId('add', config.symbol, this.nextJournalSeq), ts: this.opts.now(), config });
        if (!r.ok) throw new ConflictError(`perp journal: instrument ${config.symbol} cannot be listed: ${r.message}`);
      } else if (settingsDiffer(config, current)) {
        const r = await this.submit({ kind: 'updateInstrument', id: instrumentCommandId('update', config.symbol, this.nextJournalSeq), ts: this.opts.now(), config });
        if (!r.ok) this.logger.warn({ symbol: config.symbol, code: r.code }, 'perp journal: instrument settings not changed');
      }
    }
  }

  private async load(): Promise<void> {
    const loaded = await loadEngineFromJournal(this.db, this.engineOptions, {
      keepEvents: this.opts.eventBuffer,
      logger: this.logger,
    });
    this._engine = loaded.engine;
    this.nextJournalSeq = loaded.nextJournalSeq;
    this.durableSeq = loaded.nextJournalSeq - 1;
    this.lastSnapshotSeq = loaded.snapshotSeq;
    this.snapshotDue = null;
    this.engineAhead = false;
    // Events a failed batch applied that did commit after all were never published: do it now.
    const fresh = loaded.replayed.filter((e) => e.seq > this.publishedSeq);
    if (this._state === 'new') {
      this.ring.reset(fresh);
      this.publishedSeq = this._engine.lastSeq;
    } else {
      this.publish(fresh);
      this.publishedSeq = Math.max(this.publishedSeq, this._engine.lastSeq);
    }
    this.recent.clear();
    for (const row of await readJournalTail(this.db, this.opts.recentResults)) this.recent.push(row.commandId, row.seq, row.result);
    this.lookupMode = this.durableSeq > this.recent.size;
  }

  /**
   * Applies `cmd` and answers once its journal row is durable. Refusals are answers too (ok:false,
   * journalled); a rejected promise means the outcome is not known to be durable (journal failure,
   * sequencer stopped) and the command may be resubmitted with the same id.
   */
  submit(cmd: EngineCommand): Promise<SequencedResult> {
    return this.submitIn(cmd, 0);
  }

  /**
   * Applies the commands back to back, in order, and journals them in one commit (a batch of orders,
   * docs/perp-api.md "Batch orders"): nothing else is applied between them and the journal batch
   * that holds the first holds them all. Each keeps its own id, so each is idempotent on its own
   * (a command journalled before is answered from the journal and not applied again).
   */
  submitMany(cmds: readonly EngineCommand[]): Promise<SequencedResult[]> {
    const group = ++this.groups;
    const answers = cmds.map((cmd) => this.submitIn(cmd, group));
    // In lookup mode the group's ids are looked up together, so they are applied together.
    if (this.lookupMode) this.runLookups();
    return Promise.all(answers);
  }

  private groups = 0;

  private submitIn(cmd: EngineCommand, group: number): Promise<SequencedResult> {
    if (this._state !== 'running') return Promise.reject(notRunning(this._state));
    const id = (cmd as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_COMMAND_ID) {
      return Promise.resolve({
        ok: false,
        code: 'INVALID',
        message: `id: a string of 1..${MAX_COMMAND_ID} characters`,
        events: [],
        journalSeq: null,
      });
    }
    const known = this.recent.find(id);
    if (known >= 0) return Promise.resolve({ ...resultFromSummary(this.recent.textAt(known)!), journalSeq: this.recent.numberAt(known), resubmitted: true });
    const pending = this.inflight.get(id);
    if (pending !== undefined) return pending.then((r) => ({ ...r, resubmitted: true }) as SequencedResult);
    let resolve!: Pending['resolve'];
    let reject!: Pending['reject'];
    const p = new Promise<SequencedResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Registered before applying, so every path that settles p can remove it.
    this.inflight.set(id, p);
    p.catch(() => this.inflight.get(id) === p && this.inflight.delete(id));
    if (this.lookupMode) {
      this.lookupQueue.push({ cmd, resolve, reject, group });
      if (group === 0) this.runLookups();
    } else {
      this.applyNow(cmd, resolve, reject, group);
    }
    return p;
  }

  /** New ids are checked against the journal in one query per group, in arrival order. */
  private runLookups(): void {
    if (this.lookupRunning || this.lookupQueue.length === 0) return;
    this.lookupRunning = true;
    const group = this.lookupQueue;
    this.lookupQueue = [];
    findJournalByCommandIds(
      this.db,
      group.map((w) => w.cmd.id),
    )
      .then(
        (rows) => {
          const found = new Map(rows.map((r) => [r.commandId, r]));
          for (const w of group) {
            if (this._state !== 'running') {
              w.reject(notRunning(this._state));
              continue;
            }
            const row = found.get(w.cmd.id);
            if (row !== undefined) {
              this.inflight.delete(w.cmd.id);
              w.resolve({ ...this.fromRow(row), resubmitted: true });
            } else {
              this.applyNow(w.cmd, w.resolve, w.reject, w.group);
            }
          }
        },
        (err) => {
          for (const w of group) w.reject(new StorageUnavailableError({ cause: err }));
        },
      )
      .finally(() => {
        this.lookupRunning = false;
        this.runLookups();
      });
  }

  private applyNow(cmd: EngineCommand, resolve: Pending['resolve'], reject: Pending['reject'], group: number): void {
    let command: string;
    try {
      // Before applying: a command that cannot be journalled must not change the engine.
      command = commandToText(cmd);
    } catch {
      this.inflight.delete(cmd.id);
      resolve({ ok: false, code: 'INVALID', message: 'command: not serialisable', events: [], journalSeq: null });
      return;
    }
    let result: CommandResult;
    try {
      result = this._engine.apply(cmd);
    } catch (err) {
      // A broken engine invariant: the state may be half-changed. Rebuild from the journal.
      reject(new AppError('INTERNAL', 'perp engine: internal error', { cause: err }));
      this.logger.error({ err, commandId: cmd.id }, 'perp engine threw; rebuilding from the journal');
      this.triggerRecovery(err);
      return;
    }
    const seq = this.nextJournalSeq++;
    const row: JournalRow = {
      seq,
      commandId: cmd.id,
      kind: String(cmd.kind),
      command,
      ts: typeof cmd.ts === 'number' && Number.isSafeInteger(cmd.ts) ? cmd.ts : 0,
      code: result.code,
      lastEventSeq: this._engine.lastSeq,
      result: resultSummaryToJson(result),
    };
    this.buffer.push({ row, result: { ...result, journalSeq: seq }, resolve, reject, appliedAt: metricsClock(), group });
    if (this.opts.snapshotEvery > 0 && this.snapshotDue === null && seq - this.lastSnapshotSeq >= this.opts.snapshotEvery) {
      // Taken between commands (snapshot() is a synchronous deep copy); written once seq is durable.
      this.snapshotDue = { lastSeq: seq, snap: this._engine.snapshot() };
      this.lastSnapshotSeq = seq;
    }
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushing || this.flushScheduled || this.buffer.length === 0) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: the callbacks of the answers just released run first and
    // their follow-up submits join this batch.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    if (this.buffer.length === 0) return this.settleIdle();
    this.flushing = true;
    let take = Math.min(this.buffer.length, this.opts.maxBatch);
    // A submitMany group stays in one commit, even past maxBatch (a group is at most a batch of orders).
    while (take < this.buffer.length && this.buffer[take - 1].group !== 0 && this.buffer[take].group === this.buffer[take - 1].group) take++;
    const batch = take === this.buffer.length ? this.buffer : this.buffer.slice(0, take);
    this.buffer = batch === this.buffer ? [] : this.buffer.slice(batch.length);
    let failed: unknown;
    const flushStart = metricsClock();
    // Every nonce claimed so far, the claims of this batch's orders among them (an order is submitted
    // after its claim): written with the batch, so no answered order's nonce can be lost alone.
    const nonces = this.nonceLedger?.take() ?? [];
    try {
      await this.journalWriter.append(
        batch.map((p) => p.row),
        nonces,
      );
    } catch (err) {
      failed = err;
    }
    if (failed === undefined) this.nonceLedger?.written(nonces);
    else this.nonceLedger?.restore(nonces);
    if (failed === undefined) {
      this.durableSeq = batch[batch.length - 1].row.seq;
      recordJournalFlush(flushStart, batch);
      // Reads first: their continuations run before the answers' callbacks can apply more.
      this.releaseBarriers(false);
      this.counters.batches++;
      this.counters.rows += batch.length;
      if (batch.length > this.counters.maxBatchRows) this.counters.maxBatchRows = batch.length;
      const events: EngineEvent[] = [];
      for (const p of batch) {
        this.inflight.delete(p.row.commandId);
        this.remember(p.row);
        for (const e of p.result.events) events.push(e);
      }
      this.publish(events);
      for (const p of batch) p.resolve(p.result);
      this.maybeWriteSnapshot();
    } else {
      this.logger.error({ err: failed, rows: batch.length }, 'perp journal: batch write failed; rebuilding from the journal');
      const error = unknownOutcome(failed);
      recordJournalFailure(batch);
      for (const p of batch) p.reject(error);
      this.triggerRecovery(failed);
    }
    this.flushing = false;
    if (this._state === 'recovering') this.startRebuild();
    else this.scheduleFlush();
    this.settleIdle();
  }

  private settleIdle(): void {
    if (!this.flushing && !this.flushScheduled && this.buffer.length === 0 && this.recovery === null) {
      for (const f of this.idle.splice(0)) f();
    }
  }

  private remember(row: JournalRow): void {
    // A command id is journalled once (the journal's unique key), and only an id that is neither
    // recent nor in flight is applied, so the id is not held yet.
    this.recent.push(row.commandId, row.seq, row.result);
    if (this.recent.size > this.opts.recentResults) {
      this.recent.shift();
      this.lookupMode = true;
    }
  }

  private fromRow(row: JournalRow): SequencedResult {
    return { ...resultFromSummary(row.result), journalSeq: row.seq };
  }

  /**
   * The engine is ahead of the journal (or broken): every applied command not yet durable is
   * failed, never answered as accepted, and the engine is rebuilt from snapshot + journal, which is
   * the truth. Submits are refused until the rebuild succeeds.
   */
  private triggerRecovery(cause: unknown): void {
    if (this._state === 'running') this._state = 'recovering';
    this.engineAhead = true;
    this.counters.recoveries++;
    const error = unknownOutcome(cause);
    for (const p of this.buffer.splice(0)) p.reject(error);
    for (const w of this.lookupQueue.splice(0)) w.reject(error);
    this.snapshotDue = null;
    if (!this.flushing) this.startRebuild();
  }

  private startRebuild(): void {
    if (this.recovery !== null) return;
    const attempt = async (): Promise<void> => {
      for (;;) {
        try {
          await this.load();
          if (this._state === 'recovering') this._state = 'running';
          // The engine is the journal's state again: what waited can read it.
          this.releaseBarriers(true);
          return;
        } catch (err) {
          this.logger.error({ err }, 'perp journal: rebuild failed; retrying');
          if (err instanceof JournalCorruptError || this._state !== 'recovering') throw err;
          await new Promise((r) => setTimeout(r, this.opts.recoveryRetryMs));
          if (this._state !== 'recovering') return;
        }
      }
    };
    this.recovery = attempt()
      .catch((err) => {
        this.logger.error({ err }, 'perp journal: cannot rebuild; sequencer stopped');
        this._state = 'stopped';
        this.releaseBarriers(true);
        void this.releaseLock();
      })
      .finally(() => {
        this.recovery = null;
        this.settleIdle();
      });
  }

  private maybeWriteSnapshot(): void {
    const due = this.snapshotDue;
    if (due === null || due.lastSeq > this.durableSeq) return;
    this.snapshotDue = null;
    this.snapshotWrite = this.snapshotWrite.then(() => this.writeSnapshot(due.lastSeq, due.snap));
  }

  private async writeSnapshot(lastSeq: number, snap: EngineSnapshot): Promise<void> {
    try {
      const text = JSON.stringify(snap);
      await saveSnapshot(this.db, { lastSeq, stateHash: sha256(text), snapshot: text, createdAt: this.opts.now() });
      await pruneSnapshots(this.db, this.opts.keepSnapshots);
    } catch (err) {
      // Only the restart time suffers: the journal alone rebuilds the state.
      this.logger.warn({ err, lastSeq }, 'perp journal: snapshot not written');
    }
  }

  /**
   * Resolves once every command applied so far is durable, or once a failed write has been
   * recovered from (the engine is then the journal's state): a read that waits for it never shows a
   * command that a failed journal write later removes (docs/perp-sequencer.md "Reads").
   */
  readBarrier(): Promise<void> {
    const upTo = this.nextJournalSeq - 1;
    if (upTo <= this.durableSeq && this._state !== 'recovering') return Promise.resolve();
    return new Promise((resolve) => this.barriers.push({ upTo, resolve }));
  }

  private releaseBarriers(all: boolean): void {
    if (this.barriers.length === 0) return;
    const keep: Array<{ upTo: number; resolve: () => void }> = [];
    for (const b of this.barriers) {
      if (all || b.upTo <= this.durableSeq) b.resolve();
      else keep.push(b);
    }
    this.barriers = keep;
  }

  /** Resolves when nothing applied is waiting for the journal. */
  private whenIdle(): Promise<void> {
    if (!this.flushing && !this.flushScheduled && this.buffer.length === 0 && this.recovery === null) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Takes a snapshot of the current state now and writes it once every command in it is durable;
   * answers its journal seq (after it is written).
   */
  async snapshotNow(): Promise<number> {
    if (this._state !== 'running') throw notRunning(this._state);
    const lastSeq = this.nextJournalSeq - 1;
    this.snapshotDue = { lastSeq, snap: this._engine.snapshot() };
    this.lastSnapshotSeq = lastSeq;
    this.maybeWriteSnapshot();
    await this.whenIdle();
    await this.snapshotWrite;
    return lastSeq;
  }

  /** Refuses new submits, answers everything applied, writes a final snapshot. */
  async stop(): Promise<void> {
    if (this._state === 'stopped' || this._state === 'new') {
      this._state = 'stopped';
      return;
    }
    this._state = 'stopping';
    for (const w of this.lookupQueue.splice(0)) w.reject(notRunning('stopping'));
    while (this.flushing || this.flushScheduled || this.buffer.length > 0 || this.recovery !== null) {
      if (!this.flushing && !this.flushScheduled) this.scheduleFlush();
      await new Promise<void>((resolve) => this.idle.push(resolve));
    }
    if (!this.engineAhead && (this.durableSeq > this.lastSnapshotSeq || this.snapshotDue !== null)) {
      const snap = this._engine.snapshot();
      const lastSeq = this.durableSeq;
      this.snapshotWrite = this.snapshotWrite.then(() => this.writeSnapshot(lastSeq, snap));
    }
    await this.snapshotWrite;
    this._state = 'stopped';
    this.releaseBarriers(true);
    this.ring.close();
    await this.journalWriter.close();
    await this.releaseLock();
  }

  /**
   * Stops at once as a crash would: nothing more is written (no flush, no snapshot), commands not
   * yet durable are failed, the writer lock is released. For tests and failover drills.
   */
  async abandon(): Promise<void> {
    this._state = 'stopped';
    this.releaseBarriers(true);
    const error = notRunning('stopped');
    for (const p of this.buffer.splice(0)) p.reject(error);
    for (const w of this.lookupQueue.splice(0)) w.reject(error);
    this.snapshotDue = null;
    // A commit in flight on the worker ends as it ends (it is in the journal or not); nothing more is sent.
    await this.journalWriter.close();
    await this.releaseLock();
  }

  private async releaseLock(): Promise<void> {
    const lock = this.lock;
    this.lock = null;
    await lock?.release().catch((err: unknown) => this.logger.warn({ err }, 'perp journal: writer lock not released'));
  }

  /**
   * Calls `listener` with every durable event of seq ≥ fromSeq, in order and without gaps: first
   * the events already durable (from memory, or regenerated by a journal replay when they are older
   * than the retained ones), then each batch as it becomes durable. `onError` hears a failed replay
   * (the subscription then ends). Answers the unsubscribe function.
   */
  subscribe(fromSeq: number, listener: EventListener, onError?: (err: unknown) => void): () => void {
    const sub: Subscriber = { next: Math.max(1, Math.trunc(fromSeq)), fn: listener, queued: null };
    const oldest = this.ring.oldestSeq() ?? this.publishedSeq + 1;
    const unsubscribe = () => void this.listeners.delete(sub);
    if (sub.next >= oldest || sub.next > this.publishedSeq) {
      for (const e of this.ring.since(sub.next)) this.deliver(sub, e);
      this.listeners.add(sub);
      return unsubscribe;
    }
    // Older than memory: replay the journal up to what is durable now; live batches wait meanwhile.
    sub.queued = [];
    this.listeners.add(sub);
    const upTo = this.durableSeq;
    replayJournalEvents(this.db, sub.next, upTo, (e) => this.deliver(sub, e), this.engineOptions).then(
      () => {
        const queued = sub.queued ?? [];
        sub.queued = null;
        for (const e of queued) this.deliver(sub, e);
      },
      (err) => {
        this.listeners.delete(sub);
        this.logger.warn({ err, fromSeq }, 'perp events: catch-up replay failed');
        onError?.(err);
      },
    );
    return unsubscribe;
  }

  private deliver(sub: Subscriber, e: EngineEvent): void {
    if (e.seq < sub.next) return;
    sub.next = e.seq + 1;
    try {
      sub.fn(e);
    } catch (err) {
      this.logger.warn({ err }, 'perp events: a listener threw');
    }
  }

  private publish(events: EngineEvent[]): void {
    if (events.length === 0) return;
    // Serialized and trimmed a quarter at a time (event-ring.ts): between trims it holds up to a quarter more.
    this.ring.push(events);
    this.publishedSeq = events[events.length - 1].seq;
    for (const sub of this.listeners) {
      if (sub.queued !== null) for (const e of events) sub.queued.push(e);
      else for (const e of events) this.deliver(sub, e);
    }
  }
}
