/**
 * Between the one publisher of a venue's streams and the hubs of its API instances
 * (docs/streams.md). The publisher folds every update into its models, then appends the batch with
 * the touched streams' snapshots; a hub tails every batch in order, reads a stream's snapshot when
 * its first subscriber comes, and reads the retained updates of a private stream for a resume.
 *
 * Epochs: a publisher that starts (a process start, or a broker that lost its writes) cannot know
 * what it had published before, so it starts a new epoch: its seqs begin at `epoch × 1000`, above
 * any seq of an earlier epoch, and the hubs drop every stream of the old one. A client's `since`
 * from an old epoch is then simply not retained, never mistaken for a seq of the new one.
 *
 * Two implementations: in process (the embedded stack, one process) below, and Redis Streams
 * (redis-stream-broker.ts) when several API instances serve the same streams.
 */
import type { StreamModel } from './stream-model.ts';

export interface StreamUpdate {
  /** `<channel> <subject>`: the subject is a symbol or an account. */
  key: string;
  seq: number;
  data: unknown;
}

export type BrokerMessage = { type: 'updates'; epoch: number; updates: StreamUpdate[] } | { type: 'epoch'; epoch: number };

export interface StreamState {
  seq: number;
  model: StreamModel;
}

export interface StreamSnapshot {
  epoch: number;
  seq: number;
  /** The snapshot as the model gives it; undefined when nothing was ever published to the stream. */
  data: unknown;
}

export interface StreamBroker {
  /**
   * Publisher: a new epoch begins with these streams (every other stream of the venue is empty at
   * seq `epoch × 1000`).
   */
  reset(epoch: number, streams: ReadonlyMap<string, StreamState>): Promise<void>;
  /**
   * Publisher: one batch, in seq order per stream; `touched` are the states after it (their
   * snapshots are taken now, before the publisher folds anything else). `retained` says which keys
   * keep their updates for resumes. Appends are applied in call order.
   */
  append(epoch: number, updates: readonly StreamUpdate[], touched: ReadonlyMap<string, StreamState>, retained: (key: string) => boolean): void;
  /** Hub: every message from now on, in order. */
  tail(listener: (msg: BrokerMessage) => void): Promise<() => void>;
  /** Hub: the stream's snapshot; the current epoch's base seq and no data when it has none. */
  snapshot(key: string): Promise<StreamSnapshot | undefined>;
  /**
   * Hub: the retained updates with afterSeq < seq ≤ upToSeq of the current epoch, or undefined when
   * some of them are no longer retained.
   */
  range(key: string, afterSeq: number, upToSeq: number): Promise<StreamUpdate[] | undefined>;
  close(): Promise<void>;
}

export const epochBase = (epoch: number): number => epoch * 1_000;

/** Updates kept per private stream for resumes (contract.md §C: at least 10,000 or 24 hours). */
export const RETAINED_UPDATES = 10_000;

/**
 * The broker of a single process: the publisher's models are read directly (`reset` is given the
 * publisher's own map, which it keeps adding streams to), batches are handed to
 * the hubs synchronously, and the retained updates live in memory.
 */
export function createMemoryStreamBroker(opts: { retained?: number } = {}): StreamBroker {
  const max = opts.retained ?? RETAINED_UPDATES;
  let epoch = 0;
  let streams: ReadonlyMap<string, StreamState> = new Map();
  const logs = new Map<string, StreamUpdate[]>();
  const listeners = new Set<(msg: BrokerMessage) => void>();
  const emit = (msg: BrokerMessage) => {
    for (const l of listeners) l(msg);
  };
  return {
    async reset(e, s) {
      epoch = e;
      streams = s;
      logs.clear();
      emit({ type: 'epoch', epoch });
    },
    append(e, updates, touched, retained) {
      if (e !== epoch) return;
      for (const u of updates) {
        if (!retained(u.key)) continue;
        let log = logs.get(u.key);
        if (log === undefined) logs.set(u.key, (log = []));
        log.push(u);
        // Trimmed in steps, so the trim costs O(1) per update on average; never below `max`.
        if (log.length > max * 2) log.splice(0, log.length - max);
      }
      emit({ type: 'updates', epoch, updates: updates as StreamUpdate[] });
    },
    async tail(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async snapshot(key) {
      if (epoch === 0) return undefined;
      const st = streams.get(key);
      if (st === undefined) return { epoch, seq: epochBase(epoch), data: undefined };
      return { epoch, seq: st.seq, data: st.model.snapshot() };
    },
    async range(key, afterSeq, upToSeq) {
      const log = logs.get(key) ?? [];
      const out = log.filter((u) => u.seq > afterSeq && u.seq <= upToSeq);
      const contiguous = out.length === upToSeq - afterSeq && (out.length === 0 || out[0].seq === afterSeq + 1);
      return contiguous ? out : undefined;
    },
    async close() {
      listeners.clear();
    },
  };
}
