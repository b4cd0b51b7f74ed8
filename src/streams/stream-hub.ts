/**
 * One API instance's side of a venue's streams: it tails the broker, keeps the model of every
 * stream that has a subscriber here, and writes the frames (contract.md §C).
 *
 * No gap between a snapshot and the first update: a stream's first subscriber registers the stream
 * here (so every later batch is buffered) before the snapshot is read; the snapshot is then
 * followed by the buffered updates above its seq. Every later subscriber gets the local model's
 * snapshot, taken in the same tick as its registration. An update that does not follow its
 * stream's seq (a batch the broker lost) ends the stream here with an error frame telling its
 * subscribers to subscribe again: a client never sees a hole it is not told about.
 *
 * A resume (`since`, private streams) sends the retained updates after `since` up to the stream's
 * seq at registration, then what arrived meanwhile, then live.
 */
import type { Logger } from '../lib/logger.ts';
import type { BrokerMessage, StreamBroker, StreamUpdate } from './stream-broker.ts';
import type { ChannelCatalog, ChannelSpec } from './stream-channels.ts';
import type { StreamModel } from './stream-model.ts';

export interface StreamSink {
  send(frame: Buffer | string): void;
  /** The stream was dropped by the server (a new epoch): the client was told with an error frame. */
  dropped(key: string): void;
}

