/**
 * The stream client's connection care (backoff, give-up, heartbeat, idle detection, outgoing rate,
 * retried refusals, server error frames) and its WebCrypto signatures checked against node:crypto.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { PerpStreamClient, StreamClient, StreamError, streamApiOf, type StreamLogLevel } from '../../packages/sdk/src/stream-client.ts';
import { createHmacSigner, nextStreamAuthTs, signPerpStreamAuth, signStockStreamAuth, stockStreamPayload, toBase64, toHex } from '../../packages/sdk/src/stream-sign.ts';
import { Recorder, ScriptedStreamServer, useScriptedStreamServer } from './stream-test-server.ts';

const SYMBOL = 'BTC-USD';
let server: ScriptedStreamServer;
const track = useScriptedStreamServer((started) => (server = started));

/** A port nothing listens on (connections are refused). */
async function refusedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe('stream client: connection care', () => {
  it('retries a refused connection with full-jitter exponential backoff under the cap, then gives up after maxAttempts', async () => {
    const port = await refusedPort();
    const delays: number[] = [];
    const errors: StreamError[] = [];
    const client = track(
      new PerpStreamClient({ url: `ws://127.0.0.1:${port}/v4/public/ws`, WebSocket, random: () => 0.999, reconnect: { baseMs: 1, capMs: 8, maxAttempts: 5 } }),
    );
    client.on('reconnecting', (r) => delays.push(r.delayMs));
    client.on('error', (e) => errors.push(e));
    const closed = new Promise<void>((resolve) => client.on('closed', resolve));
    const err = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    await closed;
    // 0.999 × min(8, 1 × 2^attempt): bounds 1, 2, 4, 8, 8.
    expect(delays).toEqual([0, 1, 3, 7, 7]);
    expect(err).toBeInstanceOf(StreamError);
    expect(err).toMatchObject({ code: 'RECONNECT_EXHAUSTED' });
    expect(errors.map((e) => e.code)).toEqual(['CONNECTION', 'CONNECTION', 'CONNECTION', 'CONNECTION', 'CONNECTION', 'RECONNECT_EXHAUSTED']);
    expect(client.state).toBe('closed');
  });

  it('sends {"op":"ping"} periodically; a connection silent past the idle timeout is dropped and reopened; pongs keep it alive', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket, pingIntervalMs: 40, idleTimeoutMs: 400, reconnect: { baseMs: 1 } }));
    const reconnects: Array<{ code: number; reason: string }> = [];
    client.on('reconnecting', (r) => reconnects.push({ code: r.code, reason: r.reason }));
    await client.connect();
    const c0 = await server.connection(0);
    const p1 = await c0.take((f) => f.op === 'ping');
    const p2 = await c0.take((f) => f.op === 'ping');
    expect(p1).toEqual({ op: 'ping', id: expect.any(String) });
    expect(p2.id).not.toBe(p1.id);
    // The server answers nothing: the client gives the connection up and opens another.
    const c1 = await server.connection(1);
    expect((await c0.closed).code).toBe(1006);
    expect(reconnects).toEqual([{ code: 4000, reason: 'no frame for 400 ms' }]);
    // Answered pings keep the next connection open well past the idle timeout (15 × 40 ms > 400 ms).
    for (let i = 0; i < 15; i++) {
      const p = await c1.take((f) => f.op === 'ping');
      c1.send({ type: 'pong', id: p.id });
    }
    expect(server.connections.items).toHaveLength(2);
    expect(client.state).toBe('open');
  });

  it('re-subscribing many streams stays under the server rate limit (20/s, burst 40)', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket }));
    const symbols = Array.from({ length: 45 }, (_, i) => `S${i}-USD`);
    for (const symbol of symbols) client.subscribe('tickers', { symbol });
    const conn = await server.connection(0);
    // The server's token bucket, fed as frames arrive.
    let tokens = 40;
    let last = Date.now();
    let lowest = tokens;
    conn.ws.on('message', () => {
      const now = Date.now();
      tokens = Math.min(40, tokens + ((now - last) / 1000) * 20) - 1;
      last = now;
      lowest = Math.min(lowest, tokens);
    });
    const got: string[] = [];
    for (let i = 0; i < symbols.length; i++) got.push((await conn.takeOp('subscribe')).symbol);
    expect(got.sort()).toEqual([...symbols].sort());
    expect(lowest).toBeGreaterThanOrEqual(0);
  });

  it('a subscribe refused for now (50002) is sent again after a backoff', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket, random: () => 0 }));
    const rec = new Recorder();
    const sub = client.subscribe('mark', { symbol: SYMBOL }, rec.handlers());
    const conn = await server.connection(0);
    const s1 = await conn.takeOp('subscribe');
    conn.send({ type: 'error', id: s1.id, code: 50002, msg: 'streams are starting: try again shortly' });
    const s2 = await conn.takeOp('subscribe');
    expect(s2).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'mark', symbol: SYMBOL });
    conn.send({ type: 'subscribed', id: s2.id, channel: 'mark', symbol: SYMBOL, seq: 7, data: { markPrice: '1' } });
    await sub.ready;
    expect(rec.all).toEqual([{ kind: 'snapshot', seq: 7, data: { markPrice: '1' }, info: { reason: 'initial', continuityLost: false, previousSeq: undefined } }]);
  });

  it('a server error frame not tied to a request is an "error" event; the close that follows is reconnected', async () => {
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket, reconnect: { baseMs: 1 } }));
    const errors: StreamError[] = [];
    client.on('error', (e) => errors.push(e));
    const rec = new Recorder();
    client.subscribe('depth', { symbol: SYMBOL }, rec.handlers());
    const c0 = await server.connection(0);
    await c0.takeOp('subscribe');
    c0.send({ type: 'error', code: 42900, msg: 'more than 20 messages a second' });
    c0.ws.close(1008, 'message rate limit exceeded');
    const c1 = await server.connection(1);
    const s = await c1.takeOp('subscribe');
    expect(s).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'depth', symbol: SYMBOL });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(StreamError);
    expect(errors[0]).toMatchObject({ code: 42900, msg: 'more than 20 messages a second', id: undefined });
  });

  it('a handler that throws is logged and does not stop the stream', async () => {
    const logs: Array<[StreamLogLevel, string]> = [];
    const client = track(new PerpStreamClient({ url: server.url('/v4/public/ws'), WebSocket, logger: (l, m) => logs.push([l, m]) }));
    const seen: number[] = [];
    let third!: () => void;
    const gotThird = new Promise<void>((resolve) => (third = resolve));
    client.subscribe('trades', { symbol: SYMBOL }, {
      onUpdate(_data, seq) {
        seen.push(seq);
        if (seq === 2) throw new Error('integrator bug');
        if (seq === 3) third();
      },
    });
    const conn = await server.connection(0);
    const s = await conn.takeOp('subscribe');
    conn.send({ type: 'subscribed', id: s.id, channel: 'trades', symbol: SYMBOL, seq: 1, data: [] });
    for (const seq of [2, 3]) conn.send({ type: 'update', channel: 'trades', symbol: SYMBOL, seq, data: {} });
    await gotThird;
    expect(seen).toEqual([2, 3]);
    expect(logs).toContainEqual(['error', 'onUpdate threw']);
  });

  it('infers the API from the URL and insists on it for auth', () => {
    expect(streamApiOf('ws://h:1/v4/public/ws')).toBe('perp');
    expect(streamApiOf('wss://h/prefix/api/v1/ws')).toBe('stock');
    expect(streamApiOf('ws://h/other')).toBeUndefined();
    expect(new StreamClient({ url: 'ws://h/svc/api/v1/ws' }).api).toBe('stock');
    expect(() => new StreamClient({ url: 'ws://h/other', apiKey: 'k', apiSecret: 's' })).toThrow(/api/);
    expect(() => new StreamClient({ url: 'ws://h/v4/public/ws', apiKey: 'k' })).toThrow(/together/);
  });
});

