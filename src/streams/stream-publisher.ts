/**
 * The one writer of a venue's streams: it numbers each stream's updates (seq + 1 each), folds them
 * into the stream's model, and hands each batch to the broker with the touched snapshots. Everything
 * a venue streams goes through `publish`, which is synchronous, so a snapshot is always exactly the
 * fold of the updates up to its seq.
 */
import type { Logger } from '../lib/logger.ts';
import { epochBase, type StreamBroker, type StreamState, type StreamUpdate } from './stream-broker.ts';
import type { ChannelCatalog } from './stream-channels.ts';
import { streamKey } from './stream-channels.ts';

export interface PublishedUpdate {
  channel: string;
  /** The symbol of a public channel, the account of a private one. */
  subject: string;
  data: unknown;
}

export interface StreamPublisher {
  /**
   * Starts a new epoch with these streams' states (what the venue holds now: books, open orders,
   * positions…); every other stream starts empty.
   */
  start(seed: readonly PublishedUpdate[]): Promise<void>;
  publish(updates: readonly PublishedUpdate[]): void;
  readonly epoch: number;
  /** The snapshot a stream has now (tests, and the venue's own diffs, e.g. the book's levels). */
  current(channel: string, subject: string): unknown;
}

export function createStreamPublisher(opts: { broker: StreamBroker; catalog: ChannelCatalog; logger?: Pick<Logger, 'warn'>; now?: () => number }): StreamPublisher {
  const { broker, catalog } = opts;
  const streams = new Map<string, StreamState>();
  const retainedChannels = new Set<string>();
  let epoch = 0;
  let lastEpoch = 0;

  const state = (channel: string, subject: string, key: string): StreamState | undefined => {
    let st = streams.get(key);
    if (st === undefined) {
      const spec = catalog.get(channel);
      if (spec === undefined) return undefined;
      if (spec.scope === 'private') retainedChannels.add(channel);
      st = { seq: epochBase(epoch), model: spec.model() };
      streams.set(key, st);
    }
    return st;
  };
  const retained = (key: string) => retainedChannels.has(key.slice(0, key.indexOf(' ')));

  return {
    get epoch() {
      return epoch;
    },
    async start(seed) {
      // Strictly above the last epoch even when two starts fall in the same millisecond.
      epoch = Math.max((opts.now ?? Date.now)(), lastEpoch + 1);
      lastEpoch = epoch;
      streams.clear();
      for (const u of seed) {
        const key = streamKey(u.channel, u.subject);
        const spec = catalog.get(u.channel);
        if (spec === undefined) throw new Error(`stream publisher: unknown channel ${u.channel}`);
        if (spec.scope === 'private') retainedChannels.add(u.channel);
        streams.set(key, { seq: epochBase(epoch), model: spec.model(u.data) });
      }
      await broker.reset(epoch, streams);
    },
    publish(updates) {
      if (epoch === 0 || updates.length === 0) return;
      const out: StreamUpdate[] = [];
      const touched = new Map<string, StreamState>();
      for (const u of updates) {
        const key = streamKey(u.channel, u.subject);
        const st = state(u.channel, u.subject, key);
        if (st === undefined) {
          opts.logger?.warn({ channel: u.channel }, 'stream publisher: update for an unknown channel dropped');
          continue;
        }
        st.model.apply(u.data);
        st.seq += 1;
        out.push({ key, seq: st.seq, data: u.data });
        touched.set(key, st);
      }
      if (out.length > 0) broker.append(epoch, out, touched, retained);
    },
    current(channel, subject) {
      return streams.get(streamKey(channel, subject))?.model.snapshot();
    },
  };
}
