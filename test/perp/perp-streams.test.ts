/**
 * The perpetual API's WebSocket streams on the whole stack (contract.md §C, docs/streams.md): the
 * book's snapshot and deltas, the private streams of an order's life, a resume with `since`, and
 * hostile clients refused without disturbing others. SQLite; PostgreSQL with Redis (the streams
 * then go through Redis Streams) when DATABASE_URL and REDIS_URL are set.
 */
import { createHmac } from 'node:crypto';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { until } from '../support/poll.ts';
import { openSocket, type StreamFrame, type TestSocket } from '../support/ws-client.ts';

const SYMBOL = 'BTC-USD';

describe.each(stackEngines('perp_streams'))('perp streams ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let url: string;
  const sockets: TestSocket[] = [];
  const open = async (opts = {}) => {
    const s = await openSocket(url, opts);
    sockets.push(s);
    return s;
  };
  const authFrame = (ts = Date.now(), secret = t.demo.perp!.keys.trader.apiSecret) => ({
    op: 'auth',
    id: 'auth',
    apiKey: t.demo.perp!.keys.trader.apiKey,
    ts,
    sign: createHmac('sha256', secret).update(`${ts}GET/v4/public/ws`).digest('base64'),
  });
  const wallet = () => privateKeyToAccount(t.demo.wallets[0].privateKey as `0x${string}`);
  /** A resting buy 3 % under the mark, with its price rounded to the tick. */
  const restingPrice = async () => {
    const [ticker] = await t.perpTrader!.get<Array<{ markPrice: string }>>('tickers', { symbol: SYMBOL });
    // As the API writes decimals: no trailing zero ("94596", not "94596.0").
    return String(Math.floor(Number(ticker.markPrice) * 0.97 * 10) / 10);
  };

  beforeAll(async () => {
    env = { ...engine.env(), STREAM_PING_MS: '200', STREAM_IDLE_MS: '1500' };
    t = await startTestStack(env);
    url = `${t.perpBaseUrl!.replace(/^http/, 'ws')}/v4/public/ws`;
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it('depth: a snapshot, then the changed levels with seq + 1 each, showing an order resting and cancelled', async () => {
    // The demo market maker has quoted the book.
    await until(() => t.perpTrader!.get<{ bids: string[][] }>('depth', { symbol: SYMBOL }), (d) => d.bids.length >= 5);
    const s = await open();
    s.send({ op: 'subscribe', id: 'd', channel: 'depth', symbol: SYMBOL });
    const snap = await s.next((f) => f.type === 'subscribed');
    expect(snap).toMatchObject({ id: 'd', channel: 'depth', symbol: SYMBOL, seq: expect.any(Number) });
    expect(snap.data.bids.length).toBeGreaterThanOrEqual(5);
    const price = await restingPrice();
    const before = (snap.data.bids as string[][]).find(([p]) => p === price)?.[1] ?? '0';
    const placed = await t.perpTrader!.placeOrder<{ orderId: string }>(wallet(), { symbol: SYMBOL, side: 'BUY', type: 'LIMIT', size: '0.001', price });
    const expected = (Number(before) + 0.001).toFixed(4).replace(/\.?0+$/, '');
    await s.next((f) => f.type === 'update' && f.data.bids.some(([p, q]: string[]) => p === price && q === expected));
    const from = s.frames.length;
    await t.perpTrader!.delete(`orders/${placed.orderId}`);
    await s.next((f) => f.type === 'update' && f.data.bids.some(([p, q]: string[]) => p === price && q === before), { from });
    // Every frame of the stream follows the one before it.
    const seqs = s.frames.filter((f) => f.channel === 'depth').map((f) => f.seq!);
    expect(seqs.slice(1)).toEqual(seqs.slice(1).map((_, i) => seqs[0] + 1 + i));
  });

  it('private streams: an order, its cancel, a fill and the position, after a signed auth', async () => {
    const s = await open();
    s.send(authFrame());
    expect(await s.next((f) => f.type === 'authenticated')).toEqual({ type: 'authenticated', id: 'auth', account: t.demo.wallets[0].address.toLowerCase() });
    for (const channel of ['orders', 'account', 'fills', 'positions']) s.send({ op: 'subscribe', id: channel, channel });
    const accountSnap = await s.next((f) => f.type === 'subscribed' && f.channel === 'account');
    expect(accountSnap.data).toMatchObject({ account: t.demo.wallets[0].address.toLowerCase(), asset: 'USDC' });
    await s.next((f) => f.type === 'subscribed' && f.channel === 'positions');
    const price = await restingPrice();
    const placed = await t.perpTrader!.placeOrder<{ orderId: string }>(wallet(), { symbol: SYMBOL, side: 'BUY', type: 'LIMIT', size: '0.001', price, clientOrderId: 'stream-1' });
    const opened = await s.next((f) => f.channel === 'orders' && f.type === 'update' && f.data.orderId === placed.orderId);
    expect(opened.data).toMatchObject({ orderId: placed.orderId, clientOrderId: 'stream-1', symbol: SYMBOL, side: 'BUY', type: 'LIMIT', price, size: '0.001', filledSize: '0', status: 'NEW' });
    const reserved = await s.next((f) => f.channel === 'account' && f.type === 'update' && f.data.orderMargin !== '0');
    expect(Number(reserved.data.orderMargin)).toBeGreaterThan(0);
    await t.perpTrader!.delete(`orders/${placed.orderId}`);
    const cancelled = await s.next((f) => f.channel === 'orders' && f.data?.orderId === placed.orderId && f.data.status === 'CANCELED');
    expect(cancelled.data).toMatchObject({ status: 'CANCELED', reason: 'USER_CANCEL', remainingSize: '0' });
    expect(cancelled.seq).toBe(opened.seq! + 1);

    const from = s.frames.length;
    const market = await t.perpTrader!.placeOrder<{ orderId: string }>(wallet(), { symbol: SYMBOL, side: 'BUY', type: 'MARKET', size: '0.001' });
    const fill = await s.next((f) => f.channel === 'fills' && f.data?.orderId === market.orderId, { from });
    expect(fill.data).toMatchObject({ symbol: SYMBOL, side: 'BUY', role: 'TAKER', size: '0.001' });
    const position = await s.next((f) => f.channel === 'positions' && f.type === 'update' && f.data.symbol === SYMBOL, { from });
    expect(position.data).toMatchObject({ symbol: SYMBOL, side: 'LONG' });
    const rest = await t.perpTrader!.get<{ rows: Array<{ symbol: string; size: string }> }>('positions');
    expect(position.data.size).toBe(rest.rows.find((p) => p.symbol === SYMBOL)!.size);
  });

  it('a resume with since sends exactly what the client missed, then goes on live', async () => {
    const first = await open();
    first.send(authFrame());
    first.send({ op: 'subscribe', id: 'o', channel: 'orders' });
    const snap = await first.next((f) => f.type === 'subscribed' && f.channel === 'orders');
    first.close();
    await first.closed;
    const since = snap.seq!;
    const price = await restingPrice();
    const placed = await t.perpTrader!.placeOrder<{ orderId: string }>(wallet(), { symbol: SYMBOL, side: 'BUY', type: 'LIMIT', size: '0.001', price });
    await t.perpTrader!.delete(`orders/${placed.orderId}`);

    const again = await open();
    again.send(authFrame());
    again.send({ op: 'subscribe', id: 'r', channel: 'orders', since });
    await again.next((f) => f.channel === 'orders' && f.data?.status === 'CANCELED' && f.data.orderId === placed.orderId);
    const orders = again.frames.filter((f) => f.channel === 'orders');
    expect(orders.map((f) => [f.type, f.seq, f.resumed ?? null, f.data?.orderId ?? null, f.data?.status ?? null])).toEqual([
      ['subscribed', since, true, null, null],
      ['update', since + 1, null, placed.orderId, 'NEW'],
      ['update', since + 2, null, placed.orderId, 'CANCELED'],
    ]);
    again.send({ op: 'subscribe', id: 'old', channel: 'fills', since: 1 });
    expect(await again.next((f) => f.type === 'error' && f.id === 'old')).toMatchObject({ code: 10003 });
  });

  it('refuses bad input with the documented codes and stays up for everyone else', async () => {
    const bystander = await open();
    bystander.send({ op: 'subscribe', id: 'm', channel: 'mark', symbol: SYMBOL });
    await bystander.next((f) => f.type === 'subscribed');

    const s = await open();
    const error = async (msg: unknown, id?: string) => {
      const from = s.frames.length;
      s.send(msg);
      return s.next((f) => f.type === 'error' && (id === undefined || f.id === id), { from });
    };
    expect(await error('{not json')).toMatchObject({ code: 10000 });
    expect(await error({ op: 'subscribe', id: 'c', channel: 'nope', symbol: SYMBOL }, 'c')).toMatchObject({ code: 10000, msg: expect.stringContaining('channel') });
    expect(await error({ op: 'subscribe', id: 'y', channel: 'depth', symbol: 'DOGE-USD' }, 'y')).toMatchObject({ code: 40002 });
    expect(await error({ op: 'subscribe', id: 'p', channel: 'orders' }, 'p')).toMatchObject({ code: 30001 });
    expect(await error({ op: 'subscribe', id: 's', channel: 'depth', symbol: SYMBOL, since: 3 }, 's')).toMatchObject({ code: 10000 });
    expect(await error({ ...authFrame(Date.now(), 'not-the-secret'), id: 'bad' }, 'bad')).toMatchObject({ code: 20006 });
    expect(await error({ ...authFrame(Date.now() - 120_000), id: 'old' }, 'old')).toMatchObject({ code: 20005 });
    const good = authFrame();
    const other = await open();
    other.send(good);
    await other.next((f) => f.type === 'authenticated');
    expect(await error({ ...good, id: 'again' }, 'again')).toMatchObject({ code: 20007 });
    // No secret or signature in any frame the server sent.
    expect(JSON.stringify(s.frames)).not.toContain(t.demo.perp!.keys.trader.apiSecret);
    expect(JSON.stringify(s.frames)).not.toContain(good.sign);

    // A flood: an error frame, then a close with 1008 and the reason.
    for (let i = 0; i < 60; i++) s.send({ op: 'ping', id: `p${i}` });
    expect(await s.next((f) => f.type === 'error' && f.code === 42900)).toMatchObject({ msg: expect.stringContaining('messages a second') });
    expect(await s.closed).toEqual({ code: 1008, reason: 'message rate limit exceeded' });

    // A client that never answers pings and says nothing is closed after STREAM_IDLE_MS.
    const silent = await open({ autoPong: false });
    expect(await silent.closed).toEqual({ code: 1008, reason: 'silent for 1.5 s' });

    // The bystander's stream went on throughout.
    const from = bystander.frames.length;
    const next = await bystander.next((f) => f.type === 'update', { from });
    const seqs = bystander.frames.filter((f: StreamFrame) => f.channel === 'mark').map((f) => f.seq!);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
    expect(next.channel).toBe('mark');
  });
});
