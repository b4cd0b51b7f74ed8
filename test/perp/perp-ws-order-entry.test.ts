/**
 * Order entry over the private perp stream (contract.md §B "Order entry for trading firms",
 * docs/streams.md "Order entry"): `{"op":"order","id","action","body"}` after `auth`, answered by
 * `{"type":"result","id","code","msg","data"}` with exactly what REST answers. A real engine behind
 * the API (test/support/perp-api-harness.ts), the stream endpoint wired to the API's own order
 * service and rate-limit checker (perp-ws-harness.ts): the answers compared with REST's for the same
 * calls, one order for a signed order sent both ways, cancels and their idempotency keys shared with
 * REST, batch and amend, arrival order, and every refusal with REST's code and words. Then the
 * whole stack once, for the perp-api role's wiring: an order over `/v4/public/ws` filled against the
 * demo market maker, counted in the key's REST budget.
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PerpClient } from '@tokex/sdk';
import { perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';
import { until } from '../support/poll.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket, type StreamFrame, type TestSocket } from '../support/ws-client.ts';
import { attachOrderStream, authFrame, sendOrder, signedOrder, type OrderStream, type StreamKey } from './perp-ws-harness.ts';

const AAPL = 'AAPL-USD';

interface Trader extends StreamKey {
  wallet: PrivateKeyAccount;
  api: PerpClient;
}

/** What differs between two equal orders: ids and times. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, /(^|[a-z])(Id|At|ts|time)$|^id$|^ts$|^time$/.test(k) && v !== null ? `<${k}>` : shape(v)]),
  );
}

describe.each(perpHarnessVariants())('perp order entry over the stream ($name)', (variant) => {
  let h: PerpHarness;
  let ws: OrderStream;
  let alice: Trader;
  let bob: Trader;
  let nonce = BigInt(Date.now()) * 1000n;

  const trader = async (deposit: bigint, permissions: Array<'READ' | 'TRADE' | 'TRANSFER'> = ['READ', 'TRADE']): Promise<Trader> => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { client, apiKey, apiSecret } = await h.key({ userAddress: wallet.address, permissions });
    if (deposit > 0n) await h.venue!.deposit(wallet.address, deposit);
    return { wallet, api: client, apiKey, apiSecret };
  };
  /** A signed order, built here as a client library would (no REST call). */
  const sign = (t: Trader, fields: Partial<Record<string, unknown>> = {}) => signedOrder(t.wallet, ++nonce, fields);
  const ok = (f: StreamFrame) => {
    expect(f, JSON.stringify(f)).toMatchObject({ type: 'result', code: 0, msg: 'ok' });
    return f.data;
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    ws = await attachOrderStream(h);
    alice = await trader(10_000n * USD);
    bob = await trader(10_000n * USD);
  });
  afterAll(async () => {
    await ws?.stop();
    await h?.stop();
  });

  it('place answers what POST orders answers: the same fields, status and fills', async () => {
    await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '10', price: '200.5' });
    const s = await ws.authed(bob);
    const market = { side: 'BUY', orderType: 'MARKET', size: '2', price: '', timeInForce: 'IOC' };
    const overWs = ok(await sendOrder(s, 'place', await sign(bob, market), 'm1'));
    const overRest = await bob.api.submitOrder<Record<string, unknown>>(await sign(bob, market));
    expect(overWs).toMatchObject({ symbol: AAPL, side: 'BUY', type: 'MARKET', status: 'FILLED', filledSize: '2', avgPrice: '200.5', duplicate: false });
    expect(overWs.fills).toEqual([expect.objectContaining({ price: '200.5', size: '2', role: 'TAKER', orderId: overWs.orderId })]);
    expect(Object.keys(overWs)).toEqual(Object.keys(overRest));
    expect(shape(overWs)).toEqual(shape(overRest));
    expect(Number(overRest.orderId)).toBe(Number(overWs.orderId) + 1);

    // A resting limit order: NEW, no fills, as REST answers it.
    const limit = ok(await sendOrder(s, 'place', await sign(bob, { price: '150', clientOrderId: 'ws-rest-1' })));
    expect(limit).toMatchObject({ status: 'NEW', price: '150', size: '1', remainingSize: '1', clientOrderId: 'ws-rest-1', fills: [], duplicate: false });
    const open = await bob.api.get<{ rows: Array<{ orderId: string; clientOrderId: string }> }>('orders/open');
    expect(open.rows.map((o) => o.orderId)).toContain(limit.orderId);
  });

  it('a signed order sent over the stream and over REST is one order (duplicate: true), either way round', async () => {
    const s = await ws.authed(bob);
    const first = await sign(bob, { price: '151' });
    const placed = ok(await sendOrder(s, 'place', first));
    const again = await bob.api.submitOrder<Record<string, unknown>>(first);
    expect(again).toMatchObject({ orderId: placed.orderId, duplicate: true, status: 'NEW' });

    const second = await sign(bob, { price: '152' });
    const overRest = await bob.api.submitOrder<Record<string, unknown>>(second);
    const repeat = ok(await sendOrder(s, 'place', second));
    expect(repeat).toMatchObject({ orderId: overRest.orderId, duplicate: true });
    // And a repeat over the stream itself.
    expect(ok(await sendOrder(s, 'place', second))).toMatchObject({ orderId: overRest.orderId, duplicate: true });
    const open = await bob.api.get<{ rows: Array<{ price: string }> }>('orders/open', { symbol: AAPL });
    expect(open.rows.filter((o) => o.price === '151' || o.price === '152')).toHaveLength(2);
  });

  it('cancel answers what DELETE orders/{orderId} answers, with its refusals, and shares its Idempotency-Key', async () => {
    const s = await ws.authed(alice);
    const placed = ok(await sendOrder(s, 'place', await sign(alice, { side: 'SELL', price: '260' })));
    const canceled = ok(await sendOrder(s, 'cancel', { orderId: placed.orderId }));
    expect(canceled).toMatchObject({ orderId: placed.orderId, status: 'CANCELED', reason: 'USER_CANCEL', remainingSize: '0' });
    // The same refusals as REST, in the same words (once the history holds the cancel: the service
    // words a refusal from it when it can).
    await h.venue!.settled();
    const rest = await alice.api.request('DELETE', `orders/${placed.orderId}`);
    const again = await sendOrder(s, 'cancel', { orderId: placed.orderId });
    expect(again).toMatchObject({ code: 51007, msg: rest.msg, data: rest.data });
    expect(rest.code).toBe(51007);
    expect(await sendOrder(s, 'cancel', { orderId: '999999' })).toMatchObject({ code: 40003, data: {} });
    const bobs = await ws.authed(bob);
    expect(await sendOrder(bobs, 'cancel', { orderId: placed.orderId })).toMatchObject({ code: 40003 });

    // One idempotency key over either transport: the retry over REST is answered as the first call.
    const other = ok(await sendOrder(s, 'place', await sign(alice, { side: 'SELL', price: '261' })));
    const first = ok(await sendOrder(s, 'cancel', { orderId: other.orderId, idempotencyKey: 'ws-cancel-1' }));
    expect(first).toMatchObject({ status: 'CANCELED' });
    const retried = await alice.api.request('DELETE', `orders/${other.orderId}`, { idempotencyKey: 'ws-cancel-1' });
    expect(retried).toMatchObject({ code: 0, data: first });
    expect(ok(await sendOrder(s, 'cancel', { orderId: other.orderId, idempotencyKey: 'ws-cancel-1' }))).toEqual(first);
  });

  it('orders of a connection are handled in arrival order, and an order sent right after auth sees it', async () => {
    const s = await ws.open();
    // No wait for `authenticated`: the order follows the auth.
    s.send(authFrame(bob));
    const prices = ['140', '141', '142', '143', '144'];
    const orders = await Promise.all(prices.map((p) => sign(bob, { price: p })));
    for (const [i, o] of orders.entries()) s.send({ op: 'order', id: `seq-${i}`, action: 'place', body: o });
    s.send({ op: 'ping', id: 'after' });
    const results = await Promise.all(prices.map((_, i) => s.next((f) => f.type === 'result' && f.id === `seq-${i}`)));
    const ids = results.map((r) => Number(ok(r).orderId));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(results.map((r) => r.data.price)).toEqual(prices);
    // The results in the order the frames came.
    const resultOrder = s.frames.filter((f) => f.type === 'result').map((f) => f.id);
    expect(resultOrder).toEqual(prices.map((_, i) => `seq-${i}`));
    expect(s.frames.findIndex((f) => f.type === 'authenticated')).toBeLessThan(s.frames.findIndex((f) => f.type === 'result'));
    await s.next((f) => f.type === 'pong' && f.id === 'after');
  });

  it('pipelines a connection\'s orders: each applied in the order sent, refusals among them answered in place, a cancel after them sees them', async () => {
    const s = await ws.open();
    s.send(authFrame(bob));
    await s.next((f) => f.type === 'authenticated');
    const good = await Promise.all(['130', '131', '132'].map((p) => sign(bob, { price: p })));
    const forged = { ...(await sign(bob, { price: '133' })), signature: (await sign(alice, { price: '133' })).signature };
    s.send({ op: 'order', id: 'p0', action: 'place', body: good[0] });
    s.send({ op: 'order', id: 'p1', action: 'place', body: forged });
    s.send({ op: 'order', id: 'p2', action: 'place', body: good[1] });
    s.send({ op: 'order', id: 'p3', action: 'place', body: { message: 1 } });
    s.send({ op: 'order', id: 'p4', action: 'place', body: good[2] });
    const results = await Promise.all(['p0', 'p1', 'p2', 'p3', 'p4'].map((id) => s.next((f) => f.type === 'result' && f.id === id)));
    expect(results.map((r) => r.code)).toEqual([0, 51014, 0, 10000, 0]);
    const placed = [results[0], results[2], results[4]].map((r) => ok(r));
    expect(placed.map((o) => o.price)).toEqual(['130', '131', '132']);
    const ids = placed.map((o) => Number(o.orderId));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(s.frames.filter((f) => f.type === 'result').map((f) => f.id)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    // Sent right behind a place: the cancel finds the order it names.
    const more = await sign(bob, { price: '129' });
    s.send({ op: 'order', id: 'p5', action: 'place', body: more });
    const five = ok(await s.next((f) => f.type === 'result' && f.id === 'p5'));
    s.send({ op: 'order', id: 'c5', action: 'cancel', body: { orderId: five.orderId } });
    expect(ok(await s.next((f) => f.type === 'result' && f.id === 'c5'))).toMatchObject({ orderId: five.orderId, status: 'CANCELED' });
    for (const o of placed) s.send({ op: 'order', id: `x${o.orderId}`, action: 'cancel', body: { orderId: o.orderId } });
    for (const o of placed) expect(ok(await s.next((f) => f.type === 'result' && f.id === `x${o.orderId}`))).toMatchObject({ status: 'CANCELED' });
  });

  it('refuses with REST codes and words: before auth, a READ-only key, a deleted key, garbage bodies', async () => {
    const anon = await ws.open();
    expect(await sendOrder(anon, 'place', await sign(bob), 'early')).toEqual({
      type: 'result', id: 'early', code: 30001, msg: 'auth first: orders need an authenticated connection', data: {},
    });

    const reader = await trader(0n, ['READ']);
    const rs = await ws.authed(reader);
    const restRead = await reader.api.request('POST', 'orders', { body: await sign(reader) });
    expect(restRead).toMatchObject({ code: 30001 });
    expect(await sendOrder(rs, 'place', await sign(reader))).toMatchObject({ code: 30001, msg: restRead.msg, data: {} });

    const s = await ws.authed(bob);
    // Each garbage body gets REST's code, message and field: the same validator and words.
    const bodies: Array<[string, unknown, string]> = [
      ['place', { message: {}, signature: 'nope' }, 'orders'],
      ['place', { signature: '0x12' }, 'orders'],
      ['place', { message: {}, signature: '0x12', extra: 1 }, 'orders'],
      ['place', 'not an object', 'orders'],
      ['cancel', { orderId: '1'.repeat(30) }, ''],
      ['batch', { orders: [] }, 'orders/batch'],
    ];
    for (const [action, body, path] of bodies) {
      const r = await sendOrder(s, action, body);
      expect(r, JSON.stringify(body)).toMatchObject({ code: 10000, data: { field: expect.any(String) } });
      if (path) {
        // The SDK sends a string body as it is: JSON-encoded here to send the same value.
        const rest = await bob.api.request('POST', path, { body: typeof body === 'string' ? JSON.stringify(body) : body });
        expect(r, JSON.stringify(body)).toMatchObject({ code: rest.code, msg: rest.msg, data: rest.data });
      }
    }
    expect(await sendOrder(s, 'cancel', { orderId: '1'.repeat(30) })).toMatchObject({ data: { field: 'orderId' } });
    expect(await sendOrder(s, 'place', undefined)).toMatchObject({ code: 10000, data: { field: 'body' } });
    expect(await sendOrder(s, 'sell', {})).toMatchObject({ code: 10000, msg: 'action: must be one of place, batch, cancel, amend', data: { field: 'action' } });
    // A signature by another wallet: the service's refusal, as REST words it.
    const forged = { ...(await sign(bob)), signature: (await sign(alice)).signature };
    const restForged = await bob.api.request('POST', 'orders', { body: forged });
    expect(await sendOrder(s, 'place', forged)).toMatchObject({ code: restForged.code, msg: restForged.msg });
    // Without an id nothing is done: the answer could not be matched.
    const from = s.frames.length;
    s.send({ op: 'order', action: 'place', body: await sign(bob) });
    expect(await s.next((f) => f.type === 'result', { from })).toMatchObject({ code: 10000, data: { field: 'id' } });
    // Garbage bodies are answered, not counted as invalid frames: the connection is still open.
    s.send({ op: 'ping', id: 'still' });
    await s.next((f) => f.type === 'pong' && f.id === 'still');

    // A key deleted after its connection authenticated trades no more.
    const gone = await trader(0n);
    const gs = await ws.authed(gone);
    await h.keys.revoke(gone.apiKey);
    expect(await sendOrder(gs, 'cancel', { orderId: '1' })).toMatchObject({ code: 20002, msg: 'Unauthorized', data: {} });
    // And one whose TRADE permission was taken away.
    const narrowed = await trader(0n);
    const ns = await ws.authed(narrowed);
    expect(await sendOrder(ns, 'cancel', { orderId: '1' })).toMatchObject({ code: 40003 });
    await h.keys.update(narrowed.apiKey, { permissions: ['READ'] });
    expect(await sendOrder(ns, 'cancel', { orderId: '1' })).toMatchObject({ code: 30001, msg: 'TRADE permission required' });
    // No secret or signature in anything sent.
    const sent = JSON.stringify([anon.frames, rs.frames, s.frames, gs.frames]);
    for (const k of [bob, reader, gone]) expect(sent).not.toContain(k.apiSecret);
    expect(sent).not.toContain(forged.signature);
  });

  it('batch answers what POST orders/batch answers, each order on its own; a frame above 4 KiB is fine after auth only', async () => {
    const s = await ws.authed(bob);
    const orders = await Promise.all(Array.from({ length: 12 }, (_, i) => sign(bob, { price: String(120 + i) })));
    orders[3] = { ...orders[3], signature: orders[4].signature };
    const frame = JSON.stringify({ op: 'order', id: 'b1', action: 'batch', body: { orders } });
    expect(Buffer.byteLength(frame)).toBeGreaterThan(4_096);
    s.send(frame);
    const data = ok(await s.next((f) => f.type === 'result' && f.id === 'b1'));
    expect(data.results).toHaveLength(12);
    expect(data.results.map((r: { code: number }) => r.code === 0)).toEqual(orders.map((_, i) => i !== 3));
    expect(data.results[0].order).toMatchObject({ price: '120', status: 'NEW' });
    expect(data.results[3]).toMatchObject({ code: expect.any(Number), msg: expect.any(String) });
    // The same batch again over REST: every order a duplicate of the first, the refusal the same.
    const rest = await bob.api.post<{ results: Array<{ code: number; msg?: string; order?: Record<string, unknown> }> }>('orders/batch', { orders });
    expect(rest.results.map((r) => r.code)).toEqual(data.results.map((r: { code: number }) => r.code));
    expect(rest.results[3].msg).toBe(data.results[3].msg);
    expect(rest.results[0].order).toMatchObject({ orderId: data.results[0].order.orderId, duplicate: true });

    // Before auth the same frame closes the connection as any frame above 4 KiB does.
    const anon = await ws.open();
    anon.send(frame);
    expect(await anon.closed).toMatchObject({ code: 1009 });
  });

  it('amend answers what POST orders/amend answers: the order under the same id', async () => {
    const s = await ws.authed(bob);
    const placed = ok(await sendOrder(s, 'place', await sign(bob, { price: '130', size: '2' })));
    const built = await bob.api.post<{ typedData: Record<string, unknown> }>('orders/amend/build', { orderId: placed.orderId, price: '131' });
    const amendment = { message: built.typedData.message as Record<string, unknown>, signature: await bob.wallet.signTypedData(built.typedData as never) };
    const amended = ok(await sendOrder(s, 'amend', amendment));
    expect(amended).toMatchObject({ orderId: placed.orderId, price: '131', size: '2', status: 'NEW' });
    const listed = await bob.api.get<Record<string, unknown>>(`orders/${placed.orderId}`);
    expect(listed).toMatchObject({ orderId: placed.orderId, price: '131' });
    // A second use of the same signed amendment is refused as REST refuses it.
    const rest = await bob.api.request('POST', 'orders/amend', { body: amendment });
    const again = await sendOrder(s, 'amend', amendment);
    expect(again).toMatchObject({ code: rest.code, msg: rest.msg });
  });
});