/** Why a subscribe could not be served; the endpoint maps it to the venue's code. */
export class StreamRefusal extends Error {
  constructor(
    readonly reason: 'gone' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

interface Sub {
  /** Frames held while a resume sends what the client missed. */
  held: Array<Buffer | string> | null;
}

interface Entry {
  key: string;
  spec: ChannelSpec;
  channel: string;
  /** Public streams' symbol (the frames carry it). */
  symbol: string | undefined;
  ready: boolean;
  loading: Promise<void> | undefined;
  seq: number;
  model: StreamModel | undefined;
  buffer: StreamUpdate[];
  subs: Map<StreamSink, Sub>;
}

export interface StreamHubOptions {
  broker: StreamBroker;
  catalog: ChannelCatalog;
  /** The error code a client gets when its stream restarted (perp 10003, stock 410). */
  goneCode: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

export interface StreamHub {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends the `subscribed` frame (snapshot or resume) and registers the sink for the updates. */
  subscribe(req: { id?: string; channel: string; subject: string; symbol?: string; since?: number }, sink: StreamSink): Promise<void>;
  unsubscribe(channel: string, subject: string, sink: StreamSink): void;
  /** Streams with subscribers here, and subscribers in all (tests, metrics). */
  stats(): { streams: number; subscribers: number };
}

const MAX_LOADS = 5;

export function createStreamHub(opts: StreamHubOptions): StreamHub {
  const { broker, catalog } = opts;
  const entries = new Map<string, Entry>();
  let epoch = 0;
  let untail: (() => void) | undefined;

  // In contract.md's order (type, id, channel, symbol, seq, data), as the update frames are: a
  // reader of a truncated line still sees which stream it is.
  const frame = (e: Entry, body: { type: string; id?: string; seq: number; [k: string]: unknown }) => {
    const { type, id, seq, ...rest } = body;
    return JSON.stringify({ type, ...(id !== undefined ? { id } : {}), channel: e.channel, ...(e.symbol !== undefined ? { symbol: e.symbol } : {}), seq, ...rest });
  };

  function updateFrame(e: Entry, u: StreamUpdate): Buffer {
    const head = e.symbol === undefined ? `{"type":"update","channel":${JSON.stringify(e.channel)},` : `{"type":"update","channel":${JSON.stringify(e.channel)},"symbol":${JSON.stringify(e.symbol)},`;
    return Buffer.from(`${head}"seq":${u.seq},"data":${JSON.stringify(u.data ?? null)}}`);
  }

  function deliver(e: Entry, u: StreamUpdate): void {
    e.model!.apply(u.data);
    e.seq = u.seq;
    if (e.subs.size === 0) return;
    const f = updateFrame(e, u);
    for (const [sink, sub] of e.subs) {
      if (sub.held !== null) sub.held.push(f);
      else sink.send(f);
    }
  }

  /** The stream cannot go on here: its subscribers are told, and may subscribe again. */
  function drop(e: Entry): void {
    entries.delete(e.key);
    const msg = JSON.stringify({ type: 'error', code: opts.goneCode, msg: 'stream restarted: subscribe again for a fresh snapshot', channel: e.channel, ...(e.symbol !== undefined ? { symbol: e.symbol } : {}) });
    for (const sink of e.subs.keys()) {
      sink.send(msg);
      sink.dropped(e.key);
    }
  }

  /**
   * Every stream of an older epoch is gone. A stream still reading its first snapshot has given its
   * subscribers nothing yet: it reads the new epoch's instead (load() reads again when the one it
   * got is older), so a subscribe that meets a restart is answered, not refused. Its buffered updates
   * were the old epoch's.
   */
  function newEpoch(next: number, keep?: Entry): void {
    epoch = next;
    for (const e of [...entries.values()]) {
      if (e === keep) continue;
      if (!e.ready) e.buffer = [];
      else drop(e);
    }
  }

  function onMessage(msg: BrokerMessage): void {
    if (msg.epoch < epoch) return;
    if (msg.epoch > epoch) newEpoch(msg.epoch);
    if (msg.type !== 'updates') return;
    for (const u of msg.updates) {
      const e = entries.get(u.key);
      if (e === undefined) continue;
      if (!e.ready) {
        e.buffer.push(u);
        continue;
      }
      if (u.seq <= e.seq) continue;
      if (u.seq !== e.seq + 1) {
        // Only a broker fault does this (a batch it lost or trimmed before this hub read it): the
        // subscribers cannot be given the missing updates, so they are told to start again.
        opts.logger?.warn({ key: u.key, have: e.seq, got: u.seq }, 'stream hub: gap in a stream; its subscribers must subscribe again');
        drop(e);
        continue;
      }
      deliver(e, u);
    }
  }

  function load(e: Entry): Promise<void> {
    if (e.loading) return e.loading;
    e.loading = (async () => {
      try {
        for (let attempt = 0; attempt < MAX_LOADS; attempt++) {
          const snap = await broker.snapshot(e.key);
          if (entries.get(e.key) !== e) return;
          if (snap === undefined) throw new StreamRefusal('unavailable', 'streams are starting: try again shortly');
          if (snap.epoch < epoch) continue;
          if (snap.epoch > epoch) newEpoch(snap.epoch, e);
          e.model = e.spec.model(snap.data === undefined ? e.spec.empty?.(e.key.slice(e.key.indexOf(' ') + 1)) : snap.data);
          e.seq = snap.seq;
          const buffered = e.buffer;
          e.buffer = [];
          let ok = true;
          for (const u of buffered) {
            if (u.seq <= e.seq) continue;
            if (u.seq !== e.seq + 1) {
              ok = false;
              e.buffer = buffered.filter((b) => b.seq > e.seq);
              break;
            }
            e.model.apply(u.data);
            e.seq = u.seq;
          }
          if (!ok) continue;
          e.ready = true;
          return;
        }
        throw new StreamRefusal('unavailable', 'stream could not be loaded: try again');
      } finally {
        e.loading = undefined;
      }
    })();
    return e.loading;
  }

  function entryFor(channel: string, subject: string, symbol: string | undefined): Entry {
    const key = `${channel} ${subject}`;
    let e = entries.get(key);
    if (e === undefined) {
      const spec = catalog.get(channel);
      if (spec === undefined) throw new Error(`stream hub: unknown channel ${channel}`);
      e = { key, spec, channel, symbol, ready: false, loading: undefined, seq: 0, model: undefined, buffer: [], subs: new Map() };
      entries.set(key, e);
    }
    return e;
  }

  function release(e: Entry): void {
    if (e.subs.size === 0 && entries.get(e.key) === e && !e.loading) entries.delete(e.key);
  }

  return {
    async start() {
      untail = await broker.tail(onMessage);
    },
    async stop() {
      untail?.();
      entries.clear();
    },
    async subscribe(req, sink) {
      const e = entryFor(req.channel, req.subject, req.symbol);
      // Registered before the load, so the stream stays while its snapshot is read.
      const sub: Sub = { held: [] };
      e.subs.set(sink, sub);
      try {
        while (!e.ready) {
          await load(e);
          if (entries.get(e.key) !== e) throw new StreamRefusal('gone', 'stream restarted: subscribe again');
        }
        const base = { type: 'subscribed', id: req.id };
        if (req.since === undefined) {
          // The snapshot holds every update delivered so far: nothing held before it is sent.
          sub.held = null;
          sink.send(frame(e, { ...base, seq: e.seq, data: e.model!.snapshot() ?? null }));
          return;
        } else {
          const upTo = e.seq;
          sub.held = [];
          if (req.since > upTo) throw new StreamRefusal('gone', 'since is not a seq of this stream: subscribe without since for a fresh snapshot');
          const missed = req.since === upTo ? [] : await broker.range(e.key, req.since, upTo);
          if (missed === undefined) throw new StreamRefusal('gone', 'since is older than the retained updates: subscribe without since for a fresh snapshot');
          sink.send(frame(e, { ...base, seq: req.since, resumed: true }));
          for (const u of missed) sink.send(updateFrame(e, u));
        }
        // Updates that came while the snapshot or the missed ones were being sent.
        const held = sub.held ?? [];
        sub.held = null;
        for (const f of held) sink.send(f);
      } catch (err) {
        if (e.subs.get(sink) === sub) e.subs.delete(sink);
        release(e);
        throw err;
      }
    },
    unsubscribe(channel, subject, sink) {
      const e = entries.get(`${channel} ${subject}`);
      if (e === undefined) return;
      e.subs.delete(sink);
      release(e);
    },
    stats() {
      let subscribers = 0;
      for (const e of entries.values()) subscribers += e.subs.size;
      return { streams: entries.size, subscribers };
    },
  };
}
