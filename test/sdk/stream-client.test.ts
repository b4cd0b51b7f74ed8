/**
 * The SDK's stream client (packages/sdk/src/stream-client.ts) against a scripted `ws` server on a
 * real socket: snapshot then updates, a seq gap, a dropped connection (re-auth, resume with `since`,
 * replay delivered once), since-not-retained, a restarted stream, and close().
 */
import { createHmac } from 'node:crypto';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import {
  PerpStreamClient,
  StockStreamClient,
  StreamClosedError,
  StreamError,
  type ConnectionState,
  type StreamClient,
} from '../../packages/sdk/src/stream-client.ts';
import { Recorder, ScriptedStreamServer, useScriptedStreamServer, type Frame, type ServerConnection } from './stream-test-server.ts';

const SECRET = 'sdk-stream-secret-3f9c2a71d4e8b605';
const SYMBOL = 'BTC-USD';

const perpSign = (ts: number, secret = SECRET) => createHmac('sha256', secret).update(`${ts}GET/v4/public/ws`).digest('base64');
const stockSign = (ts: number, nonce: string, secret = SECRET) => createHmac('sha256', secret).update(`GET\n/api/v1/ws\n${ts}\n${nonce}\n`).digest('hex');

const update = (channel: string, symbol: string | undefined, seq: number, data: unknown): Frame => ({
  type: 'update',
  channel,
  ...(symbol !== undefined ? { symbol } : {}),
  seq,
  data,
});

let server: ScriptedStreamServer;
const track = useScriptedStreamServer((started) => (server = started));

/** Answers a subscribe with a snapshot. */
function snapshot(conn: ServerConnection, sub: Frame, seq: number, data: unknown): void {
  conn.send({ type: 'subscribed', id: sub.id, channel: sub.channel, ...(sub.symbol !== undefined ? { symbol: sub.symbol } : {}), seq, data });
}

