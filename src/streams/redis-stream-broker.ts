/**
 * The stream broker over Redis (stream-broker.ts), for API instances in several processes
 * (docs/streams.md "Scale-out"). Under a prefix:
 *
 * - `<prefix>:fanout`: a Redis stream every hub tails with XREAD; one entry per published batch
 *   (field `m`: the JSON of a BrokerMessage), trimmed to about 100,000 entries.
 * - `<prefix>:snap`: a hash from stream key to the JSON `{seq, data}` of its snapshot, written in
 *   the same MULTI as the batch that made it, so a snapshot read after a hub has seen fan-out
 *   position P is never older than P (the hub's no-gap argument rests on this).
 * - `<prefix>:epoch`: the current epoch.
 * - `<prefix>:log:<key>`: the retained updates of a private stream, entry ids `0-<seq>` so that a
 *   resume is one XRANGE, trimmed to about RETAINED_UPDATES (never fewer) and dropped after 7 idle days.
 *
 * Appends are pipelined on one connection, so Redis applies them in call order. An append that
 * fails (Redis away) is reported through `onLost`: the publisher must then start a new epoch, since
 * hubs may have seen part of what it published.
 */
import type { Redis } from 'ioredis';
import { RETAINED_UPDATES, epochBase, type BrokerMessage, type StreamBroker, type StreamSnapshot, type StreamUpdate } from './stream-broker.ts';
import { duplicateRedis } from '../storage/redis-client.ts';

const FANOUT_MAXLEN = 100_000;
const LOG_IDLE_SECONDS = 7 * 86_400;

export interface RedisStreamBrokerOptions {
  /** A connection for writes and reads (not blocked). */
  redis: Redis;
  prefix: string;
  /** How long one XREAD of the tail blocks, ms (also how fast `close` returns). Default 1 000. */
  blockMs?: number;
  retained?: number;
  /** An append Redis did not take: the publisher starts a new epoch. */
  onLost?: (err: unknown) => void;
  onError?: (err: unknown) => void;
}

type XReadReply = Array<[string, Array<[string, string[]]>]> | null;

const field = (fields: string[]): string | undefined => {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'm') return fields[i + 1];
  return undefined;
};

export function createRedisStreamBroker(opts: RedisStreamBrokerOptions): StreamBroker {
  const { redis, prefix } = opts;
  const fanout = `${prefix}:fanout`;
  const snap = `${prefix}:snap`;
  const epochKey = `${prefix}:epoch`;
  const log = (key: string) => `${prefix}:log:${key}`;
  const retainedMax = opts.retained ?? RETAINED_UPDATES;
  const readers = new Set<Redis>();
  let closed = false;

  return {
    async reset(epoch, streams) {
      const m = redis.multi();
      m.del(snap);
      const entries: string[] = [];
      for (const [key, st] of streams) entries.push(key, JSON.stringify({ seq: st.seq, data: st.model.snapshot() }));
      for (let i = 0; i < entries.length; i += 2_000) m.hset(snap, ...entries.slice(i, i + 2_000));
      m.set(epochKey, String(epoch));
      const msg: BrokerMessage = { type: 'epoch', epoch };
      m.xadd(fanout, 'MAXLEN', '~', String(FANOUT_MAXLEN), '*', 'm', JSON.stringify(msg));
      await m.exec();
    },
    append(epoch, updates, touched, retained) {
      const m = redis.multi();
      const snaps: string[] = [];
      for (const [key, st] of touched) snaps.push(key, JSON.stringify({ seq: st.seq, data: st.model.snapshot() }));
      if (snaps.length > 0) m.hset(snap, ...snaps);
      const logged = new Set<string>();
      for (const u of updates) {
        if (!retained(u.key)) continue;
        m.xadd(log(u.key), 'MAXLEN', '~', String(retainedMax), `0-${u.seq}`, 'm', JSON.stringify(u.data ?? null));
        logged.add(u.key);
      }
      for (const key of logged) m.expire(log(key), LOG_IDLE_SECONDS);
      const msg: BrokerMessage = { type: 'updates', epoch, updates: updates as StreamUpdate[] };
      m.xadd(fanout, 'MAXLEN', '~', String(FANOUT_MAXLEN), '*', 'm', JSON.stringify(msg));
      m.exec().then(
        (res) => {
          const failed = res?.find(([err]) => err !== null);
          if (res === null || failed) opts.onLost?.(failed?.[0] ?? new Error('redis stream broker: MULTI aborted'));
        },
        (err) => opts.onLost?.(err),
      );
    },
    async tail(listener) {
      const reader = duplicateRedis(redis);
      readers.add(reader);
      const last = (await redis.xrevrange(fanout, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
      let id = last[0]?.[0] ?? '0-0';
      let running = true;
      void (async () => {
        while (running && !closed) {
          try {
            const res = (await reader.xread('COUNT', 1_000, 'BLOCK', opts.blockMs ?? 1_000, 'STREAMS', fanout, id)) as XReadReply;
            if (!res) continue;
            for (const [, entries] of res) {
              for (const [entryId, fields] of entries) {
                id = entryId;
                const text = field(fields);
                if (text === undefined) continue;
                listener(JSON.parse(text) as BrokerMessage);
              }
            }
          } catch (err) {
            if (!running || closed) break;
            opts.onError?.(err);
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      })();
      return () => {
        running = false;
        readers.delete(reader);
        reader.disconnect();
      };
    },
    async snapshot(key): Promise<StreamSnapshot | undefined> {
      const res = await redis.multi().get(epochKey).hget(snap, key).exec();
      const epochText = res?.[0]?.[1] as string | null;
      if (!epochText) return undefined;
      const epoch = Number(epochText);
      const text = res?.[1]?.[1] as string | null;
      if (!text) return { epoch, seq: epochBase(epoch), data: undefined };
      const { seq, data } = JSON.parse(text) as { seq: number; data: unknown };
      return { epoch, seq, data };
    },
    async range(key, afterSeq, upToSeq) {
      if (upToSeq <= afterSeq) return [];
      const entries = (await redis.xrange(log(key), `0-${afterSeq + 1}`, `0-${upToSeq}`)) as Array<[string, string[]]>;
      const out: StreamUpdate[] = entries.map(([id, fields]) => ({ key, seq: Number(id.slice(2)), data: JSON.parse(field(fields) ?? 'null') }));
      const contiguous = out.length === upToSeq - afterSeq && (out.length === 0 || out[0].seq === afterSeq + 1);
      return contiguous ? out : undefined;
    },
    async close() {
      closed = true;
      for (const r of readers) r.disconnect();
      readers.clear();
    },
  };
}