describe.each(stackEngines('perp_ws_orders'))('perp order entry on the whole stack ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let socket: TestSocket | undefined;

  beforeAll(async () => {
    env = engine.env();
    t = await startTestStack(env);
  });
  afterAll(async () => {
    socket?.close();
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it("the role serves order entry on /v4/public/ws with the API's order service and key budget", async () => {
    const trader = t.demo.perp!.keys.trader;
    const wallet = privateKeyToAccount(t.demo.wallets[0].privateKey as `0x${string}`);
    const api = t.perpTrader!;
    // The demo market maker has quoted the book.
    await until(() => api.get<{ asks: string[][] }>('depth', { symbol: 'BTC-USD' }), (d) => d.asks.length >= 5);
    const { message, signature } = await api.signOrder(wallet, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.001' });
    const signed = { message, signature };
    socket = await openSocket(`${t.perpBaseUrl!.replace(/^http/, 'ws')}/v4/public/ws`);
    socket.send(authFrame(trader));
    const before = await api.request('GET', 'account');
    const result = await sendOrder(socket, 'place', signed, 'stack-1');
    expect(result).toMatchObject({ type: 'result', id: 'stack-1', code: 0, msg: 'ok', data: { symbol: 'BTC-USD', side: 'BUY', status: 'FILLED', filledSize: '0.001', duplicate: false } });
    expect(result.data.fills.length).toBeGreaterThan(0);
    const after = await api.request('GET', 'account');
    expect(after.rateLimit!.remaining).toBe(before.rateLimit!.remaining - 2);
    const again = await api.request<Record<string, unknown>>('POST', 'orders', { body: signed });
    expect(again.data).toMatchObject({ orderId: result.data.orderId, duplicate: true });
  });
});