describe('stream client', () => {
  it('delivers the snapshot, then each update once and in order; old and repeated seqs are dropped', async () => {
    // No WebSocket option: Node 20 has no global one, so the client loads `ws` itself.
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws') }));
    const rec = new Recorder();
    const sub = client.subscribe('depth', { symbol: SYMBOL }, rec.handlers());
    expect(sub.state).toBe('pending');
    const conn = await server.connection(0);
    const s = await conn.takeOp('subscribe');
    expect(s).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });

    const book = { bids: [['100.5', '2']], asks: [['101', '1.5']], ts: 1_700_000_000_000 };
    snapshot(conn, s, 5, book);
    await sub.ready;
    expect(sub.state).toBe('active');
    conn.send(update('depth', SYMBOL, 6, { bids: [['100.5', '0']], asks: [], ts: 1 }));
    conn.send(update('depth', SYMBOL, 7, { bids: [], asks: [['101', '3']], ts: 2 }));
    conn.send(update('depth', SYMBOL, 7, { bids: [], asks: [['101', 'repeated']], ts: 2 }));
    conn.send(update('depth', SYMBOL, 4, { bids: [], asks: [['101', 'old']], ts: 0 }));
    conn.send(update('depth', 'ETH-USD', 8, { bids: [], asks: [['9', 'other stream']], ts: 3 }));
    conn.send(update('depth', SYMBOL, 8, { bids: [['99', '4']], asks: [], ts: 3 }));

    const events = await rec.until((e) => e.seq === 8);
    expect(events).toEqual([
      { kind: 'snapshot', seq: 5, data: book, info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 6, data: { bids: [['100.5', '0']], asks: [], ts: 1 } },
      { kind: 'update', seq: 7, data: { bids: [], asks: [['101', '3']], ts: 2 } },
      { kind: 'update', seq: 8, data: { bids: [['99', '4']], asks: [], ts: 3 } },
    ]);
    expect(sub.lastSeq).toBe(8);
    // Nothing was re-subscribed: the client sent nothing after its subscribe (pings aside).
    expect(conn.untaken()).toEqual([]);
  });

  it('a skipped seq: the out-of-order update is not delivered, the stream is subscribed again and its fresh snapshot delivered', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket }));
    const rec = new Recorder();
    const sub = client.subscribe('depth', { symbol: SYMBOL }, rec.handlers());
    const conn = await server.connection(0);
    const s1 = await conn.takeOp('subscribe');
    snapshot(conn, s1, 5, { bids: [], asks: [], ts: 0 });
    conn.send(update('depth', SYMBOL, 6, { n: 6 }));
    conn.send(update('depth', SYMBOL, 8, { n: 8 })); // 7 never came

    const u = await conn.takeOp('unsubscribe');
    const s2 = await conn.takeOp('subscribe');
    expect(u).toEqual({ op: 'unsubscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });
    expect(s2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });
    expect(new Set([s1.id, u.id, s2.id]).size).toBe(3);
    expect(conn.frames.items.indexOf(u)).toBeLessThan(conn.frames.items.indexOf(s2));
    expect(sub.state).toBe('subscribing');

    // Still on the old subscription (the server has not read the unsubscribe yet): not delivered.
    conn.send(update('depth', SYMBOL, 9, { n: 9 }));
    conn.send({ type: 'unsubscribed', id: u.id, channel: 'depth', symbol: SYMBOL });
    snapshot(conn, s2, 9, { bids: [['1', '1']], asks: [], ts: 9 });
    conn.send(update('depth', SYMBOL, 10, { n: 10 }));

    const events = await rec.until((e) => e.seq === 10);
    expect(events).toEqual([
      { kind: 'snapshot', seq: 5, data: { bids: [], asks: [], ts: 0 }, info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 6, data: { n: 6 } },
      { kind: 'snapshot', seq: 9, data: { bids: [['1', '1']], asks: [], ts: 9 }, info: { reason: 'gap', continuityLost: true, previousSeq: 6 } },
      { kind: 'update', seq: 10, data: { n: 10 } },
    ]);
    expect(conn.untaken()).toEqual([]);
  });

  it('a skipped seq on a private stream resumes it from the last seq delivered', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), apiKey: 'k1', apiSecret: SECRET, WebSocket }));
    const rec = new Recorder();
    client.subscribe('fills', {}, rec.handlers());
    const conn = await server.connection(0);
    const auth = await conn.takeOp('auth');
    conn.send({ type: 'authenticated', id: auth.id, account: '0xabc' });
    const s1 = await conn.takeOp('subscribe');
    expect(s1).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'fills' });
    snapshot(conn, s1, 20, []);
    conn.send(update('fills', undefined, 21, { id: 'f21' }));
    conn.send(update('fills', undefined, 23, { id: 'f23' }));

    const u = await conn.takeOp('unsubscribe');
    expect(u).toEqual({ op: 'unsubscribe', id: expect.any(String), channel: 'fills' });
    const s2 = await conn.takeOp('subscribe');
    expect(s2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'fills', since: 21 });
    conn.send({ type: 'unsubscribed', id: u.id, channel: 'fills' });
    conn.send({ type: 'subscribed', id: s2.id, channel: 'fills', seq: 21, resumed: true });
    for (const seq of [22, 23, 24]) conn.send(update('fills', undefined, seq, { id: `f${seq}` }));

    const events = await rec.until((e) => e.seq === 24);
    expect(events).toEqual([
      { kind: 'snapshot', seq: 20, data: [], info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 21, data: { id: 'f21' } },
      { kind: 'resume', seq: 21 },
      { kind: 'update', seq: 22, data: { id: 'f22' } },
      { kind: 'update', seq: 23, data: { id: 'f23' } },
      { kind: 'update', seq: 24, data: { id: 'f24' } },
    ]);
  });

  it('a dropped connection: reconnect, re-auth (signed, ts with the clock offset), private resume with since = last seq, replay delivered exactly once, public fresh snapshot', async () => {
    const OFFSET = 90_000;
    const logs: string[] = [];
    const states: ConnectionState[] = [];
    const reconnects: Array<{ attempt: number; code: number }> = [];
    const t0 = Date.now();
    const client = track(
      new PerpStreamClient({
        url: server.url('/v4/public/ws'),
        apiKey: 'perp-key-1',
        apiSecret: SECRET,
        clockOffsetMs: OFFSET,
        WebSocket,
        reconnect: { baseMs: 50 },
        logger: (level, message, fields) => logs.push(JSON.stringify({ level, message, fields })),
      }),
    );
    client.on('state', (s) => states.push(s));
    client.on('reconnecting', (r) => reconnects.push({ attempt: r.attempt, code: r.code }));
    const orders = new Recorder();
    const depth = new Recorder();
    client.subscribe('orders', {}, orders.handlers());
    client.subscribe('depth', { symbol: SYMBOL }, depth.handlers());

    // ---- first connection
    const c1 = await server.connection(0);
    const auth1 = await c1.takeOp('auth');
    const t1 = Date.now();
    expect(Object.keys(auth1).sort()).toEqual(['apiKey', 'id', 'op', 'sign', 'ts']);
    expect(auth1).toMatchObject({ op: 'auth', apiKey: 'perp-key-1' });
    expect(Number.isSafeInteger(auth1.ts)).toBe(true);
    expect(auth1.ts).toBeGreaterThanOrEqual(t0 + OFFSET);
    expect(auth1.ts).toBeLessThanOrEqual(t1 + OFFSET);
    expect(auth1.sign).toBe(perpSign(auth1.ts));
    // The public subscribe follows the auth at once; the private one waits for `authenticated`.
    const d1 = await c1.takeOp('subscribe');
    expect(d1).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });
    expect(c1.frames.items.indexOf(auth1)).toBeLessThan(c1.frames.items.indexOf(d1));
    expect(c1.untaken()).toEqual([]);
    c1.send({ type: 'authenticated', id: auth1.id, account: '0x00000000000000000000000000000000000000aa' });
    const o1 = await c1.takeOp('subscribe');
    expect(o1).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders' });
    expect(client.account).toBe('0x00000000000000000000000000000000000000aa');

    snapshot(c1, o1, 10, [{ orderId: 'o1', status: 'NEW' }]);
    snapshot(c1, d1, 100, { bids: [['100', '1']], asks: [], ts: 100 });
    c1.send(update('orders', undefined, 11, { orderId: 'o1', status: 'PARTIALLY_FILLED' }));
    c1.send(update('depth', SYMBOL, 101, { bids: [['100', '0']], asks: [], ts: 101 }));
    c1.send(update('orders', undefined, 12, { orderId: 'o2', status: 'NEW' }));
    await orders.until((e) => e.seq === 12);
    await depth.until((e) => e.seq === 101);

    // ---- the server goes away without a closing handshake
    const tDrop = Date.now();
    c1.drop();
    const c2 = await server.connection(1);
    const auth2 = await c2.takeOp('auth');
    const t2 = Date.now();
    expect(Object.keys(auth2).sort()).toEqual(['apiKey', 'id', 'op', 'sign', 'ts']);
    expect(auth2.apiKey).toBe('perp-key-1');
    expect(auth2.id).not.toBe(auth1.id);
    expect(auth2.ts).toBeGreaterThanOrEqual(tDrop + OFFSET);
    expect(auth2.ts).toBeLessThanOrEqual(t2 + OFFSET);
    expect(auth2.sign).toBe(perpSign(auth2.ts));
    const d2 = await c2.takeOp('subscribe');
    expect(d2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });
    expect(c2.untaken()).toEqual([]);
    c2.send({ type: 'authenticated', id: auth2.id, account: '0x00000000000000000000000000000000000000aa' });
    const o2 = await c2.takeOp('subscribe');
    expect(o2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders', since: 12 });

    // The server replays from since + 1; an overlapping 12 is dropped; then live.
    c2.send({ type: 'subscribed', id: o2.id, channel: 'orders', seq: 12, resumed: true });
    c2.send(update('orders', undefined, 12, { orderId: 'o2', status: 'NEW', replayed: true }));
    c2.send(update('orders', undefined, 13, { orderId: 'o1', status: 'FILLED' }));
    c2.send(update('orders', undefined, 14, { orderId: 'o2', status: 'CANCELED' }));
    snapshot(c2, d2, 105, { bids: [['99', '2']], asks: [], ts: 105 });
    c2.send(update('orders', undefined, 15, { orderId: 'o3', status: 'NEW' }));
    c2.send(update('depth', SYMBOL, 106, { bids: [], asks: [['102', '1']], ts: 106 }));

    expect(await orders.until((e) => e.seq === 15)).toEqual([
      { kind: 'snapshot', seq: 10, data: [{ orderId: 'o1', status: 'NEW' }], info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 11, data: { orderId: 'o1', status: 'PARTIALLY_FILLED' } },
      { kind: 'update', seq: 12, data: { orderId: 'o2', status: 'NEW' } },
      { kind: 'resume', seq: 12 },
      { kind: 'update', seq: 13, data: { orderId: 'o1', status: 'FILLED' } },
      { kind: 'update', seq: 14, data: { orderId: 'o2', status: 'CANCELED' } },
      { kind: 'update', seq: 15, data: { orderId: 'o3', status: 'NEW' } },
    ]);
    expect(await depth.until((e) => e.seq === 106)).toEqual([
      { kind: 'snapshot', seq: 100, data: { bids: [['100', '1']], asks: [], ts: 100 }, info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 101, data: { bids: [['100', '0']], asks: [], ts: 101 } },
      { kind: 'snapshot', seq: 105, data: { bids: [['99', '2']], asks: [], ts: 105 }, info: { reason: 'reconnect', continuityLost: true, previousSeq: 101 } },
      { kind: 'update', seq: 106, data: { bids: [], asks: [['102', '1']], ts: 106 } },
    ]);
    expect(reconnects).toEqual([{ attempt: 1, code: 1006 }]);
    expect(states).toEqual(['connecting', 'open', 'reconnecting', 'open']);
    expect(server.connections.items).toHaveLength(2);

    // Neither the secret nor a signature is ever logged.
    const logText = logs.join('\n');
    expect(logText).toContain('connection lost');
    for (const hidden of [SECRET, auth1.sign, auth2.sign]) expect(logText).not.toContain(hidden);
  });

  it('stock: the auth frame carries a fresh nonce and the five-line signature; since not retained (410) gives a fresh snapshot flagged', async () => {
    const t0 = Date.now();
    const client = track(new StockStreamClient({ url: server.url('/api/v1/ws'), apiKey: 'stock-key-1', apiSecret: SECRET, WebSocket, reconnect: { baseMs: 50 } }));
    const rec = new Recorder();
    client.subscribe('orders', {}, rec.handlers());
    const connected = client.connect();

    const c1 = await server.connection(0);
    const auth1 = await c1.takeOp('auth');
    expect(Object.keys(auth1).sort()).toEqual(['apiKey', 'id', 'nonce', 'op', 'sign', 'ts']);
    expect(auth1).toMatchObject({ op: 'auth', apiKey: 'stock-key-1' });
    expect(auth1.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(auth1.ts).toBeGreaterThanOrEqual(t0);
    expect(auth1.ts).toBeLessThanOrEqual(Date.now());
    expect(auth1.sign).toBe(stockSign(auth1.ts, auth1.nonce));
    c1.send({ type: 'authenticated', id: auth1.id, account: '0x00000000000000000000000000000000000000bb' });
    await connected;
    const s1 = await c1.takeOp('subscribe');
    expect(s1).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders' });
    snapshot(c1, s1, 3, [{ orderId: '7' }]);
    c1.send(update('orders', undefined, 4, { orderId: '7', state: 'history' }));
    await rec.until((e) => e.seq === 4);

    c1.drop();
    const c2 = await server.connection(1);
    const auth2 = await c2.takeOp('auth');
    expect(auth2.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(auth2.nonce).not.toBe(auth1.nonce);
    expect(auth2.sign).toBe(stockSign(auth2.ts, auth2.nonce));
    c2.send({ type: 'authenticated', id: auth2.id, account: '0x00000000000000000000000000000000000000bb' });
    const s2 = await c2.takeOp('subscribe');
    expect(s2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders', since: 4 });
    c2.send({ type: 'error', id: s2.id, code: 410, msg: 'since is older than the retained updates: subscribe without since for a fresh snapshot' });
    const s3 = await c2.takeOp('subscribe');
    expect(s3).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders' });
    snapshot(c2, s3, 50, [{ orderId: '9' }]);
    c2.send(update('orders', undefined, 51, { orderId: '9', state: 'canceling' }));

    expect(await rec.until((e) => e.seq === 51)).toEqual([
      { kind: 'snapshot', seq: 3, data: [{ orderId: '7' }], info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 4, data: { orderId: '7', state: 'history' } },
      { kind: 'snapshot', seq: 50, data: [{ orderId: '9' }], info: { reason: 'not-retained', continuityLost: true, previousSeq: 4 } },
      { kind: 'update', seq: 51, data: { orderId: '9', state: 'canceling' } },
    ]);
    expect(c2.untaken()).toEqual([]);
  });

  it('stock, several chains: chainId goes in the URL (every connection) and, with product, in the auth frame; none without them', async () => {
    const client = track(new StockStreamClient({ url: server.url('/api/v1/ws'), apiKey: 'stock-key-1', apiSecret: SECRET, chainId: '31338', product: 'STOCK', WebSocket, reconnect: { baseMs: 50 } }));
    expect([client.chainId, client.product]).toEqual([31338, 'STOCK']);
    const connected = client.connect();
    const c1 = await server.connection(0);
    expect(c1.url).toBe('/api/v1/ws?chainId=31338');
    const auth1 = await c1.takeOp('auth');
    expect(Object.keys(auth1).sort()).toEqual(['apiKey', 'chainId', 'id', 'nonce', 'op', 'product', 'sign', 'ts']);
    expect(auth1).toMatchObject({ chainId: 31338, product: 'STOCK' });
    // The signature is the same five-line payload: neither field is signed (as REST's headers are not).
    expect(auth1.sign).toBe(stockSign(auth1.ts, auth1.nonce));
    c1.send({ type: 'authenticated', id: auth1.id, account: '0x00000000000000000000000000000000000000bb' });
    await connected;
    // A reconnect names the chain again.
    c1.drop();
    const c2 = await server.connection(1);
    expect(c2.url).toBe('/api/v1/ws?chainId=31338');
    expect(await c2.takeOp('auth')).toMatchObject({ chainId: 31338, product: 'STOCK' });

    // A URL with a query of its own keeps it; a public-only client names the chain in the URL too.
    const pub = track(new StockStreamClient({ url: `${server.url('/api/v1/ws')}?x=1`, chainId: 8453, WebSocket }));
    pub.subscribe('quotes', { symbol: 'AAPL' });
    expect((await server.connection(2)).url).toBe('/api/v1/ws?x=1&chainId=8453');

    expect(() => new StockStreamClient({ url: server.url('/api/v1/ws'), chainId: '0x7a69' })).toThrow(TypeError);
    expect(() => new StockStreamClient({ url: server.url('/api/v1/ws'), chainId: 0 })).toThrow(TypeError);
    expect(() => new PerpStreamClient({ url: server.url('/v4/public/ws'), chainId: 1 } as never)).toThrow(/stock streams/);
  });

  it('a stream the server restarted (error naming the channel) is subscribed again for a fresh snapshot', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket }));
    const rec = new Recorder();
    client.subscribe('trades', { symbol: SYMBOL }, rec.handlers());
    const conn = await server.connection(0);
    const s1 = await conn.takeOp('subscribe');
    snapshot(conn, s1, 41, [{ id: 't41' }]);
    conn.send(update('trades', SYMBOL, 42, { id: 't42' }));
    conn.send({ type: 'error', code: 10003, msg: 'stream restarted: subscribe again for a fresh snapshot', channel: 'trades', symbol: SYMBOL });
    // The server has dropped the subscription: no unsubscribe, a plain subscribe.
    const s2 = await conn.takeOp('subscribe');
    expect(s2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'trades', symbol: SYMBOL });
    expect(conn.untaken()).toEqual([]);
    // New epoch: seqs far above the old ones.
    snapshot(conn, s2, 1_795_439_110_973_000, [{ id: 't43' }, { id: 't42' }]);
    conn.send(update('trades', SYMBOL, 1_795_439_110_973_001, { id: 't44' }));
    expect(await rec.until((e) => e.seq === 1_795_439_110_973_001)).toEqual([
      { kind: 'snapshot', seq: 41, data: [{ id: 't41' }], info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
      { kind: 'update', seq: 42, data: { id: 't42' } },
      { kind: 'snapshot', seq: 1_795_439_110_973_000, data: [{ id: 't43' }, { id: 't42' }], info: { reason: 'restarted', continuityLost: true, previousSeq: 42 } },
      { kind: 'update', seq: 1_795_439_110_973_001, data: { id: 't44' } },
    ]);
  });

  it('close(): the connection ends with 1000, pending promises reject with StreamClosedError, no reconnect', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket, reconnect: { baseMs: 1 } }));
    const reconnects: unknown[] = [];
    const states: ConnectionState[] = [];
    client.on('reconnecting', (r) => reconnects.push(r));
    client.on('state', (s) => states.push(s));
    const closedEvent = new Promise<void>((resolve) => client.on('closed', resolve));
    const depth = new Recorder();
    const depthSub = client.subscribe('depth', { symbol: SYMBOL }, depth.handlers());
    const tradesSub = client.subscribe('trades', { symbol: SYMBOL }, new Recorder().handlers());
    const conn = await server.connection(0);
    const d = await conn.takeOp('subscribe', (f) => f.channel === 'depth');
    await conn.takeOp('subscribe', (f) => f.channel === 'trades'); // never answered
    snapshot(conn, d, 1, { bids: [], asks: [], ts: 1 });
    await depthSub.ready;
    const unsubscribing = depthSub.unsubscribe(); // never answered either
    expect(await conn.takeOp('unsubscribe')).toEqual({ op: 'unsubscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });

    const closing = client.close();
    expect(client.state).toBe('closed');
    await expect(tradesSub.ready).rejects.toBeInstanceOf(StreamClosedError);
    await expect(tradesSub.ready).rejects.toMatchObject({ code: 'CLOSED' });
    await expect(unsubscribing).rejects.toBeInstanceOf(StreamClosedError);
    expect(await conn.closed).toEqual({ code: 1000, reason: 'client closed' });
    await closing;
    await closedEvent;
    expect(client.close()).toBe(closing);
    await expect(client.connect()).rejects.toBeInstanceOf(StreamClosedError);
    expect(() => client.subscribe('depth', { symbol: 'ETH-USD' })).toThrow(StreamClosedError);
    expect(tradesSub.state).toBe('ended');
    // Frames after close reach nobody (the socket is gone), and nothing reconnects.
    expect(reconnects).toEqual([]);
    expect(states).toEqual(['connecting', 'open', 'closed']);
    expect(server.connections.items).toHaveLength(1);
    expect(depth.all.map((e) => e.kind)).toEqual(['snapshot']);
  });

  it('close() while waiting to reconnect cancels the reconnect', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket, reconnect: { baseMs: 60_000 }, random: () => 0.5 }));
    const reconnecting = new Promise<{ delayMs: number }>((resolve) => client.on('reconnecting', resolve));
    await client.connect();
    const conn = await server.connection(0);
    conn.drop();
    // Full jitter under the 10 s cap: 0.5 × min(10,000, 60,000 × 2^0).
    expect((await reconnecting).delayMs).toBe(5_000);
    expect(client.state).toBe('reconnecting');
    await client.close();
    expect(client.state).toBe('closed');
    expect(server.connections.items).toHaveLength(1);
  });

  it('a refused subscription ends with a typed StreamError on onError and ready; others go on', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket }));
    const bad = new Recorder();
    const good = new Recorder();
    const badSub = client.subscribe('depth', { symbol: 'NOPE-USD' }, bad.handlers());
    client.subscribe('mark', { symbol: SYMBOL }, good.handlers());
    const conn = await server.connection(0);
    const b = await conn.takeOp('subscribe', (f) => f.symbol === 'NOPE-USD');
    const g = await conn.takeOp('subscribe', (f) => f.channel === 'mark');
    conn.send({ type: 'error', id: b.id, code: 40002, msg: 'symbol: unknown' });
    snapshot(conn, g, 3, { symbol: SYMBOL, markPrice: '100' });

    const err = await badSub.ready.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamError);
    expect(err).toMatchObject({ code: 40002, msg: 'symbol: unknown', id: b.id, channel: 'depth', symbol: 'NOPE-USD' });
    expect(bad.all).toEqual([{ kind: 'error', error: err }]);
    expect(badSub.state).toBe('ended');
    expect(client.subscriptions.map((s) => s.channel)).toEqual(['mark']);
    await good.until((e) => e.kind === 'snapshot');
    // The same stream can be subscribed again once the refused one is over.
    const again = client.subscribe('depth', { symbol: 'NOPE-USD' }, bad.handlers());
    expect(again.state).toBe('subscribing');
  });

  it('auth refused: connect() rejects with the code, private subscriptions end with it, public ones are served', async () => {
    const errors: StreamError[] = [];
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), apiKey: 'k-bad', apiSecret: SECRET, WebSocket }));
    client.on('error', (e) => errors.push(e));
    const priv = new Recorder();
    const pub = new Recorder();
    const privSub = client.subscribe('positions', {}, priv.handlers());
    client.subscribe('tickers', { symbol: SYMBOL }, pub.handlers());
    const connected = client.connect();
    const conn = await server.connection(0);
    const auth = await conn.takeOp('auth');
    const t = await conn.takeOp('subscribe');
    expect(t.channel).toBe('tickers');
    conn.send({ type: 'error', id: auth.id, code: 20006, msg: 'signature mismatch' });
    snapshot(conn, t, 1, { symbol: SYMBOL, lastPrice: '100' });

    await expect(connected).rejects.toMatchObject({ code: 20006, msg: 'signature mismatch', id: auth.id });
    await expect(privSub.ready).rejects.toMatchObject({ code: 20006 });
    expect(priv.all).toEqual([{ kind: 'error', error: expect.objectContaining({ code: 20006 }) }]);
    expect(errors.map((e) => e.code)).toEqual([20006]);
    await pub.until((e) => e.kind === 'snapshot');
    // A private subscribe on this connection now fails at once, after the caller holds it.
    const late = new Recorder();
    const lateSub = client.subscribe('account', {}, late.handlers());
    await expect(lateSub.ready).rejects.toMatchObject({ code: 20006 });
    expect(late.all).toHaveLength(1);
    // No private subscribe ever went out.
    expect(conn.frames.items.filter((f) => f.op === 'subscribe').map((f) => f.channel)).toEqual(['tickers']);
    for (const e of errors) expect(`${e.message} ${e.msg}`).not.toContain(SECRET);
  });

  it('unsubscribe(): the frame goes out, handlers stop at once, the promise resolves on the answer', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket }));
    const rec = new Recorder();
    const sub = client.subscribe('klines:1m', { symbol: SYMBOL }, rec.handlers());
    const conn = await server.connection(0);
    const s = await conn.takeOp('subscribe');
    expect(s).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'klines:1m', symbol: SYMBOL });
    snapshot(conn, s, 1, null);
    await sub.ready;
    let resolved = false;
    const p = sub.unsubscribe().then(() => {
      resolved = true;
    });
    const u = await conn.takeOp('unsubscribe');
    expect(u).toEqual({ op: 'unsubscribe', id: expect.any(String), channel: 'klines:1m', symbol: SYMBOL });
    conn.send(update('klines:1m', SYMBOL, 2, { openTime: 0 }));
    expect(resolved).toBe(false);
    conn.send({ type: 'unsubscribed', id: u.id, channel: 'klines:1m', symbol: SYMBOL });
    await p;
    expect(sub.state).toBe('ended');
    expect(rec.all).toEqual([{ kind: 'snapshot', seq: 1, data: null, info: { reason: 'initial', continuityLost: false, previousSeq: undefined } }]);
  });

  it('refuses a second subscription to the same stream and a private channel without credentials', () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket }));
    client.subscribe('depth', { symbol: SYMBOL });
    expect(() => client.subscribe('depth', { symbol: SYMBOL })).toThrow(expect.objectContaining({ code: 'DUPLICATE_SUBSCRIPTION' }));
    expect(() => client.subscribe('orders')).toThrow(expect.objectContaining({ code: 'NO_CREDENTIALS' }));
    expect(client.subscriptions).toHaveLength(1);
  });
});
