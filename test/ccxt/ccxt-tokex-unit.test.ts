/**
 * The CCXT class without a venue: the request signature (checked with the SDK's own signer), the
 * error table, and the parsing of the venue's rows into CCXT's unified structures.
 */
import { describe, expect, it } from 'vitest';
import ccxt from 'ccxt';
import TokexPerp from 'ccxt-tokex';
import { signPerpRequest } from '@tokex/sdk';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { withdrawalIdOf, withdrawalType } from '../../src/perp/withdrawal-service.ts';

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
    // Each venue code with the CCXT error it becomes wherever it is answered.
    const mapped: Array<[number, typeof ccxt.BaseError]> = [
      [20002, ccxt.AuthenticationError], [20006, ccxt.AuthenticationError], [30001, ccxt.PermissionDenied], [42900, ccxt.RateLimitExceeded],
      [50001, ccxt.ExchangeNotAvailable], [50002, ccxt.ExchangeNotAvailable], [40002, ccxt.BadSymbol], [40003, ccxt.OrderNotFound],
      [51001, ccxt.InsufficientFunds], [51002, ccxt.InsufficientFunds], [51003, ccxt.OrderImmediatelyFillable], [51008, ccxt.DuplicateOrderId],
      [51010, ccxt.InvalidOrder], [59999, ccxt.ExchangeError],
    ];
    for (const [code, error] of mapped) expect(fail(code), `code ${code}`).toThrow(error);
    // 40000 is an order not found only on an order's path.
    expect(fail(40000, 'orders/12')).toThrow(ccxt.OrderNotFound);
    expect(fail(40000, 'approve/0xabc')).not.toThrow(ccxt.OrderNotFound);
    expect(fail(40000, 'approve/0xabc')).toThrow(ccxt.BadRequest);
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

  it('positions: timestamp is when the answer arrived; margin percentages of the notional; marginRatio only for isolated', () => {
    const ex = exchange();
    const row = { symbol: 'BTC-USD', side: 'LONG', size: '0.5', entryPrice: '60000', markPrice: '61000', notional: '30500', unrealisedPnl: '500', realisedPnl: '0', funding: '0', margin: '610', maintenanceMargin: '305', leverage: 50, liquidationPrice: '59000' };
    const before = Date.now();
    const isolated = ex.parsePosition({ ...row, marginMode: 'isolated' });
    const after = Date.now();
    expect(isolated.timestamp).toBeGreaterThanOrEqual(before);
    expect(isolated.timestamp).toBeLessThanOrEqual(after);
    expect(isolated.datetime).toBe(new Date(isolated.timestamp!).toISOString());
    // 610 / 30 500 = 0.02, 305 / 30 500 = 0.01, 305 / 610 = 0.5; percentage is CCXT's: 500 / 610 = 0.8196… cut to 4 places, × 100.
    expect(isolated).toMatchObject({ initialMarginPercentage: 0.02, maintenanceMarginPercentage: 0.01, marginRatio: 0.5, percentage: 81.96, collateral: 610 });
    const cross = ex.parsePosition({ ...row, marginMode: 'cross' });
    expect(cross.marginRatio).toBeUndefined();
    expect(cross.initialMarginPercentage).toBe(0.02);
    // A row that carries its own time keeps it.
    expect(ex.parsePosition({ ...row, marginMode: 'cross', ts: 1_700_000_000_000 }).datetime).toBe('2023-11-14T22:13:20.000Z');
  });

  it('ledger entries: account, before/after from balanceAfter (before ± amount = after), fee 0 USDC, CCXT types', () => {
    const ex = exchange();
    const row = (over: Record<string, unknown>) => ({ id: '12:FEE:T', type: 'FEE', symbol: 'BTC-USD', amount: '-0.030123', asset: 'USDC', ref: '7', ts: 1_700_000_000_000, account: '0xabc', balanceAfter: '9999.969877', ...over });
    const fee = ex.parseLedgerEntry(row({}));
    expect(fee).toEqual({
      info: row({}), id: '12:FEE:T', timestamp: 1_700_000_000_000, datetime: '2023-11-14T22:13:20.000Z', direction: 'out', account: '0xabc',
      referenceId: '7', referenceAccount: undefined, type: 'fee', currency: 'USDC', amount: 0.030123, before: 10000, after: 9999.969877, status: 'ok',
      fee: { cost: 0, currency: 'USDC' },
    });
    const credit = ex.parseLedgerEntry(row({ id: '13:REALISED_PNL:T', type: 'REALISED_PNL', amount: '12.5', balanceAfter: '10012.469877' }));
    expect([credit.direction, credit.before, credit.amount, credit.after]).toEqual(['in', 9999.969877, 12.5, 10012.469877]);
    const types = ['DEPOSIT', 'WITHDRAWAL', 'WITHDRAWAL_RELEASE', 'FEE', 'REALISED_PNL', 'FUNDING', 'LIQUIDATION_FEE', 'LIQUIDATION', 'ADL', 'BAD_DEBT', 'LIQUIDITY_ADD', 'LIQUIDITY_REMOVE', 'OTHER'];
    expect(types.map((type) => ex.parseLedgerEntry(row({ type })).type)).toEqual([
      'transaction', 'transaction', 'transaction', 'fee', 'trade', 'fee', 'fee', 'trade', 'trade', 'transfer', 'transfer', 'transfer', 'other',
    ]);
    // A server without balanceAfter: no invented balances.
    const bare = ex.parseLedgerEntry(row({ balanceAfter: undefined }));
    expect([bare.before, bare.after]).toEqual([undefined, undefined]);
  });

  it('deposits and withdrawals: network from the chain id, fee 0 USDC, updated', () => {
    const local = exchange();
    const deposit = local.parseTransaction({ kind: 'deposit', id: '0xd1-3', asset: 'USDC', amount: '10000', txHash: '0xd1', blockNumber: '12', status: 'CREDITED', reason: null, ts: 1_700_000_000_000 });
    expect(deposit).toMatchObject({ id: '0xd1-3', type: 'deposit', txid: '0xd1', amount: 10000, currency: 'USDC', status: 'ok', network: '31337', updated: 1_700_000_000_000, fee: { cost: 0, currency: 'USDC' } });
    expect(deposit.info).toEqual({ id: '0xd1-3', asset: 'USDC', amount: '10000', txHash: '0xd1', blockNumber: '12', status: 'CREDITED', reason: null, ts: 1_700_000_000_000 });
    const base = exchange({ options: { baseUrl: 'http://127.0.0.1:9', chainId: 8453 } });
    const w = base.parseTransaction({ withdrawalId: '0x01', clientWithdrawalId: 'w-1', address: '0xabc', asset: 'USDC', amount: '1.5', status: 'SENT', txHash: '0x02', blockNumber: null, reason: null, createdAt: 1_700_000_000_000, updatedAt: 1_700_000_005_000 });
    expect(w).toMatchObject({ id: '0x01', type: 'withdrawal', txid: '0x02', addressTo: '0xabc', amount: 1.5, status: 'pending', network: 'BASE', timestamp: 1_700_000_000_000, updated: 1_700_000_005_000, fee: { cost: 0, currency: 'USDC' } });
  });

  it('a currency code: USDC and USD list the collateral, another known code (BTC) an empty list without a request, an unknown one is ExchangeError', async () => {
    const ex = exchange();
    let requests = 0;
    ex.fetch = (async () => {
      requests++;
      throw new Error('no venue here');
    }) as typeof ex.fetch;
    expect(Object.keys(ex.currencies).sort()).toEqual(['BTC', 'USD']);
    expect(await ex.fetchLedger('BTC')).toEqual([]);
    expect(await ex.fetchDeposits('BTC')).toEqual([]);
    expect(await ex.fetchWithdrawals('BTC')).toEqual([]);
    expect(await ex.fetchDepositsWithdrawals('BTC')).toEqual([]);
    expect(requests).toBe(0);
    const unknown = await ex.fetchLedger('XYZ').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ccxt.ExchangeError);
    expect(unknown).not.toBeInstanceOf(ccxt.BadRequest);
    expect(String(unknown)).toContain('does not have currency code XYZ');
    // USD is the collateral: it asks the venue.
    await expect(ex.fetchLedger('USD')).rejects.toThrow('no venue here');
    expect(requests).toBe(1);
    // Withdrawing anything but the collateral is refused before any request.
    await expect(ex.withdraw('BTC', 1, '0xabc')).rejects.toBeInstanceOf(ccxt.BadRequest);
    expect(requests).toBe(1);
    expect([ex.has.fetchCurrencies, ex.has.fetchDepositsWithdrawals]).toEqual([true, true]);
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

  /** An exchange with a wallet whose requests are captured and never sent. */
  function capturing() {
    const ex = exchange({ privateKey: generatePrivateKey(), enableRateLimit: false, options: { baseUrl: 'http://127.0.0.1:9', chainId: 31337 } });
    const sent: Array<{ path: string; body: any }> = [];
    ex.fetch = (async (url: string, _method: string, _headers: unknown, body: string) => {
      sent.push({ path: new URL(url).pathname.replace('/v4/public/trader/', ''), body: body === undefined ? undefined : JSON.parse(body) });
      throw new Error('captured');
    }) as typeof ex.fetch;
    const build = async (call: () => Promise<unknown>) => {
      await expect(call()).rejects.toThrow('captured');
      return sent.at(-1)!;
    };
    return { ex, sent, build };
  }

  it('trigger orders: what orders/build is asked, as Binance maps stopLossPrice, takeProfitPrice, triggerPrice', async () => {
    const { ex, build } = capturing();
    const body = async (...args: Parameters<typeof ex.createOrder>) => {
      const r = await build(() => ex.createOrder(...args));
      expect(r.path).toBe('orders/build');
      return r.body;
    };
    expect(await body('BTC/USD:USD', 'market', 'sell', 0.01, undefined, { stopLossPrice: 59000, reduceOnly: true })).toEqual({ symbol: 'BTC-USD', side: 'SELL', type: 'STOP_MARKET', size: '0.01', triggerPrice: '59000', reduceOnly: true });
    expect(await body('BTC/USD:USD', 'limit', 'sell', 0.01, 61000.5, { takeProfitPrice: 61000, triggerPriceType: 'last' })).toEqual({ symbol: 'BTC-USD', side: 'SELL', type: 'TAKE_PROFIT_LIMIT', size: '0.01', price: '61000.5', triggerPrice: '61000', triggerBy: 'LAST' });
    expect((await body('BTC/USD:USD', 'market', 'buy', 0.01, undefined, { triggerPrice: 61000 })).type).toBe('STOP_MARKET');
    // triggerDirection: the type that fires on that move (a BUY stop and a SELL take-profit on a rise).
    expect((await body('BTC/USD:USD', 'market', 'buy', 0.01, undefined, { triggerPrice: 59000, triggerDirection: 'below' })).type).toBe('TAKE_PROFIT_MARKET');
    expect((await body('BTC/USD:USD', 'market', 'buy', 0.01, undefined, { triggerPrice: 61000, triggerDirection: 'above' })).type).toBe('STOP_MARKET');
    expect((await body('BTC/USD:USD', 'market', 'sell', 0.01, undefined, { triggerPrice: 61000, triggerDirection: 'above' })).type).toBe('TAKE_PROFIT_MARKET');
    expect((await body('BTC/USD:USD', 'limit', 'sell', 0.01, 58000, { triggerPrice: 59000, triggerDirection: 'down', workingType: 'CONTRACT_PRICE' }))).toMatchObject({ type: 'STOP_LIMIT', triggerBy: 'LAST' });
    expect(await body('BTC/USD:USD', 'market', 'sell', 0, undefined, { stopLossPrice: 59000, closePosition: true, triggerBy: 'mark' })).toEqual({ symbol: 'BTC-USD', side: 'SELL', type: 'STOP_MARKET', closePosition: true, triggerPrice: '59000', triggerBy: 'MARK' });
    expect((await body('BTC/USD:USD', 'stop_limit' as any, 'buy', 0.01, 61000, { triggerPrice: 60500, clientOrderId: 'c-9' }))).toEqual({ symbol: 'BTC-USD', side: 'BUY', type: 'STOP_LIMIT', size: '0.01', price: '61000', triggerPrice: '60500', clientOrderId: 'c-9' });
  });

  it('trigger orders refused before any request: index price, two trigger kinds, closePosition without one, a type without its trigger, attached SL/TP, off the tick', async () => {
    const { ex, sent } = capturing();
    const refused = (cls: unknown, ...args: Parameters<typeof ex.createOrder>) => expect(ex.createOrder(...args)).rejects.toBeInstanceOf(cls);
    await refused(ccxt.InvalidOrder, 'BTC/USD:USD', 'market', 'sell', 0.01, undefined, { stopLossPrice: 59000, triggerPriceType: 'index' });
    await refused(ccxt.InvalidOrder, 'BTC/USD:USD', 'market', 'sell', 0.01, undefined, { stopLossPrice: 59000, takeProfitPrice: 61000 });
    await refused(ccxt.InvalidOrder, 'BTC/USD:USD', 'market', 'sell', 0.01, undefined, { closePosition: true });
    await refused(ccxt.ArgumentsRequired, 'BTC/USD:USD', 'stop_market' as any, 'sell', 0.01, undefined, {});
    await refused(ccxt.InvalidOrder, 'BTC/USD:USD', 'stop_market' as any, 'sell', 0.01, undefined, { takeProfitPrice: 61000 });
    await refused(ccxt.NotSupported, 'BTC/USD:USD', 'limit', 'buy', 0.01, 60000, { stopLoss: { triggerPrice: 59000 } });
    await refused(ccxt.InvalidOrder, 'BTC/USD:USD', 'market', 'sell', 0.01, undefined, { stopLossPrice: 59000.05 });
    await refused(ccxt.InvalidOrder, 'BTC/USD:USD', 'market', 'sell', 0.01, undefined, { triggerPrice: 59000, triggerDirection: 'sideways' });
    await expect(ex.createOrders(Array.from({ length: 21 }, () => ({ symbol: 'BTC/USD:USD', type: 'limit' as const, side: 'buy' as const, amount: 0.01, price: 60000 })))).rejects.toBeInstanceOf(ccxt.BadRequest);
    await expect(ex.cancelOrders(Array.from({ length: 101 }, (_, i) => String(i + 1)))).rejects.toBeInstanceOf(ccxt.BadRequest);
    expect(sent).toEqual([]);
  });

  it('editOrder: orders/amend/build with the order id and the new total size and price, checked on the lot and tick first', async () => {
    const { ex, sent, build } = capturing();
    expect(await build(() => ex.editOrder('7', 'BTC/USD:USD', 'limit', 'buy', 0.02, 60000.5))).toEqual({ path: 'orders/amend/build', body: { orderId: '7', size: '0.02', price: '60000.5' } });
    expect((await build(() => ex.editOrder('7', 'BTC/USD:USD', 'limit', 'buy', undefined, 59999.9))).body).toEqual({ orderId: '7', price: '59999.9' });
    const before = sent.length;
    await expect(ex.editOrder('7', 'BTC/USD:USD', 'limit', 'buy', 0.00015)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(ex.editOrder('7', 'BTC/USD:USD', 'limit', 'buy', undefined, 60000.55)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(ex.editOrder('7', 'BTC/USD:USD', 'limit', 'buy')).rejects.toBeInstanceOf(ccxt.ArgumentsRequired);
    expect(sent.length).toBe(before);
    // fetchOrder: by id, or by clientOrderId (escaped in the path the signature covers).
    expect((await build(() => ex.fetchOrder('42'))).path).toBe('orders/42');
    expect((await build(() => ex.fetchOrder('', undefined, { clientOrderId: 'a/b c' }))).path).toBe('orders/client/a%2Fb%20c');
  });

  it('order entry results on the stream: data resolves the call, a code rejects it with the REST mapping, the one-off subscription goes', () => {
    const ex = exchange();
    const resolved: Array<[unknown, string]> = [];
    const rejected: Array<[unknown, string | undefined]> = [];
    const client: any = {
      subscriptions: { 'ccxt-5': { id: 'ccxt-5', messageHash: 'ccxt-5', action: 'place' }, 'ccxt-6': { id: 'ccxt-6' }, 'ccxt-7': { id: 'ccxt-7' } },
      resolve: (r: unknown, h: string) => resolved.push([r, h]),
      reject: (e: unknown, h?: string) => rejected.push([e, h]),
    };
    ex.handleMessage(client, { type: 'result', id: 'ccxt-5', code: 0, msg: 'ok', data: { orderId: '9' } });
    expect(resolved).toEqual([[{ orderId: '9' }, 'ccxt-5']]);
    expect(client.subscriptions['ccxt-5']).toBeUndefined();
    ex.handleMessage(client, { type: 'result', id: 'ccxt-6', code: 51001, msg: 'insufficient margin', data: {} });
    ex.handleMessage(client, { type: 'result', id: 'ccxt-7', code: 40000, msg: 'order not found', data: {} });
    expect(rejected[0][0]).toBeInstanceOf(ccxt.InsufficientFunds);
    expect(rejected[0][1]).toBe('ccxt-6');
    expect(rejected[1][0]).toBeInstanceOf(ccxt.OrderNotFound);
    expect(Object.keys(client.subscriptions)).toEqual([]);
  });

  it('withdraw: build, the wallet (privateKey) signs the Withdrawal, POST with exactly the signed fields; anything else is refused before signing', async () => {
    const pk = generatePrivateKey();
    const wallet = privateKeyToAccount(pk);
    const domain = { name: 'TokexPerp', version: '1', chainId: 31337, verifyingContract: '0x00000000000000000000000000000000000000A1' as const };
    const deadline = Math.floor(Date.now() / 1000) + 3_600;
    /** A venue whose build answers the key's wallet `account`'s withdrawal (`over` tampers with it). */
    const venue = (account: string, over: { chainId?: number; recipient?: string; amount?: bigint } = {}) => {
      const ex = exchange({ privateKey: pk, enableRateLimit: false, options: { baseUrl: 'http://127.0.0.1:9', chainId: 31337 } });
      const sent: Array<{ path: string; body: any }> = [];
      ex.fetch = (async (url: string, _method: string, _headers: unknown, raw: string) => {
        const path = new URL(url).pathname.replace('/v4/public/trader/', '');
        const body = JSON.parse(raw);
        sent.push({ path, body });
        if (path === 'account/withdrawals/build') {
          const withdrawalId = withdrawalIdOf(account, body.clientWithdrawalId);
          const message = { account, recipient: over.recipient ?? account, amount: over.amount ?? 1_500_000n, withdrawalId, deadline: BigInt(body.deadline ?? deadline) };
          return { code: 0, msg: 'ok', requestId: 'r', data: { typedData: withdrawalType.build({ ...domain, chainId: over.chainId ?? 31337 }, message), withdrawalId } };
        }
        const withdrawalId = withdrawalIdOf(account, body.clientWithdrawalId);
        return { code: 0, msg: 'ok', requestId: 'r', data: { withdrawalId, clientWithdrawalId: body.clientWithdrawalId, address: account.toLowerCase(), asset: 'USDC', amount: body.amount, status: 'PENDING', txHash: null, blockNumber: null, reason: null, createdAt: 1, updatedAt: 1, duplicate: false } };
      }) as typeof ex.fetch;
      return { ex, sent };
    };

    const { ex, sent } = venue(wallet.address);
    const w = await ex.withdraw('USDC', 1.5, wallet.address, undefined, { clientWithdrawalId: 'w-1', deadline });
    expect(w).toMatchObject({ id: withdrawalIdOf(wallet.address, 'w-1'), type: 'withdrawal', amount: 1.5, status: 'pending' });
    expect(sent.map((x) => x.path)).toEqual(['account/withdrawals/build', 'account/withdrawals']);
    expect(sent[0].body).toEqual({ amount: '1.5', clientWithdrawalId: 'w-1', deadline });
    expect(Object.keys(sent[1].body).sort()).toEqual(['amount', 'clientWithdrawalId', 'deadline', 'signature']);
    expect(sent[1].body).toMatchObject({ amount: '1.5', clientWithdrawalId: 'w-1', deadline });
    // The venue's own check of the signature: the wallet signed exactly this withdrawal.
    const message = { account: wallet.address, recipient: wallet.address, amount: 1_500_000n, withdrawalId: withdrawalIdOf(wallet.address, 'w-1'), deadline: BigInt(deadline) };
    await expect(withdrawalType.verifySigner(domain, message, sent[1].body.signature, wallet.address)).resolves.toBeUndefined();

    // No privateKey: AuthenticationError before any request.
    const keyless = venue(wallet.address);
    keyless.ex.privateKey = '';
    await expect(keyless.ex.withdraw('USDC', 1.5, wallet.address)).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    expect(keyless.sent).toEqual([]);
    // A privateKey that is not the key's wallet (a session key, say): built, never signed or sent.
    const other = venue(privateKeyToAccount(generatePrivateKey()).address);
    await expect(other.ex.withdraw('USDC', 1.5, wallet.address)).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    expect(other.sent.map((x) => x.path)).toEqual(['account/withdrawals/build']);
    // Another chain, recipient or amount than asked: ExchangeError, nothing posted.
    for (const over of [{ chainId: 1 }, { recipient: privateKeyToAccount(generatePrivateKey()).address }, { amount: 15_000_000n }]) {
      const tampered = venue(wallet.address, over);
      await expect(tampered.ex.withdraw('USDC', 1.5, wallet.address), Object.keys(over)[0]).rejects.toBeInstanceOf(ccxt.ExchangeError);
      expect(tampered.sent.map((x) => x.path)).toEqual(['account/withdrawals/build']);
    }
  });

  it('parses trigger orders: UNTRIGGERED is open, triggerPrice; a protective one is its stop-loss or take-profit', () => {
    const ex = exchange();
    const base = { orderId: '8', symbol: 'BTC-USD', side: 'SELL', timeInForce: 'IOC', price: null, size: '0.01', filledSize: '0', remainingSize: '0.01', avgPrice: null, fee: '0', reason: null, triggerBy: 'MARK', triggeredAt: null, createdAt: 1, updatedAt: 1 };
    const sl = ex.parseOrder({ ...base, type: 'STOP_MARKET', status: 'UNTRIGGERED', triggerPrice: '59000', reduceOnly: true, closePosition: false });
    expect(sl).toMatchObject({ type: 'stop_market', status: 'open', triggerPrice: 59000, stopLossPrice: 59000, takeProfitPrice: undefined, reduceOnly: true });
    const tp = ex.parseOrder({ ...base, type: 'TAKE_PROFIT_MARKET', status: 'UNTRIGGERED', triggerPrice: '61000', reduceOnly: false, closePosition: true, size: '0' });
    expect(tp).toMatchObject({ status: 'open', triggerPrice: 61000, takeProfitPrice: 61000, stopLossPrice: undefined, reduceOnly: true });
    // An entry stop (it opens a position) is a trigger order, neither stop-loss nor take-profit.
    const entry = ex.parseOrder({ ...base, side: 'BUY', type: 'STOP_MARKET', status: 'FILLED', triggerPrice: '61000', reduceOnly: false, closePosition: false, triggeredAt: 5 });
    expect(entry).toMatchObject({ status: 'closed', triggerPrice: 61000, stopLossPrice: undefined, takeProfitPrice: undefined });
  });
});