describe('stream auth signatures (WebCrypto) match node:crypto', () => {
  it('perp Base64 and stock hex HMAC-SHA256, with any secret', async () => {
    for (const secret of ['s', 'a-secret-with-ünïcödé-€', randomBytes(24).toString('base64'), randomBytes(40).toString('hex')]) {
      const signer = createHmacSigner(secret);
      const ts = 1_795_439_110_000 + Math.floor(Math.random() * 1000);
      expect(await signPerpStreamAuth(signer, ts)).toBe(createHmac('sha256', secret).update(`${ts}GET/v4/public/ws`).digest('base64'));
      const nonce = randomBytes(16).toString('hex');
      expect(stockStreamPayload(ts, nonce)).toBe(`GET\n/api/v1/ws\n${ts}\n${nonce}\n`);
      expect(await signStockStreamAuth(signer, ts, nonce)).toBe(createHmac('sha256', secret).update(`GET\n/api/v1/ws\n${ts}\n${nonce}\n`).digest('hex'));
    }
  });

  it('Base64 and hex of every length', () => {
    for (let n = 0; n <= 40; n++) {
      const bytes = randomBytes(n);
      expect(toBase64(new Uint8Array(bytes))).toBe(bytes.toString('base64'));
      expect(toHex(new Uint8Array(bytes))).toBe(bytes.toString('hex'));
    }
  });
});

