/**
 * The CCXT class without a venue: the request signature (checked with the SDK's own signer), the
 * error table, and the parsing of the venue's rows into CCXT's unified structures.
 */
import { describe, expect, it } from 'vitest';
import ccxt from 'ccxt';
import TokexPerp from 'ccxt-tokex';
import { signPerpRequest } from '@tokex/sdk';

const instrument = {
  symbol: 'BTC-USD', base: 'BTC', quote: 'USD', tickSize: '0.1', lotSize: '0.0001', minSize: '0.001', maxSize: '10000',
  maxLeverage: '50', initialMarginRatio: '0.02', maintenanceMarginRatio: '0.01', makerFeeRate: '0.0002', takerFeeRate: '0.0005', fundingInterval: 3_600_000,
};

function exchange(over: Record<string, unknown> = {}): TokexPerp {
  const ex = new TokexPerp({ apiKey: 'key-1', secret: 'secret-1', options: { baseUrl: 'http://127.0.0.1:9/' }, ...over });
  ex.setMarkets([ex.parseMarket(instrument)]);
  return ex;
}

describe('ccxt-tokex without a venue', () => {
  it('signs ts + METHOD + request_path (query sorted) + body, as the SDK does', () => {
    const ex = exchange();
    const get = ex.sign('depth', 'private', 'GET', { symbol: 'BTC-USD', limit: 5 });
    expect(get.url).toBe('http://127.0.0.1:9/v4/public/trader/depth?limit=5&symbol=BTC-USD');
    expect(get.body).toBeUndefined();
    const ts = get.headers['X-Api-Ts'];
    expect(ts).toMatch(/^\d{13}$/);
    expect(get.headers['X-Api-Key']).toBe('key-1');
    expect(get.headers['X-Chain-Id']).toBe('31337');
    expect(get.headers['X-Api-Sign']).toBe(signPerpRequest('secret-1', { ts, method: 'GET', requestPath: '/v4/public/trader/depth?limit=5&symbol=BTC-USD', body: '' }));

    const post = ex.sign('orders/{orderId}', 'private', 'DELETE', { orderId: '42' }, { 'Idempotency-Key': 'k-1' });
    expect(post.url).toBe('http://127.0.0.1:9/v4/public/trader/orders/42');
    expect(post.headers['Idempotency-Key']).toBe('k-1');
    // Two requests in the same millisecond never share a timestamp (the second would be a replay).
    expect(Number(post.headers['X-Api-Ts'])).toBeGreaterThan(Number(ts));

    const body = ex.sign('positions/adjust', 'private', 'POST', { symbol: 'BTC-USD', leverage: 5 });
    expect(body.body).toBe('{"symbol":"BTC-USD","leverage":5}');
    expect(body.headers['X-Api-Sign']).toBe(signPerpRequest('secret-1', { ts: body.headers['X-Api-Ts'], method: 'POST', requestPath: '/v4/public/trader/positions/adjust', body: body.body }));

    const pub = ex.sign('time', 'public', 'GET', {});
    expect(pub.headers['X-Api-Key']).toBeUndefined();
    expect(exchange({ options: { baseUrl: 'http://h:1', chainId: 8453 } }).sign('account', 'private', 'GET', {}).headers['X-Chain-Id']).toBe('8453');
  });

  it('maps the venue codes to CCXT errors', () => {
    const ex = exchange();
    const fail = (code: number, path = 'account') => () =>
      ex.handleErrors(400, '', `http://h/v4/public/trader/${path}`, 'GET', {}, '', { code, msg: 'm', data: {}, requestId: 'r' }, {}, undefined);
    expect(fail(20002)).toThrow(ccxt.AuthenticationError);
    expect(fail(20006)).toThrow(ccxt.AuthenticationError);
    expect(fail(30001)).toThrow(ccxt.PermissionDenied);
    expect(fail(42900)).toThrow(ccxt.RateLimitExceeded);
    expect(fail(50001)).toThrow(ccxt.ExchangeNotAvailable);
    expect(fail(50002)).toThrow(ccxt.ExchangeNotAvailable);
    expect(fail(40000, 'orders/12')).toThrow(ccxt.OrderNotFound);
    expect(fail(40000, 'approve/0xabc')).not.toThrow(ccxt.OrderNotFound);
    expect(fail(40000, 'approve/0xabc')).toThrow(ccxt.BadRequest);
    expect(fail(40002)).toThrow(ccxt.BadSymbol);
    expect(fail(40003)).toThrow(ccxt.OrderNotFound);
    expect(fail(51001)).toThrow(ccxt.InsufficientFunds);
    expect(fail(51002)).toThrow(ccxt.InsufficientFunds);
    expect(fail(51003)).toThrow(ccxt.OrderImmediatelyFillable);
    expect(fail(51008)).toThrow(ccxt.DuplicateOrderId);
    expect(fail(51010)).toThrow(ccxt.InvalidOrder);
    expect(fail(59999)).toThrow(ccxt.ExchangeError);
    expect(ex.handleErrors(200, '', 'http://h/x', 'GET', {}, '', { code: 0, msg: 'ok', data: {} }, {}, undefined)).toBeUndefined();
  });

  it('parses orders, fills and positions into unified structures', () => {
    const ex = exchange();
    const order = ex.parseOrder({
      orderId: '7', clientOrderId: 'c-1', symbol: 'BTC-USD', side: 'SELL', type: 'LIMIT', timeInForce: 'POST_ONLY', price: '60000.5', size: '0.0100',
      filledSize: '0.004', remainingSize: '0', avgPrice: '60000.5', fee: '0.048', status: 'EXPIRED', reason: 'IOC_REMAINDER', reduceOnly: true,
      createdAt: 1_700_000_000_000, updatedAt: 1_700_000_001_000, liquidation: false,
      fills: [{ tradeId: '9', orderId: '7', symbol: 'BTC-USD', side: 'SELL', role: 'MAKER', price: '60000.5', size: '0.004', notional: '240.002', fee: '0.048', realisedPnl: '0', ts: 1_700_000_000_500 }],
    });
    expect(order).toMatchObject({
      id: '7', clientOrderId: 'c-1', symbol: 'BTC/USD:USD', side: 'sell', type: 'limit', timeInForce: 'PO', postOnly: true, reduceOnly: true,
      price: 60000.5, amount: 0.01, filled: 0.004, remaining: 0, average: 60000.5, status: 'expired', timestamp: 1_700_000_000_000,
      datetime: '2023-11-14T22:13:20.000Z', lastUpdateTimestamp: 1_700_000_001_000, fee: { cost: 0.048, currency: 'USDC' },
    });
    expect(order.trades[0]).toMatchObject({ id: '9', order: '7', takerOrMaker: 'maker', amount: 0.004, cost: 240.002, side: 'sell' });
    const statuses = ['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED'].map((status) => ex.parseOrder({ orderId: '1', symbol: 'BTC-USD', status }).status);
    expect(statuses).toEqual(['open', 'open', 'closed', 'canceled', 'expired']);

    const position = ex.parsePosition({
      symbol: 'BTC-USD', side: 'SHORT', size: '0.5', entryPrice: '60000', markPrice: '61000', notional: '30500', unrealisedPnl: '-500', realisedPnl: '3',
      funding: '0', margin: '610', maintenanceMargin: '305', leverage: 50, marginMode: 'isolated', liquidationPrice: '61500',
    });
    expect(position).toMatchObject({ symbol: 'BTC/USD:USD', side: 'short', contracts: 0.5, contractSize: 1, entryPrice: 60000, markPrice: 61000, notional: 30500, unrealizedPnl: -500, leverage: 50, marginMode: 'isolated', liquidationPrice: 61500, initialMargin: 610 });
  });

  it('streams: depth snapshot and deltas, a skipped seq or a new epoch subscribes again, a refusal rejects', () => {
    const ex = exchange();
    const sent: any[] = [];
    const resolved: Array<[unknown, string]> = [];
    const rejected: Array<[unknown, string | undefined]> = [];
    const client: any = {
      subscriptions: { 'depth:BTC-USD': { id: 'ccxt-1', channel: 'depth', symbol: 'BTC-USD', messageHash: 'orderbook:BTC/USD:USD' } },
      send: (m: unknown) => (sent.push(m), Promise.resolve()),
      resolve: (r: unknown, h: string) => resolved.push([r, h]),
      reject: (e: unknown, h?: string) => rejected.push([e, h]),
      onError: () => undefined,
    };
    ex.handleMessage(client, { type: 'subscribed', id: 'ccxt-1', channel: 'depth', symbol: 'BTC-USD', seq: '1795439110973012', data: { bids: [['100.1', '2'], ['100', '1']], asks: [['101', '3']], ts: 1_700_000_000_000 } });
    const book: any = ex.orderbooks['BTC/USD:USD'];
    expect(resolved.at(-1)).toEqual([book, 'orderbook:BTC/USD:USD']);
    expect(book.nonce).toBe(1795439110973012);
    ex.handleMessage(client, { type: 'update', channel: 'depth', symbol: 'BTC-USD', seq: 1795439110973013, data: { bids: [['100.1', '0'], ['100.5', '4']], asks: [], ts: 1_700_000_000_100 } });
    expect(book.bids.slice()).toEqual([[100.5, 4], [100, 1]]);
    expect(book.asks.slice()).toEqual([[101, 3]]);
    expect(book.datetime).toBe('2023-11-14T22:13:20.100Z');
    // seq 15 after 13: a hole; the book is not touched and a fresh snapshot is asked for.
    ex.handleMessage(client, { type: 'update', channel: 'depth', symbol: 'BTC-USD', seq: 1795439110973015, data: { bids: [['99', '9']], asks: [], ts: 1 } });
    expect(book.bids.slice()).toEqual([[100.5, 4], [100, 1]]);
    expect(sent).toEqual([{ op: 'unsubscribe', channel: 'depth', symbol: 'BTC-USD' }, { op: 'subscribe', id: 'ccxt-1', channel: 'depth', symbol: 'BTC-USD' }]);
    // Updates before the new snapshot are ignored; the snapshot replaces the book.
    ex.handleMessage(client, { type: 'update', channel: 'depth', symbol: 'BTC-USD', seq: 1795439110973016, data: { bids: [['98', '1']], asks: [], ts: 1 } });
    ex.handleMessage(client, { type: 'subscribed', id: 'ccxt-1', channel: 'depth', symbol: 'BTC-USD', seq: 1795439110973020, data: { bids: [['97', '1']], asks: [], ts: 2 } });
    expect((ex.orderbooks['BTC/USD:USD'] as any).bids.slice()).toEqual([[97, 1]]);
    // A new epoch: the server ended the stream; subscribe again without unsubscribing.
    sent.length = 0;
    ex.handleMessage(client, { type: 'error', code: 10003, msg: 'stream restarted', channel: 'depth', symbol: 'BTC-USD' });
    expect(sent).toEqual([{ op: 'subscribe', id: 'ccxt-2', channel: 'depth', symbol: 'BTC-USD' }]);
    expect(rejected).toEqual([]);
    // A refused subscribe rejects its watchers with the mapped class and is forgotten.
    client.subscriptions['trades:XYZ-USD'] = { id: 'ccxt-9', channel: 'trades', symbol: 'XYZ-USD', messageHash: 'trades:XYZ/USD:USD' };
    ex.handleMessage(client, { type: 'error', id: 'ccxt-9', code: 40002, msg: 'unknown symbol' });
    expect(rejected[0][0]).toBeInstanceOf(ccxt.BadSymbol);
    expect(rejected[0][1]).toBe('trades:XYZ/USD:USD');
    expect(client.subscriptions['trades:XYZ-USD']).toBeUndefined();
  });

  it('streams: the trades snapshot is kept oldest first, updates appended', () => {
    const ex = exchange();
    const resolved: any[] = [];
    const client: any = { subscriptions: {}, resolve: (r: unknown) => resolved.push(r), reject: () => undefined, send: () => Promise.resolve() };
    const row = (id: string, ts: number, side: string) => ({ id, symbol: 'BTC-USD', price: '60000.1', size: '0.01', side, ts, liquidation: false });
    ex.handleMessage(client, { type: 'subscribed', channel: 'trades', symbol: 'BTC-USD', seq: 5, data: [row('3', 3000, 'SELL'), row('2', 2000, 'BUY')] });
    ex.handleMessage(client, { type: 'update', channel: 'trades', symbol: 'BTC-USD', seq: 6, data: row('4', 4000, 'BUY') });
    const cache = resolved.at(-1);
    expect(cache.rows.map((x: any) => [x.id, x.side, x.price, x.amount, x.symbol])).toEqual([
      ['2', 'buy', 60000.1, 0.01, 'BTC/USD:USD'],
      ['3', 'sell', 60000.1, 0.01, 'BTC/USD:USD'],
      ['4', 'buy', 60000.1, 0.01, 'BTC/USD:USD'],
    ]);
    expect(ex.describe().has.watchTrades).toBe(true);
    expect((ex as any).wsUrl()).toBe('ws://127.0.0.1:9/v4/public/ws');
  });

  it('streams: private orders keep the latest row per order; a skipped seq resumes with since, a new epoch asks for a snapshot', () => {
    const ex = exchange();
    const sent: any[] = [];
    const resolved: Array<[any, string]> = [];
    const client: any = {
      subscriptions: { orders: { id: 'ccxt-0', channel: 'orders', messageHash: 'orders' } },
      futures: {},
      send: (m: unknown) => (sent.push(m), Promise.resolve()),
      resolve: (r: unknown, h: string) => resolved.push([r, h]),
      reject: () => undefined,
      onError: () => undefined,
    };
    const order = (orderId: string, status: string, filledSize = '0') => ({ orderId, symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', price: '60000', size: '0.01', filledSize, status, createdAt: 1, updatedAt: 2 });
    ex.handleMessage(client, { type: 'subscribed', id: 'ccxt-0', channel: 'orders', seq: 100, data: [order('1', 'NEW'), order('2', 'NEW')] });
    expect(resolved.map(([, h]) => h)).toEqual(['orders', 'orders:BTC/USD:USD']);
    const cache = resolved[0][0];
    expect(cache.takeFresh().map((o: any) => [o.id, o.status])).toEqual([['1', 'open'], ['2', 'open']]);
    ex.handleMessage(client, { type: 'update', channel: 'orders', seq: 101, data: order('1', 'PARTIALLY_FILLED', '0.004') });
    ex.handleMessage(client, { type: 'update', channel: 'orders', seq: 102, data: order('1', 'CANCELED', '0.004') });
    // One row per order, the latest; newUpdates answers only what changed since the last read.
    expect(cache.rows.map((o: any) => [o.id, o.status, o.filled])).toEqual([['2', 'open', 0], ['1', 'canceled', 0.004]]);
    expect(cache.takeFresh().map((o: any) => o.id)).toEqual(['1']);
    // seq 104 after 102: the venue replays from 102 on a resubscribe with since; the hole's row is not applied.
    ex.handleMessage(client, { type: 'update', channel: 'orders', seq: 104, data: order('3', 'NEW') });
    expect(sent).toEqual([{ op: 'unsubscribe', channel: 'orders' }, { op: 'subscribe', id: 'ccxt-1', channel: 'orders', since: 102 }]);
    expect(cache.rows.map((o: any) => o.id)).toEqual(['2', '1']);
    ex.handleMessage(client, { type: 'subscribed', id: 'ccxt-1', channel: 'orders', seq: 102, resumed: true });
    ex.handleMessage(client, { type: 'update', channel: 'orders', seq: 103, data: order('4', 'NEW') });
    ex.handleMessage(client, { type: 'update', channel: 'orders', seq: 104, data: order('3', 'NEW') });
    // A resume keeps what was kept and adds the replayed rows in order.
    expect(cache.rows.map((o: any) => o.id)).toEqual(['2', '1', '4', '3']);
    sent.length = 0;
    ex.handleMessage(client, { type: 'error', code: 10003, msg: 'since is older than the retained updates', channel: 'orders' });
    expect(sent).toEqual([{ op: 'unsubscribe', channel: 'orders' }, { op: 'subscribe', id: 'ccxt-2', channel: 'orders' }]);
  });

  it('markets: symbol, precision and limits from the instrument', () => {
    const m = exchange().market('BTC/USD:USD');
    expect(m).toMatchObject({ id: 'BTC-USD', settle: 'USD', swap: true, linear: true, contractSize: 1, precision: { amount: 0.0001, price: 0.1 }, limits: { amount: { min: 0.001, max: 10000 }, leverage: { min: 1, max: 50 } } });
  });
});
