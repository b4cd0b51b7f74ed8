/**
 * The streams across processes: one publisher and two hubs, each on its own Redis connections as
 * separate API instances would be, under one prefix. Runs when REDIS_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStreamBroker } from '../../src/streams/redis-stream-broker.ts';
import { epochBase } from '../../src/streams/stream-broker.ts';
import { channelCatalog } from '../../src/streams/stream-channels.ts';
import { createStreamHub, type StreamSink } from '../../src/streams/stream-hub.ts';
import { bookModel, keyedModel } from '../../src/streams/stream-model.ts';
import { createStreamPublisher } from '../../src/streams/stream-publisher.ts';

const url = process.env.REDIS_URL;

const catalog = channelCatalog([
  { name: 'depth', scope: 'public', model: bookModel() },
  { name: 'orders', scope: 'private', model: keyedModel((o: { id: string }) => o.id, (o: { status: string }) => o.status !== 'open') },
]);

interface Frame {
  type: string;
  seq?: number;
  data?: any;
  resumed?: boolean;
}

function sink() {
  const frames: Frame[] = [];
  let wake: (() => void) | undefined;
  const s: StreamSink & { frames: Frame[]; until(n: number): Promise<void> } = {
    frames,
    send(f) {
      frames.push(JSON.parse(f.toString()));
      wake?.();
    },
    dropped() {},
    async until(n) {
      while (frames.length < n) await new Promise<void>((r) => (wake = r));
    },
  };
  return s;
}

describe.skipIf(!url)('streams over Redis: two API instances, one publisher', () => {
  const connections: Redis[] = [];
  const connect = async () => {
    const r = new Redis(url!, { lazyConnect: true, maxRetriesPerRequest: 2 });
    await r.connect();
    connections.push(r);
    return r;
  };
  const prefix = `test-streams-${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const r = connections[0];
    if (r) {
      const keys = await r.keys(`${prefix}:*`);
      if (keys.length > 0) await r.del(...keys);
    }
    for (const c of connections) c.disconnect();
  });

  it('both instances serve the same stream with the same seqs and no gap, and resume from Redis', async () => {
    const lost: unknown[] = [];
    const publisherBroker = createRedisStreamBroker({ redis: await connect(), prefix, onLost: (e) => lost.push(e) });
    const publisher = createStreamPublisher({ broker: publisherBroker, catalog });
    await publisher.start([{ channel: 'depth', subject: 'BTC', data: { bids: [['100', '1']], asks: [], ts: 1 } }]);
    const brokerA = createRedisStreamBroker({ redis: await connect(), prefix });
    const brokerB = createRedisStreamBroker({ redis: await connect(), prefix });
    const hubA = createStreamHub({ broker: brokerA, catalog, goneCode: 10003 });
    const hubB = createStreamHub({ broker: brokerB, catalog, goneCode: 10003 });
    await hubA.start();
    await hubB.start();
    const base = epochBase(publisher.epoch);

    const a = sink();
    await hubA.subscribe({ id: 'a', channel: 'depth', subject: 'BTC', symbol: 'BTC' }, a);
    // Updates keep coming while B reads its snapshot from Redis.
    const b = sink();
    const bSubscribed = hubB.subscribe({ id: 'b', channel: 'depth', subject: 'BTC', symbol: 'BTC' }, b);
    for (let i = 1; i <= 20; i++) publisher.publish([{ channel: 'depth', subject: 'BTC', data: { bids: [[String(100 + i), String(i)]], asks: [], ts: i } }]);
    await bSubscribed;
    await a.until(21);
    expect(a.frames[0]).toMatchObject({ type: 'subscribed', seq: base, data: { bids: [['100', '1']] } });
    expect(a.frames.slice(1).map((f) => f.seq)).toEqual(Array.from({ length: 20 }, (_, i) => base + 1 + i));
    // B's snapshot is at some seq S and its updates follow S without a gap up to the last one.
    const bSeq = b.frames[0].seq!;
    await b.until(1 + (base + 20 - bSeq));
    expect(b.frames.slice(1).map((f) => f.seq)).toEqual(Array.from({ length: base + 20 - bSeq }, (_, i) => bSeq + 1 + i));
    // Both folded to the same book.
    const fold = (frames: Frame[]) => {
      const levels = new Map<string, string>((frames[0].data.bids as Array<[string, string]>).map(([p, s]) => [p, s]));
      for (const f of frames.slice(1)) for (const [p, s] of f.data.bids as Array<[string, string]>) levels.set(p, s);
      return [...levels.entries()].sort();
    };
    expect(fold(b.frames)).toEqual(fold(a.frames));
    expect(fold(a.frames)).toHaveLength(21);

    // A private stream: published, then resumed on the other instance from Redis's retained log.
    publisher.publish([{ channel: 'orders', subject: '0xabc', data: { id: '1', status: 'open' } }]);
    const first = sink();
    await hubA.subscribe({ id: 'o', channel: 'orders', subject: '0xabc' }, first);
    const since = first.frames[0].seq!;
    expect(since).toBe(base + 1);
    publisher.publish([{ channel: 'orders', subject: '0xabc', data: { id: '1', status: 'filled' } }, { channel: 'orders', subject: '0xabc', data: { id: '2', status: 'open' } }]);
    await first.until(3);
    const resumed = sink();
    await hubB.subscribe({ id: 'r', channel: 'orders', subject: '0xabc', since }, resumed);
    await resumed.until(3);
    expect(resumed.frames).toEqual([
      { type: 'subscribed', id: 'r', channel: 'orders', seq: since, resumed: true },
      { type: 'update', channel: 'orders', seq: since + 1, data: { id: '1', status: 'filled' } },
      { type: 'update', channel: 'orders', seq: since + 2, data: { id: '2', status: 'open' } },
    ]);
    expect(first.frames.slice(1)).toEqual(resumed.frames.slice(1));
    expect(lost).toEqual([]);
    await hubA.stop();
    await hubB.stop();
    await brokerA.close();
    await brokerB.close();
  });
});