describe('stream auth timestamps: never one ts twice for a key in a process', () => {
  it('takes the clock when it has advanced, else the last one plus 1, per key', () => {
    const key = `ts-rule-${randomBytes(6).toString('hex')}`;
    const other = `${key}-other`;
    const t = 1_795_439_110_000;
    expect(nextStreamAuthTs(key, t)).toBe(t);
    // The same millisecond, and a clock that went back: the next free stamp.
    expect(nextStreamAuthTs(key, t)).toBe(t + 1);
    expect(nextStreamAuthTs(key, t)).toBe(t + 2);
    expect(nextStreamAuthTs(key, t - 5_000)).toBe(t + 3);
    // Another key is not held back by this one's stamps.
    expect(nextStreamAuthTs(other, t)).toBe(t);
    // Once the clock passes the last stamp, the clock again (rounded, as the frame carries integers).
    expect(nextStreamAuthTs(key, t + 10.4)).toBe(t + 10);
    expect(nextStreamAuthTs(key, t + 10.4)).toBe(t + 11);
    expect(nextStreamAuthTs(key, t + 50)).toBe(t + 50);
  });

  it('a burst of auths with one key inside one millisecond gets distinct, consecutive stamps', () => {
    const key = `ts-burst-${randomBytes(6).toString('hex')}`;
    const now = 1_795_439_120_000;
    const stamps = Array.from({ length: 1_000 }, () => nextStreamAuthTs(key, now));
    expect(new Set(stamps).size).toBe(1_000);
    expect(stamps[0]).toBe(now);
    expect(stamps.at(-1)).toBe(now + 999);
  });

  it('clients opened together with one key send distinct auth stamps and signatures', async () => {
    const server = await ScriptedStreamServer.start();
    const key = `ts-clients-${randomBytes(6).toString('hex')}`;
    // A frozen clock (clockOffsetMs cancels Date.now()): every client authenticates "in the same millisecond".
    const frozen = Date.now();
    const clients = Array.from({ length: 8 }, () => new PerpStreamClient({ url: server.url('/v4/public/ws'), apiKey: key, apiSecret: 'secret', clockOffsetMs: () => frozen - Date.now(), WebSocket }));
    try {
      for (const c of clients) void c.connect().catch(() => {});
      const auths = await Promise.all(clients.map(async (_, i) => (await server.connection(i)).takeOp('auth')));
      const stamps = auths.map((a) => a.ts as number).sort((a, b) => a - b);
      // The client reads Date.now() and then the offset, which reads it again: when time passes
      // between the two (a millisecond, or more on a busy machine), its clock says a little before
      // `frozen`. Whatever each client read, no stamp repeats and none runs past frozen + 7.
      expect(new Set(stamps).size).toBe(8);
      expect(stamps[7]).toBeLessThanOrEqual(frozen + 7);
      expect(stamps[0]).toBeGreaterThan(frozen - 1_000);
      expect(new Set(auths.map((a) => a.sign)).size).toBe(8);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await server.stop();
    }
  });
});
