/**
 * The stream client's order requests against a scripted server (a real `ws` server the test answers
 * frame by frame): each result matched to its request by id whatever the order of the answers, a
 * refusal as a typed StreamOrderError, and the ends without a result: a timeout (sent or never
 * sent), a dropped connection, close(), a refused `auth`, missing credentials. Nothing is sent twice.
 */
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { PerpStreamClient, StockStreamClient, StreamClosedError, StreamOrderError, type StreamClient } from '../../packages/sdk/src/stream-client.ts';
import { ScriptedStreamServer, useScriptedStreamServer, type ServerConnection } from './stream-test-server.ts';

const PATH = '/v4/public/ws';
let server: ScriptedStreamServer;
const track = useScriptedStreamServer((started) => (server = started));

const client = (opts: { orderTimeoutMs?: number; credentials?: boolean; url?: string } = {}) => {
  const c = new PerpStreamClient({
    url: opts.url ?? server.url(PATH),
    WebSocket,
    ...(opts.credentials === false ? {} : { apiKey: 'key-1', apiSecret: 'secret-1' }),
    orderTimeoutMs: opts.orderTimeoutMs,
    reconnect: { baseMs: 1, capMs: 5 },
  });
  return track(c);
};

/** The n-th connection, after answering its `auth`. */
async function authed(n: number): Promise<ServerConnection> {
  const conn = await server.connection(n);
  const auth = await conn.takeOp('auth');
  conn.send({ type: 'authenticated', id: auth.id, account: '0xabc' });
  return conn;
}

