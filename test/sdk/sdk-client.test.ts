/**
 * The REST clients' behaviour around the API, against a real local node:http server: retries with
 * backoff (429 with Retry-After, 503, dropped connections) for idempotent calls only, errors that
 * carry the server's ids and never the secret, clock synchronisation, paging and the checks made
 * before sending.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  PerpApiError,
  PerpClient,
  StockApiError,
  StockClient,
  TokexApiError,
  TokexNetworkError,
  TokexValidationError,
  collectAll,
  paginate,
  pollUntil,
  resolveRetry,
  retryDelayMs,
  signPerpRequest,
  signStockRequest,
} from '@tokex/sdk';

const SECRET = 'sdk-test-secret-do-not-leak';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

type Handler = (req: Seen, res: http.ServerResponse) => void;

let server: http.Server;
let base = '';
let seen: Seen[] = [];
let handler: Handler = () => {};

function perpAnswer(res: http.ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => {
  seen = [];
});

const perp = (opts: Partial<ConstructorParameters<typeof PerpClient>[0]> = {}) =>
  new PerpClient({ baseUrl: base, apiKey: 'key-1', apiSecret: SECRET, chainId: 31337, retry: { baseDelayMs: 5 }, ...opts });
const stock = (opts: Partial<ConstructorParameters<typeof StockClient>[0]> = {}) =>
  new StockClient({ baseUrl: base, apiKey: 'key-1', apiSecret: SECRET, chainId: 31337, retry: { baseDelayMs: 5 }, ...opts });

describe('signing', () => {
  it('signs as contract.md §A and §B say, recomputed by hand', () => {
    const stockPayload = 'POST\n/api/v1/orders?a=1&b=2\n1700000000000\nn-1\n{"x":1}';
    expect(signStockRequest(SECRET, { method: 'post', uri: '/api/v1/orders?a=1&b=2', ts: '1700000000000', nonce: 'n-1', body: '{"x":1}' })).toBe(
      createHmac('sha256', SECRET).update(stockPayload).digest('hex'),
    );
    expect(signPerpRequest(SECRET, { ts: '1700000000000', method: 'get', requestPath: '/v4/public/trader/trades?limit=5&symbol=X', body: '' })).toBe(
      createHmac('sha256', SECRET).update('1700000000000GET/v4/public/trader/trades?limit=5&symbol=X').digest('base64'),
    );
    const req = perp({ now: () => 1_700_000_000_000 }).sign('GET', 'trades', { query: { symbol: 'X', limit: 5 } });
    expect(req.url).toBe(`${base}/v4/public/trader/trades?limit=5&symbol=X`);
    expect(req.headers['X-Api-Sign']).toBe(createHmac('sha256', SECRET).update('1700000000000GET/v4/public/trader/trades?limit=5&symbol=X').digest('base64'));
  });
});

describe('retries', () => {
  it('backs off with full jitter, capped, and honours Retry-After up to the policy limit', () => {
    const p = resolveRetry({ baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000, random: () => 0.5 });
    expect([0, 1, 2, 3, 4, 5].map((a) => retryDelayMs(p, a))).toEqual([50, 100, 200, 400, 500, 500]);
    expect(retryDelayMs(resolveRetry({ random: () => 0 }), 3)).toBe(0);
    expect(retryDelayMs(p, 0, 2)).toBe(2000);
    expect(retryDelayMs(p, 0, 6)).toBeUndefined();
  });

  it('retries a GET after 503s, signing each attempt afresh', async () => {
    let n = 0;
    handler = (_s, res) => (++n < 3 ? perpAnswer(res, 503, { code: 50002, msg: 'busy', requestId: `r${n}` }) : perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r3', data: { account: '0x1' } }));
    const account = await perp().getAccount();
    expect(account).toEqual({ account: '0x1' });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.headers['x-api-ts'])).size).toBe(3);
    expect(new Set(seen.map((s) => s.headers['x-api-sign'])).size).toBe(3);
  });

  it('waits Retry-After on a 429 before the next attempt', async () => {
    let n = 0;
    handler = (_s, res) =>
      ++n === 1 ? perpAnswer(res, 429, { code: 42900, msg: 'Too many requests', requestId: 'r1' }, { 'retry-after': '1' }) : perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r2', data: [] });
    expect(await perp().getInstruments()).toEqual([]);
    expect(seen).toHaveLength(2);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
  });

  it('throws at once when Retry-After is longer than the policy waits, with retryAfter', async () => {
    handler = (_s, res) => perpAnswer(res, 429, { code: 42900, msg: 'Too many requests', requestId: 'r-429' }, { 'retry-after': '120' });
    const err = await perp().getAccount().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PerpApiError);
    expect(err).toBeInstanceOf(TokexApiError);
    expect(err).toMatchObject({ httpStatus: 429, code: 42900, requestId: 'r-429', retryAfter: 120, msg: 'Too many requests' });
    expect(seen).toHaveLength(1);
  });

  it('does not resend a write without idempotency; resends one under its Idempotency-Key, the same key each time', async () => {
    handler = (_s, res) => perpAnswer(res, 503, { code: 50002, msg: 'busy', requestId: 'r' });
    await expect(perp().updateApiKey('k', { label: 'x' })).rejects.toMatchObject({ httpStatus: 503 });
    expect(seen).toHaveLength(1);
    seen = [];
    let n = 0;
    handler = (_s, res) => (++n < 2 ? perpAnswer(res, 503, { code: 50002, msg: 'busy', requestId: 'r' }) : perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r', data: { orderId: '7' } }));
    expect(await perp().cancelOrder('7')).toEqual({ orderId: '7' });
    expect(seen).toHaveLength(2);
    expect(seen[0].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1].headers['idempotency-key']).toBe(seen[0].headers['idempotency-key']);
  });

  it('resends a signed order as it is, with or without a clientOrderId: the same signed order is the same order', async () => {
    handler = (_s, res) => perpAnswer(res, 503, { code: 50002, msg: 'busy', requestId: 'r' });
    for (const message of [{ clientOrderId: '' }, { clientOrderId: 'mine-1' }]) {
      seen = [];
      await expect(perp({ retry: { retries: 2, baseDelayMs: 1 } }).submitOrder({ message, signature: '0x01' })).rejects.toBeInstanceOf(PerpApiError);
      expect(seen).toHaveLength(3);
      expect(new Set(seen.map((s) => s.body)).size).toBe(1);
    }
    // Retrying off: one attempt.
    seen = [];
    await expect(perp({ retry: false }).submitOrder({ message: { clientOrderId: '' }, signature: '0x01' })).rejects.toBeInstanceOf(PerpApiError);
    expect(seen).toHaveLength(1);
  });

  it('retries after a dropped connection for a GET, not for a plain POST', async () => {
    let n = 0;
    handler = (s, res) => {
      if (++n === 1) return void res.socket!.destroy();
      perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r', data: { serverTime: 5 } });
    };
    expect(await perp().getServerTime()).toEqual({ serverTime: 5 });
    expect(seen).toHaveLength(2);
    seen = [];
    handler = (_s, res) => void res.socket!.destroy();
    await expect(perp().prepareApprove({ address: '0x1', amount: '1' })).rejects.toMatchObject({ name: 'TokexNetworkError', sent: 'unknown' });
    expect(seen).toHaveLength(1);
    // Nothing listens: refused connections are retried, then reported as never sent.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const dead = new PerpClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', apiSecret: SECRET, chainId: 1, retry: { retries: 1, baseDelayMs: 1 } });
    await expect(dead.prepareApprove({ address: '0x1', amount: '1' })).rejects.toBeInstanceOf(TokexNetworkError);
    await expect(dead.prepareApprove({ address: '0x1', amount: '1' })).rejects.toMatchObject({ sent: false });
  });

  it('stock: retries a GET on 503 with a fresh nonce; raw request() never retries', async () => {
    let n = 0;
    handler = (_s, res) =>
      ++n < 2 ? perpAnswer(res, 503, { code: 503, errMsg: 'chain: RPC unavailable', uuid: 'u1' }) : perpAnswer(res, 200, { code: 200, errMsg: '', uuid: 'u2', data: [{ symbol: 'AAPL' }] });
    expect(await stock().getSymbols()).toEqual([{ symbol: 'AAPL' }]);
    expect(seen).toHaveLength(2);
    expect(seen[0].headers['x-api-nonce']).not.toBe(seen[1].headers['x-api-nonce']);
    seen = [];
    handler = (_s, res) => perpAnswer(res, 503, { code: 503, errMsg: 'down', uuid: 'u3' });
    expect(await stock().request('GET', '/api/v1/symbols')).toMatchObject({ httpStatus: 503, code: 503, uuid: 'u3' });
    expect(seen).toHaveLength(1);
    seen = [];
    await expect(stock({ retry: false }).getSymbols()).rejects.toBeInstanceOf(StockApiError);
    expect(seen).toHaveLength(1);
  });
});

describe('errors', () => {
  it('carry status, code, message and the server id; never the secret or a signature', async () => {
    handler = (_s, res) => perpAnswer(res, 400, { code: 404, errMsg: 'order: not found', uuid: 'uuid-404' });
    const e = (await stock().getOrder('9').catch((x: unknown) => x)) as StockApiError;
    expect(e).toBeInstanceOf(StockApiError);
    expect(e).toBeInstanceOf(TokexApiError);
    expect({ api: e.api, httpStatus: e.httpStatus, code: e.code, uuid: e.uuid, msg: e.msg, endpoint: e.endpoint }).toEqual({
      api: 'stock',
      httpStatus: 400,
      code: 404,
      uuid: 'uuid-404',
      msg: 'order: not found',
      endpoint: 'GET /api/v1/orders/9',
    });
    const sign = String(seen[0].headers['x-api-sign']);
    const shown = `${e.message} ${e.stack} ${JSON.stringify(e)} ${JSON.stringify(Object.entries(e))}`;
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain(sign);
  });

  it('an answer without the envelope is still an API error with its HTTP status', async () => {
    handler = (_s, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    await expect(perp({ retry: false }).getAccount()).rejects.toMatchObject({ httpStatus: 502, code: 502 });
  });
});

describe('clock', () => {
  it('perp: syncTime takes the offset from GET time and stamps requests with it', async () => {
    handler = (s, res) =>
      s.url.endsWith('/time') ? perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r', data: { serverTime: Date.now() + 60_000 } }) : perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r', data: {} });
    const c = perp();
    const offset = await c.syncTime();
    expect(Math.abs(offset - 60_000)).toBeLessThan(200);
    expect(seen[0].headers['x-api-sign']).toBeUndefined();
    await c.getAccount();
    expect(Math.abs(Number(seen[1].headers['x-api-ts']) - (Date.now() + 60_000))).toBeLessThan(500);
  });

  it('stock: syncTime reads the envelope\'s t (ms) before the Date header, even of a refused request', async () => {
    handler = (_s, res) => {
      // The header says two minutes behind, t says 61.234 s ahead: t wins, to the millisecond.
      res.writeHead(400, { 'content-type': 'application/json', date: new Date(Date.now() - 120_000).toUTCString() });
      res.end(JSON.stringify({ code: 401, errMsg: 'Unauthorized', uuid: 'u', t: Date.now() + 61_234 }));
    };
    const c = stock();
    const offset = await c.syncTime();
    expect(Math.abs(offset - 61_234)).toBeLessThan(200);
    expect(c.clockOffsetMs).toBe(offset);
  });

  it('stock: syncTime reads the Date header of a server without t, even of a refused request', async () => {
    handler = (_s, res) => {
      res.writeHead(400, { 'content-type': 'application/json', date: new Date(Date.now() - 120_000).toUTCString() });
      res.end(JSON.stringify({ code: 401, errMsg: 'Unauthorized', uuid: 'u' }));
    };
    const c = stock();
    const offset = await c.syncTime();
    expect(Math.abs(offset + 120_000)).toBeLessThan(1_600);
    expect(c.clockOffsetMs).toBe(offset);
    handler = (_s, res) => perpAnswer(res, 200, { code: 200, errMsg: '', uuid: 'u', data: {} });
    await c.getConfig();
    expect(Math.abs(Number(seen[1].headers['x-api-ts']) - (Date.now() - 120_000))).toBeLessThan(1_600);
  });
});

describe('price history', () => {
  it('sends interval 1m and endTime now (Unix seconds) when a call leaves them out, and what it is given otherwise', async () => {
    handler = (_s, res) => perpAnswer(res, 200, { code: 200, errMsg: '', uuid: 'u', data: { symbol: 'AAPL', interval: '1m', adjustment: 'all', candles: [] }, t: Date.now() });
    const c = stock();
    const before = Math.floor(Date.now() / 1000);
    await c.getPriceHistory('AAPL', { limit: 48 });
    const after = Math.floor(Date.now() / 1000);
    const q = new URL(seen[0].url, 'http://x').searchParams;
    expect(q.get('interval')).toBe('1m');
    expect(q.get('limit')).toBe('48');
    expect(Number(q.get('endTime'))).toBeGreaterThanOrEqual(before);
    expect(Number(q.get('endTime'))).toBeLessThanOrEqual(after);
    await c.getPriceHistory('AAPL', { interval: '1h', startTime: 1_700_000_000, endTime: 1_700_086_400, adjustment: 'raw' });
    expect(Object.fromEntries(new URL(seen[1].url, 'http://x').searchParams)).toEqual({ interval: '1h', startTime: '1700000000', endTime: '1700086400', adjustment: 'raw' });
  });
});

describe('paging', () => {
  it('walks every page of {total, rows} and stops at the end', async () => {
    const all = Array.from({ length: 250 }, (_, i) => ({ id: String(250 - i) }));
    handler = (s, res) => {
      const q = new URL(s.url, base).searchParams;
      const page = Number(q.get('page'));
      const limit = Number(q.get('limit'));
      perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r', data: { total: all.length, rows: all.slice((page - 1) * limit, page * limit) } });
    };
    const c = perp();
    const ids: string[] = [];
    for await (const t of c.paginate((p) => c.listTrades({ ...p, symbol: 'AAPL-USD' }))) ids.push((t as unknown as { id: string }).id);
    expect(ids).toEqual(all.map((r) => r.id));
    expect(seen.map((s) => new URL(s.url, base).searchParams.get('page'))).toEqual(['1', '2', '3']);
    expect(seen.every((s) => new URL(s.url, base).searchParams.get('symbol') === 'AAPL-USD')).toBe(true);
    seen = [];
    expect(await collectAll((p) => c.listTrades(p), { limit: 50, maxRows: 60 })).toHaveLength(60);
    expect(seen).toHaveLength(2);
  });

  it('an empty list is one request and no rows', async () => {
    let calls = 0;
    const rows: unknown[] = [];
    for await (const r of paginate(async () => (calls++, { total: 0, rows: [] }))) rows.push(r);
    expect([calls, rows.length]).toEqual([1, 0]);
  });
});

describe('checks before sending', () => {
  it('stock: a market buy without notional, a limit not DAY: refused, nothing sent', async () => {
    handler = (_s, res) => perpAnswer(res, 200, { code: 200, errMsg: '', uuid: 'u', data: {} });
    const c = stock();
    const deadline = Math.floor(Date.now() / 1000) + 600;
    await expect(c.orderCalldata({ symbol: 'AAPL', side: 'Buy', type: 'Market', quantity: '1', deadline })).rejects.toMatchObject({ name: 'TokexValidationError', field: 'notional' });
    await expect(c.sendOrder({ symbol: 'AAPL', side: 'buy', type: 'limit', quantity: '1', price: '10', timeInForce: 'GTC', deadline })).rejects.toMatchObject({ field: 'timeInForce' });
    await expect(c.sendOrder({ symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '10', deadline })).rejects.toBeInstanceOf(TokexValidationError);
    expect(seen).toHaveLength(0);
    await c.sendOrder({ symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '10', timeInForce: 'day', deadline });
    await c.orderCalldata({ symbol: 'AAPL', side: 'Sell', type: 'Market', quantity: '1', deadline });
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/orders/send', '/api/v1/orders/calldata']);
  });

  it('perp: a LIMIT without price, a size off the lot, a price off the tick: refused; the instruments are read once', async () => {
    const inst = { symbol: 'AAPL-USD', tickSize: '0.5', lotSize: '0.01', minSize: '0.01', maxSize: '1000' };
    handler = (s, res) =>
      perpAnswer(res, 200, { code: 0, msg: 'ok', requestId: 'r', data: s.url.includes('/instruments') ? [inst] : { typedData: { domain: { chainId: 31337 }, message: {} }, orderHash: '0x1' } });
    const c = perp();
    await expect(c.buildOrder({ symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1' })).rejects.toMatchObject({ field: 'price' });
    expect(seen).toHaveLength(0);
    await expect(c.buildOrder({ symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1.005', price: '100' })).rejects.toMatchObject({ field: 'size', message: expect.stringContaining('0.01') });
    await expect(c.buildOrder({ symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1', price: '100.25' })).rejects.toMatchObject({ field: 'price', message: expect.stringContaining('0.5') });
    await expect(c.buildOrder({ symbol: 'AAPL-USD', side: 'SELL', type: 'MARKET', size: '-1' })).rejects.toMatchObject({ field: 'size' });
    expect(seen.map((s) => s.url)).toEqual(['/v4/public/trader/instruments']);
    await c.buildOrder({ symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1.25', price: '100.5' });
    await c.buildOrder({ symbol: 'AAPL-USD', side: 'SELL', type: 'MARKET', size: '0.01' });
    expect(seen.map((s) => s.url)).toEqual(['/v4/public/trader/instruments', '/v4/public/trader/orders/build', '/v4/public/trader/orders/build']);
    seen = [];
    await perp({ validateOrders: false }).buildOrder({ symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1.005', price: '100' });
    expect(seen.map((s) => s.url)).toEqual(['/v4/public/trader/orders/build']);
  });
});

describe('flows: polling', () => {
  it('pollUntil waits through 404 (not indexed yet) and stops at another refusal', async () => {
    let n = 0;
    handler = (_s, res) =>
      ++n < 3
        ? perpAnswer(res, 404, { code: 404, errMsg: 'order: not found', uuid: `u${n}` })
        : perpAnswer(res, 200, { code: 200, errMsg: '', uuid: 'u', data: { orderId: '5', state: n < 4 ? 'open' : 'history' } });
    const c = stock();
    const seen: string[] = [];
    const done = await pollUntil(() => c.getOrder('5'), (o) => o.state === 'history', { intervalMs: 5, timeoutMs: 5_000, onWait: (s) => seen.push(s) });
    expect([done.state, n]).toEqual(['history', 4]);
    // What a progress display shows: each read that is not final, the last one excluded.
    expect(seen).toEqual(['not indexed yet', 'not indexed yet', 'open']);
    handler = (_s, res) => perpAnswer(res, 400, { code: 400, errMsg: 'orderId: bad', uuid: 'u' });
    await expect(pollUntil(() => c.getOrder('x'), () => true, { intervalMs: 5 })).rejects.toMatchObject({ code: 400 });
  });
});
