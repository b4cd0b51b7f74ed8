/**
 * The sandbox's `stream-drop` fault (docs/sandbox.md) on the real stack over real sockets: every open
 * WebSocket of the asked API's stream closes as a venue restart closes it (1012 "service restart"),
 * or is cut (1006 at the client), the answer counts them, nothing is kept in GET /faults, and a
 * client reconnects and subscribes again at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket, type TestSocket } from '../support/ws-client.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { sandboxClient } from './sandbox-client.ts';

describe('sandbox stream-drop fault', () => {
  let t: TestStack;
  let sb: ReturnType<typeof sandboxClient>;
  const open: TestSocket[] = [];

  /** A socket subscribed to one public channel, once the endpoint has confirmed it. */
  const subscribed = async (api: 'stock' | 'perp', id: string): Promise<TestSocket> => {
    const s = await openSocket(api === 'stock' ? t.demo.stock.wsUrl : t.demo.perp!.wsUrl);
    open.push(s);
    if (api === 'stock') s.send({ op: 'subscribe', id, channel: 'quotes', symbol: 'AAPL' });
    else s.send({ op: 'subscribe', id, channel: 'tickers', symbol: 'BTC-USD' });
    await s.next((f) => f.type === 'subscribed' && f.id === id);
    return s;
  };

  beforeAll(async () => {
    t = await startTestStack();
    sb = sandboxClient(t);
  }, 180_000);

  afterAll(async () => {
    for (const s of open) s.close();
    await t?.stop();
  });

  it('closes every connection of both streams with 1012 "service restart"; each reconnects and subscribes again', async () => {
    const stock = [await subscribed('stock', 's1'), await subscribed('stock', 's2')];
    const perp = await subscribed('perp', 'p1');
    const fault = await sb.ok('POST', '/faults', { kind: 'stream-drop', stream: 'all' });
    expect({ ...fault, id: typeof fault.id, createdAt: typeof fault.createdAt }).toEqual({
      id: 'string',
      kind: 'stream-drop',
      createdAt: 'number',
      stream: 'all',
      mode: 'close',
      closeCode: 1012,
      dropped: { perp: 1, stock: 2 },
    });
    for (const s of [...stock, perp]) expect(await s.closed).toEqual({ code: 1012, reason: 'service restart' });
    // One-shot: it acted, and nothing stands.
    expect(await sb.ok('GET', '/faults')).toEqual({ faults: [] });

    // Reconnected and subscribed again, each stream flows on the new connection.
    const again = await subscribed('stock', 's3');
    const perpAgain = await subscribed('perp', 'p2');
    const from = (s: TestSocket) => s.frames.findIndex((f) => f.type === 'subscribed') + 1;
    expect(await again.next((f) => f.channel === 'quotes' && f.symbol === 'AAPL', { from: from(again) })).toMatchObject({ type: 'update' });
    expect(await perpAgain.next((f) => f.channel === 'tickers' && f.symbol === 'BTC-USD', { from: from(perpAgain) })).toMatchObject({ type: 'update' });
  });

  it('drops one API\'s stream only, the other\'s connections stay open and keep their subscriptions', async () => {
    const stock = await subscribed('stock', 's4');
    const perp = await subscribed('perp', 'p3');
    // The two from the test before are open too.
    const fault = await sb.ok('POST', '/faults', { kind: 'stream-drop', stream: 'perp' });
    expect(fault).toMatchObject({ kind: 'stream-drop', stream: 'perp', mode: 'close', closeCode: 1012, dropped: { perp: 2 } });
    expect(await perp.closed).toEqual({ code: 1012, reason: 'service restart' });
    // The stock connection still answers on its subscription.
    stock.send({ op: 'ping', id: 'still' });
    expect(await stock.next((f) => f.type === 'pong' && f.id === 'still')).toEqual({ type: 'pong', id: 'still' });
    expect(stock.ws.readyState).toBe(1);
  });

  it('terminate cuts the socket without a close frame: the client sees 1006', async () => {
    const stock = await subscribed('stock', 's5');
    const fault = await sb.ok('POST', '/faults', { kind: 'stream-drop', stream: 'stock', mode: 'terminate' });
    // The stock connections of the tests before (s3, s4) and this one.
    expect(fault).toEqual({ ...fault, stream: 'stock', mode: 'terminate', dropped: { stock: 3 } });
    expect(fault.closeCode).toBeUndefined();
    expect(await stock.closed).toEqual({ code: 1006, reason: '' });
    const back = await subscribed('stock', 's6');
    expect(back.ws.readyState).toBe(1);
  });

  it('answers 400 naming the field for a stream-drop without its stream or with another kind\'s field', async () => {
    expect(await sb.refusal('POST', '/faults', { kind: 'stream-drop' })).toBe('stream: required for kind stream-drop');
    expect(await sb.refusal('POST', '/faults', { kind: 'stream-drop', stream: 'fx' })).toBe('stream: must be one of stock, perp, all');
    expect(await sb.refusal('POST', '/faults', { kind: 'stream-drop', stream: 'stock', mode: 'gently' })).toBe('mode: must be one of close, terminate');
    expect(await sb.refusal('POST', '/faults', { kind: 'stream-drop', stream: 'stock', count: 1 })).toBe('count: not a field of kind stream-drop (it takes stream, mode)');
    expect(await sb.refusal('POST', '/faults', { kind: 'rate-limit', apiKey: 'k', count: 1, stream: 'all' })).toBe('stream: not a field of kind rate-limit (it takes apiKey, count, retryAfterSeconds)');
  });
});