async function rejection(p: Promise<unknown>): Promise<any> {
  return p.then(
    (v) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}

const signed = { message: { nonce: '1' }, signature: '0x01' as const };

describe('stream client: order requests', () => {
  it('sends each request after auth with its action and body, and matches results by id whatever their order', async () => {
    const c = client();
    const place = c.placeOrder({ ...signed, orderHash: '0xhash' } as never);
    const cancel = c.cancelOrder('42', { idempotencyKey: 'k-1' });
    const conn = await authed(0);
    const p = await conn.takeOp('order');
    const k = await conn.takeOp('order');
    // The orderHash of a SignedOrder is left out: the route's body takes message and signature only.
    expect(p).toEqual({ op: 'order', id: p.id, action: 'place', body: signed });
    expect(k).toEqual({ op: 'order', id: k.id, action: 'cancel', body: { orderId: '42', idempotencyKey: 'k-1' } });
    expect(p.id).not.toBe(k.id);
    conn.send({ type: 'result', id: k.id, code: 0, msg: 'ok', data: { orderId: '42', status: 'CANCELED' } });
    conn.send({ type: 'result', id: p.id, code: 0, msg: 'ok', data: { orderId: '7', status: 'NEW' } });
    expect(await place).toEqual({ orderId: '7', status: 'NEW' });
    expect(await cancel).toEqual({ orderId: '42', status: 'CANCELED' });

    const batch = c.placeBatch([signed, signed]);
    const amend = c.amendOrder(signed);
    const b = await conn.takeOp('order', (f) => f.action === 'batch');
    const a = await conn.takeOp('order', (f) => f.action === 'amend');
    expect(b.body).toEqual({ orders: [signed, signed] });
    expect(a.body).toEqual(signed);
    conn.send({ type: 'result', id: b.id, code: 0, msg: 'ok', data: { results: [{ code: 0 }, { code: 51013, msg: 'used' }] } });
    conn.send({ type: 'result', id: a.id, code: 51031, msg: 'nothing changed', data: {} });
    expect(await batch).toEqual({ results: [{ code: 0 }, { code: 51013, msg: 'used' }] });
    const err = await rejection(amend);
    expect(err).toBeInstanceOf(StreamOrderError);
    expect([err.code, err.msg, err.id, err.action, err.sent]).toEqual([51031, 'nothing changed', a.id, 'amend', true]);
    expect(err.message).toBe('nothing changed (code 51031)');
    expect(conn.untaken()).toEqual([]);
  });

  it('a rate-limit refusal carries retryAfter; an error frame answering the order rejects it too', async () => {
    const c = client();
    const limited = c.placeOrder(signed);
    const conn = await authed(0);
    const f = await conn.takeOp('order');
    conn.send({ type: 'result', id: f.id, code: 42900, msg: 'Too many requests', data: { retryAfter: 12 } });
    const err = await rejection(limited);
    expect([err.code, err.retryAfter, err.data]).toEqual([42900, 12, { retryAfter: 12 }]);

    const refused = c.placeOrder(signed);
    const g = await conn.takeOp('order');
    conn.send({ type: 'error', id: g.id, code: 42900, msg: 'message rate limit exceeded' });
    expect(await rejection(refused)).toMatchObject({ name: 'StreamOrderError', code: 42900, sent: true, action: 'place' });
  });

  it('times out cleanly: sent but unanswered is sent "unknown" and a late result is ignored; never connected is sent false', async () => {
    const c = client({ orderTimeoutMs: 300 });
    const p = c.placeOrder(signed);
    const conn = await authed(0);
    const f = await conn.takeOp('order');
    const err = await rejection(p);
    expect(err).toBeInstanceOf(StreamOrderError);
    expect([err.code, err.sent, err.id]).toEqual(['TIMEOUT', 'unknown', f.id]);
    expect(err.message).toMatch(/no result within 300 ms; it was sent and may have been applied/);
    // The answer arrives after all: dropped, and the client carries on.
    conn.send({ type: 'result', id: f.id, code: 0, msg: 'ok', data: {} });
    const next = c.cancelOrder('1', { timeoutMs: 5_000 });
    const g = await conn.takeOp('order');
    conn.send({ type: 'result', id: g.id, code: 0, msg: 'ok', data: { orderId: '1' } });
    expect(await next).toEqual({ orderId: '1' });
    expect(c.state).toBe('open');

    // A server that never answers auth: the order never leaves.
    const d = client({ orderTimeoutMs: 300 });
    const q = d.placeOrder(signed);
    const silent = await server.connection(1);
    await silent.takeOp('auth');
    const late = await rejection(q);
    expect([late.code, late.sent]).toEqual(['TIMEOUT', false]);
    expect(late.message).toMatch(/not sent, no authenticated connection within 300 ms/);
    expect(silent.untaken()).toEqual([]);
  });

  it('a connection dropped before the result rejects with CONNECTION, sent "unknown"; the client reconnects and the request is not resent', async () => {
    const c = client();
    const p = c.placeOrder(signed);
    const conn = await authed(0);
    await conn.takeOp('order');
    conn.drop();
    const err = await rejection(p);
    expect([err.code, err.sent]).toEqual(['CONNECTION', 'unknown']);
    expect(err.message).toMatch(/the connection dropped before the result; it may have been applied/);
    const again = await authed(1);
    const next = c.placeOrder(signed);
    const f = await again.takeOp('order');
    again.send({ type: 'result', id: f.id, code: 0, msg: 'ok', data: { orderId: '9' } });
    expect(await next).toEqual({ orderId: '9' });
    // The first order was sent once, on the first connection only.
    expect(again.frames.items.filter((x) => x.op === 'order')).toHaveLength(1);
  });

  it('close() rejects what is pending with StreamClosedError; a refused auth rejects with its code, nothing sent; no credentials or a stock client refuse at once', async () => {
    const c = client();
    const p = c.placeOrder(signed);
    const conn = await authed(0);
    await conn.takeOp('order');
    await c.close();
    expect(await rejection(p)).toBeInstanceOf(StreamClosedError);
    expect(await rejection(c.placeOrder(signed))).toBeInstanceOf(StreamClosedError);

    const d = client();
    const q = d.cancelOrder('1');
    const second = await server.connection(1);
    const auth = await second.takeOp('auth');
    second.send({ type: 'error', id: auth.id, code: 20005, msg: 'Invalid signature' });
    const err = await rejection(q);
    expect([err.name, err.code, err.msg, err.sent]).toEqual(['StreamOrderError', 20005, 'Invalid signature', false]);
    expect(second.untaken()).toEqual([]);

    const anonymous = await rejection(client({ credentials: false }).placeOrder(signed));
    expect([anonymous.code, anonymous.sent]).toEqual(['NO_CREDENTIALS', false]);
    const stock = new StockStreamClient({ url: server.url('/api/v1/ws'), WebSocket, apiKey: 'k', apiSecret: 's' });
    track(stock);
    await expect(stock.sendOrder('place', signed)).rejects.toThrow(TypeError);
  });
});
