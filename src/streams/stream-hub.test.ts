import { describe, expect, it } from 'vitest';
import { createMemoryStreamBroker, epochBase, type BrokerMessage, type StreamBroker } from './stream-broker.ts';
import { channelCatalog } from './stream-channels.ts';
import { createStreamHub, StreamRefusal, type StreamSink } from './stream-hub.ts';
import { bookModel, keyedModel, latestModel, recentModel } from './stream-model.ts';
import { createStreamPublisher } from './stream-publisher.ts';

const catalog = channelCatalog([
  { name: 'depth', scope: 'public', model: bookModel() },
  { name: 'trades', scope: 'public', model: recentModel(3) },
  { name: 'ticker', scope: 'public', model: latestModel() },
  { name: 'orders', scope: 'private', model: keyedModel((o: { id: string }) => o.id, (o: { status: string }) => o.status !== 'open') },
]);

interface Frame {
  type: string;
  id?: string;
  seq?: number;
  data?: any;
  code?: number;
  resumed?: boolean;
}

function sink(): StreamSink & { frames: Frame[]; droppedKeys: string[] } {
  const frames: Frame[] = [];
  const droppedKeys: string[] = [];
  return {
    frames,
    droppedKeys,
    send: (f) => frames.push(JSON.parse(f.toString())),
    dropped: (k) => droppedKeys.push(k),
  };
}

/** A memory broker whose snapshot reads are held until released: the window a real broker has. */
function slowSnapshots(inner: StreamBroker) {
  const held: Array<() => void> = [];
  const broker: StreamBroker = {
    ...inner,
    snapshot: (key) => new Promise((resolve) => held.push(() => void inner.snapshot(key).then(resolve))),
  };
  return { broker, release: () => held.splice(0).forEach((f) => f()) };
}

async function setup(opts: { slow?: boolean; now?: () => number } = {}) {
  const memory = createMemoryStreamBroker({ retained: 5 });
  const slow = slowSnapshots(memory);
  const broker = opts.slow ? slow.broker : memory;
  const publisher = createStreamPublisher({ broker: memory, catalog, now: opts.now });
  const hub = createStreamHub({ broker, catalog, goneCode: 10003 });
  await hub.start();
  return { publisher, hub, release: slow.release, memory };
}

const lvl = (bids: Array<[string, string]>, asks: Array<[string, string]> = []) => ({ bids, asks, ts: 1 });

