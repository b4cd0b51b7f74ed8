/**
 * Projects the engine's durable events into the history tables (event-projection.ts) for the API's
 * lists: one writer per database, running beside the sequencer. It subscribes from its cursor (the
 * meta key `perp.projection.seq`), folds what arrived in batches, and writes each batch's rows with
 * the new cursor in one transaction, so a crash replays at most the batch that was not committed,
 * and the writes are idempotent anyway.
 *
 * A failed write keeps the batch and retries; a subscription whose catch-up failed is opened again
 * from the cursor. The projection lags the engine by about one batch write.
 */
import { createPositionWaiters } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { getMeta } from '../../storage/meta-store.ts';
import type { EngineEvent } from '../engine/engine-types.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { PROJECTION_CURSOR_KEY, writeProjection } from './projection-write.ts';
import { threadProjectionWriter, type ProjectionWriter } from './projection-worker-client.ts';

export { PROJECTION_CURSOR_KEY, writeProjection };

export interface PerpProjectorOptions {
  /** Where the cursor is read at start; and where the writes go unless `writer` says otherwise. */
  db: DbExecutor;
  /**
   * Where the writes run (projection-worker-client.ts): default, this thread on `db`. The projector
   * owns it from here: `stop()` closes it after the last write.
   */
  writer?: (onUnknownReason: (reason: string) => void) => ProjectionWriter;
  gateway: Pick<EngineGateway, 'subscribe'>;
  feeAccount: string;
  logger?: Pick<Logger, 'warn' | 'error' | 'info'>;
  /** Most events per write. Default 5 000. */
  maxBatch?: number;
  /** Wait before retrying a failed write or subscription. Default 1 000 ms. */
  retryMs?: number;
  /**
   * Least time from the start of one write to the start of the next. Default 100 ms. Under load the
   * events of that time share one transaction: most of a write's cost is the same for 25 events as
   * for 100 (the commit, the cursor, the same pages of each table and index; about 2.3 ms of CPU a
   * write against 21 µs an event on SQLite, issue 40), so it bounds the projector's share of the
   * order thread at the price of lists lagging the engine by that much more. A write after a quiet
   * spell starts at once, and so does one that a `caughtUp` in this process is waiting for: a list
   * read after an order does not wait out the interval.
   */
  minWriteIntervalMs?: number;
  /** Monotonic milliseconds, for the interval. */
  now?: () => number;
}

export interface PerpProjector {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Where its writes run. */
  readonly writerKind: ProjectionWriter['kind'];
  /** The last event seq written. */
  readonly projectedSeq: number;
  /** Wall-clock ms of the last successful write (for readiness); undefined before the first. */
  readonly writtenAt: number | undefined;
  /** Resolves once every event up to `seq` is written (for a caller that must read its own write). */
  caughtUp(seq: number): Promise<void>;
}

export function createPerpProjector(opts: PerpProjectorOptions): PerpProjector {
  const maxBatch = opts.maxBatch ?? 5_000;
  const retryMs = opts.retryMs ?? 1_000;
  const minWriteIntervalMs = opts.minWriteIntervalMs ?? 100;
  const now = opts.now ?? (() => performance.now());
  let lastWriteAt = -Infinity;
  let projected = 0;
  let writtenAt: number | undefined;
  let buffer: EngineEvent[] = [];
  let unsubscribe: (() => void) | undefined;
  let running = false;
  let flushing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let writeTimer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const waiters = createPositionWaiters();
  // A balance reason this build does not know (a newer engine's journal): its movements are written
  // as OTHER, and said once per reason rather than once per event.
  const unknownReasons = new Set<string>();
  const onUnknownReason = (reason: string) => {
    if (unknownReasons.has(reason)) return;
    unknownReasons.add(reason);
    opts.logger?.warn({ reason }, 'perp projector: unknown balance reason; its movements are listed as OTHER');
  };
  const writer = opts.writer ? opts.writer(onUnknownReason) : threadProjectionWriter(opts.db, opts.feeAccount, onUnknownReason);

  const subscribe = () => {
    buffer = [];
    unsubscribe = opts.gateway.subscribe(
      projected + 1,
      (e) => {
        buffer.push(e);
        schedule();
      },
      (err) => {
        opts.logger?.error({ err }, 'perp projector: catch-up failed; subscribing again');
        unsubscribe = undefined;
        if (running) timer = setTimeout(() => running && subscribe(), retryMs);
      },
    );
  };

  // One write of what is buffered (up to maxBatch); a failed one keeps its events for the next.
  const writeOnce = async (): Promise<void> => {
    const events = buffer.slice(0, maxBatch);
    if (events.length === 0) return;
    lastWriteAt = now();
    try {
      projected = await writer.write(events);
      writtenAt = Date.now();
      buffer = buffer.slice(events.length);
      waiters.reached(projected);
    } catch (err) {
      opts.logger?.error({ err, events: events.length }, 'perp projector: write failed; retrying');
      if (running) await new Promise((r) => setTimeout(r, retryMs));
      else throw err;
    }
  };

  // A write waiting out the interval starts now: somebody in this process waits for it.
  const hurry = () => {
    if (writeTimer === undefined) return;
    clearTimeout(writeTimer);
    writeTimer = undefined;
    wake?.();
  };

  const schedule = () => {
    if (flushing || !running) return;
    const wait = waiters.size > 0 ? 0 : lastWriteAt + minWriteIntervalMs - now();
    flushing = new Promise<void>((resolve) => {
      wake = resolve;
      if (wait > 0) {
        writeTimer = setTimeout(() => {
          writeTimer = undefined;
          resolve();
        }, wait);
      } else setImmediate(resolve);
    })
      .then(() => (running ? writeOnce() : undefined))
      .finally(() => {
        flushing = undefined;
        if (buffer.length > 0) schedule();
      });
  };

  return {
    get writerKind() {
      return writer.kind;
    },
    get projectedSeq() {
      return projected;
    },
    get writtenAt() {
      return writtenAt;
    },
    async start() {
      projected = Number((await getMeta(opts.db, PROJECTION_CURSOR_KEY)) ?? '0');
      running = true;
      subscribe();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      unsubscribe?.();
      unsubscribe = undefined;
      // What arrived is written before the stop answers (one more attempt each, no retry loop).
      clearTimeout(writeTimer);
      wake?.();
      while (flushing) await flushing.catch(() => undefined);
      try {
        while (buffer.length > 0) await writeOnce();
      } catch {
        // Logged by writeOnce; the events are written again from the cursor at the next start.
      } finally {
        waiters.releaseAll();
        await writer.close().catch((err: unknown) => opts.logger?.warn({ err }, 'perp projector: its writer did not close cleanly'));
      }
    },
    caughtUp(seq) {
      if (seq <= projected) return Promise.resolve();
      const reached = waiters.wait(seq);
      hurry();
      return reached;
    },
  };
}