describe('stream hub', () => {
  it('gives a snapshot with the seq it contains, then every later update exactly once', async () => {
    const { publisher, hub } = await setup({ now: () => 7 });
    await publisher.start([{ channel: 'depth', subject: 'BTC', data: lvl([['100', '1']]) }]);
    publisher.publish([{ channel: 'depth', subject: 'BTC', data: lvl([['101', '2']]) }]);
    const s = sink();
    await hub.subscribe({ id: 'a', channel: 'depth', subject: 'BTC', symbol: 'BTC' }, s);
    publisher.publish([{ channel: 'depth', subject: 'BTC', data: lvl([['100', '0']], [['105', '3']]) }]);
    const base = epochBase(7);
    expect(s.frames).toEqual([
      { type: 'subscribed', id: 'a', channel: 'depth', symbol: 'BTC', seq: base + 1, data: { bids: [['101', '2'], ['100', '1']], asks: [], ts: 1 } },
      { type: 'update', channel: 'depth', symbol: 'BTC', seq: base + 2, data: { bids: [['100', '0']], asks: [['105', '3']], ts: 1 } },
    ]);
    // Both frames name their stream first, in contract.md's order, before the (long) data.
    expect(s.frames.map((f) => Object.keys(f))).toEqual([
      ['type', 'id', 'channel', 'symbol', 'seq', 'data'],
      ['type', 'channel', 'symbol', 'seq', 'data'],
    ]);
  });

  it('loses nothing and repeats nothing published while the first snapshot is being read', async () => {
    const { publisher, hub, release } = await setup({ slow: true });
    await publisher.start([]);
    publisher.publish([{ channel: 'trades', subject: 'BTC', data: 't1' }]);
    const s = sink();
    const subscribed = hub.subscribe({ id: 'a', channel: 'trades', subject: 'BTC', symbol: 'BTC' }, s);
    // Published after the stream was registered here, before its snapshot is read.
    publisher.publish([{ channel: 'trades', subject: 'BTC', data: 't2' }]);
    release();
    await subscribed;
    publisher.publish([{ channel: 'trades', subject: 'BTC', data: 't3' }]);
    const base = epochBase(publisher.epoch);
    expect(s.frames.map((f) => [f.type, f.seq, f.data])).toEqual([
      ['subscribed', base + 2, ['t2', 't1']],
      ['update', base + 3, 't3'],
    ]);
  });

  it('a second subscriber gets the local snapshot at the same seq the first one has reached', async () => {
    const { publisher, hub } = await setup();
    await publisher.start([{ channel: 'ticker', subject: 'ETH', data: { p: '1' } }]);
    const a = sink();
    const b = sink();
    await hub.subscribe({ id: 'a', channel: 'ticker', subject: 'ETH', symbol: 'ETH' }, a);
    publisher.publish([{ channel: 'ticker', subject: 'ETH', data: { p: '2' } }]);
    await hub.subscribe({ id: 'b', channel: 'ticker', subject: 'ETH', symbol: 'ETH' }, b);
    publisher.publish([{ channel: 'ticker', subject: 'ETH', data: { p: '3' } }]);
    const base = epochBase(publisher.epoch);
    expect(b.frames.map((f) => [f.type, f.seq, f.data])).toEqual([
      ['subscribed', base + 1, { p: '2' }],
      ['update', base + 2, { p: '3' }],
    ]);
    expect(a.frames.at(-1)).toEqual(b.frames.at(-1));
    expect(hub.stats()).toEqual({ streams: 1, subscribers: 2 });
    hub.unsubscribe('ticker', 'ETH', a);
    hub.unsubscribe('ticker', 'ETH', b);
    expect(hub.stats()).toEqual({ streams: 0, subscribers: 0 });
  });

  it('resumes a private stream from since with exactly the missed updates, then live', async () => {
    const { publisher, hub } = await setup();
    await publisher.start([]);
    const order = (id: string, status = 'open') => ({ channel: 'orders', subject: '0xabc', data: { id, status } });
    publisher.publish([order('1'), order('2')]);
    const first = sink();
    await hub.subscribe({ id: 's', channel: 'orders', subject: '0xabc' }, first);
    const since = first.frames[0].seq!;
    hub.unsubscribe('orders', '0xabc', first);
    publisher.publish([order('1', 'filled'), order('3')]);
    const again = sink();
    await hub.subscribe({ id: 'r', channel: 'orders', subject: '0xabc', since }, again);
    publisher.publish([order('2', 'canceled')]);
    expect(again.frames.map((f) => [f.type, f.seq, f.resumed ?? null, f.data ?? null])).toEqual([
      ['subscribed', since, true, null],
      ['update', since + 1, null, { id: '1', status: 'filled' }],
      ['update', since + 2, null, { id: '3', status: 'open' }],
      ['update', since + 3, null, { id: '2', status: 'canceled' }],
    ]);
  });

  it('refuses a since that is no longer retained, or ahead of the stream', async () => {
    const { publisher, hub } = await setup();
    await publisher.start([]);
    const base = epochBase(publisher.epoch);
    for (let i = 1; i <= 12; i++) publisher.publish([{ channel: 'orders', subject: '0xabc', data: { id: String(i), status: 'open' } }]);
    // Retention is 5 in this setup, trimmed past 10: updates base+7 … base+12 are kept.
    await expect(hub.subscribe({ channel: 'orders', subject: '0xabc', since: base + 5 }, sink())).rejects.toMatchObject({ reason: 'gone' });
    await expect(hub.subscribe({ channel: 'orders', subject: '0xabc', since: base + 13 }, sink())).rejects.toBeInstanceOf(StreamRefusal);
    const ok = sink();
    await hub.subscribe({ channel: 'orders', subject: '0xabc', since: base + 6 }, ok);
    expect(ok.frames.map((f) => f.seq)).toEqual([base + 6, base + 7, base + 8, base + 9, base + 10, base + 11, base + 12]);
    expect(ok.frames.at(-1)?.data).toEqual({ id: '12', status: 'open' });
  });

  it('drops every stream of an old epoch and tells its subscribers to subscribe again', async () => {
    let t = 1_000;
    const { publisher, hub } = await setup({ now: () => t });
    await publisher.start([{ channel: 'ticker', subject: 'BTC', data: { p: '1' } }]);
    const s = sink();
    await hub.subscribe({ id: 'a', channel: 'ticker', subject: 'BTC', symbol: 'BTC' }, s);
    t = 2_000;
    await publisher.start([{ channel: 'ticker', subject: 'BTC', data: { p: '9' } }]);
    expect(s.frames.at(-1)).toEqual({ type: 'error', code: 10003, msg: 'stream restarted: subscribe again for a fresh snapshot', channel: 'ticker', symbol: 'BTC' });
    expect(s.droppedKeys).toEqual(['ticker BTC']);
    const again = sink();
    await hub.subscribe({ id: 'b', channel: 'ticker', subject: 'BTC', symbol: 'BTC' }, again);
    // The new epoch's seqs are above every seq of the old one.
    expect(again.frames[0]).toMatchObject({ type: 'subscribed', seq: epochBase(2_000), data: { p: '9' } });
    expect(epochBase(2_000)).toBeGreaterThan(s.frames[0].seq!);
  });

  it("a subscribe whose first snapshot is still being read when a new epoch starts gets the new epoch's snapshot, not a refusal", async () => {
    let t = 1_000;
    const { publisher, hub, release } = await setup({ slow: true, now: () => t });
    await publisher.start([{ channel: 'depth', subject: 'BTC', data: lvl([['100', '1']]) }]);
    const s = sink();
    const subscribing = hub.subscribe({ id: 's', channel: 'depth', subject: 'BTC', symbol: 'BTC' }, s);
    // The publisher restarts while the hub waits for the snapshot (seen over Redis: a hub that had
    // just started took its first message of the epoch for a restart and refused its own subscribe).
    t = 2_000;
    await publisher.start([{ channel: 'depth', subject: 'BTC', data: lvl([['200', '2']]) }]);
    release();
    await subscribing;
    expect(s.frames).toEqual([expect.objectContaining({ type: 'subscribed', id: 's', seq: epochBase(2_000), data: lvl([['200', '2']]) })]);
    expect(s.droppedKeys).toEqual([]);
    publisher.publish([{ channel: 'depth', subject: 'BTC', data: lvl([['201', '1']]) }]);
    expect(s.frames.at(-1)).toMatchObject({ type: 'update', seq: epochBase(2_000) + 1 });
  });

  it('ends a stream whose batch went missing, telling its subscribers, and serves it fresh afterwards', async () => {
    const memory = createMemoryStreamBroker();
    let drop = false;
    const lossy: StreamBroker = {
      ...memory,
      tail: (l) => memory.tail((m: BrokerMessage) => {
        if (!(drop && m.type === 'updates')) l(m);
      }),
    };
    const publisher = createStreamPublisher({ broker: memory, catalog });
    const hub = createStreamHub({ broker: lossy, catalog, goneCode: 10003 });
    await hub.start();
    await publisher.start([]);
    const s = sink();
    await hub.subscribe({ id: 'a', channel: 'ticker', subject: 'X', symbol: 'X' }, s);
    drop = true;
    publisher.publish([{ channel: 'ticker', subject: 'X', data: 'lost' }]);
    drop = false;
    publisher.publish([{ channel: 'ticker', subject: 'X', data: 'after' }]);
    const base = epochBase(publisher.epoch);
    expect(s.frames.map((f) => [f.type, f.seq ?? f.code])).toEqual([['subscribed', base], ['error', 10003]]);
    expect(s.droppedKeys).toEqual(['ticker X']);
    const again = sink();
    await hub.subscribe({ id: 'b', channel: 'ticker', subject: 'X', symbol: 'X' }, again);
    expect(again.frames[0]).toMatchObject({ type: 'subscribed', seq: base + 2, data: 'after' });
  });
});
