/**
 * Authentication and permission of the perpetual API over real HTTP: each failure answers HTTP 401
 * with its own documented 20xxx code, a valid key without the route's permission HTTP 403 30001,
 * and the public market-data routes answer without any header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPerp } from '../../src/auth/hmac.ts';
import { PerpClient, type PerpResponse } from '@tokex/sdk';
import { HARNESS_CHAIN_ID, perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';
import { until } from '../support/poll.ts';

interface Raw {
  status: number;
  body: { code: number; msg: string; data: unknown; requestId: string };
  headers: Headers;
}

async function send(url: string, init: RequestInit = {}): Promise<Raw> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Raw['body'], headers: res.headers };
}

function expectError(r: Raw | PerpResponse, http: number, code: number): void {
  const status = 'status' in r ? r.status : r.httpStatus;
  const body = 'body' in r ? r.body : r;
  expect({ status, code: body.code }).toEqual({ status: http, code });
  expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
}

describe.each(perpHarnessVariants())('perp API authentication ($name)', (variant) => {
  let h: PerpHarness;
  let trader: { apiKey: string; apiSecret: string; client: PerpClient };
  let reader: { apiKey: string; apiSecret: string; client: PerpClient };
  const api = (path: string) => `${h.baseUrl}/v4/public/trader/${path}`;

  beforeAll(async () => {
    h = await variant.start();
    trader = await h.key();
    reader = await h.key({ permissions: ['READ'] });
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** A request signed by `trader`, with its headers then changed by `edit`. */
  async function signed(method: string, path: string, edit: (headers: Record<string, string>) => void = () => {}, opts: { body?: unknown; ts?: number } = {}): Promise<Raw> {
    const req = trader.client.sign(method, path, opts);
    edit(req.headers);
    return send(req.url, { method: req.method, headers: req.headers, body: req.body });
  }

  it('answers GET time without any header, with the rate-limit headers', async () => {
    const before = Date.now();
    const r = await send(api('time'));
    expect(r.status).toBe(200);
    expect(r.body.code).toBe(0);
    expect(r.body.msg).toBe('ok');
    const { serverTime } = r.body.data as { serverTime: number };
    expect(serverTime).toBeGreaterThanOrEqual(before);
    expect(serverTime).toBeLessThanOrEqual(Date.now());
    expect(r.headers.get('x-ratelimit-limit')).toBe('120');
    expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeLessThan(120);
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    expect(await PerpClient.serverTime(h.baseUrl)).toBeGreaterThanOrEqual(serverTime);
  });

  it('serves the instruments from the engine configs as decimal strings to a signed request', async () => {
    const list = await trader.client.get<Array<Record<string, unknown>>>('instruments');
    expect(list.map((i) => i.symbol)).toEqual(['BTC-USD', 'ETH-USD', 'AAPL-USD', 'TSLA-USD', 'NVDA-USD']);
    expect(list[0]).toEqual({
      symbol: 'BTC-USD',
      base: 'BTC',
      quote: 'USD',
      tickSize: '0.1',
      lotSize: '0.0001',
      minSize: '0.001',
      maxSize: '10000',
      maxLeverage: '50',
      initialMarginRatio: '0.02',
      maintenanceMarginRatio: '0.01',
      makerFeeRate: '0.0002',
      takerFeeRate: '0.0005',
      fundingInterval: 3600 * 1000,
    });
    // The query is part of the signature, sorted by name.
    const one = await trader.client.get<Array<{ symbol: string; maxLeverage: string; minSize: string }>>('instruments', { symbol: 'AAPL-USD' });
    expect(one).toEqual([expect.objectContaining({ symbol: 'AAPL-USD', maxLeverage: '20', minSize: '0.01' })]);
    expectError(await trader.client.request('GET', 'instruments', { query: { symbol: 'DOGE-USD' } }), 404, 40002);
  });

  it('refuses missing, malformed and wrong X-Api-Sign with 20001, 20001 and 20006', async () => {
    expectError(await send(api('instruments')), 401, 20001);
    expectError(await signed('GET', 'instruments', (hd) => delete hd['X-Api-Sign']), 401, 20001);
    expectError(await signed('GET', 'instruments', (hd) => (hd['X-Api-Sign'] = 'not-base64!')), 401, 20001);
    expectError(await signed('GET', 'instruments', (hd) => (hd['X-Api-Sign'] = (hd['X-Api-Sign'][0] === 'A' ? 'B' : 'A') + hd['X-Api-Sign'].slice(1))), 401, 20006);
    const wrongSecret = signPerp('another secret', { ts: String(Date.now()), method: 'GET', requestPath: '/v4/public/trader/instruments', body: '' });
    expectError(await signed('GET', 'instruments', (hd) => (hd['X-Api-Sign'] = wrongSecret)), 401, 20006);
    // Signed for another path, method or body: the signature does not match this request.
    const other = trader.client.sign('GET', 'api-keys');
    expectError(await signed('GET', 'instruments', (hd) => (hd['X-Api-Sign'] = other.headers['X-Api-Sign'])), 401, 20006);
    expectError(await signed('GET', 'instruments', (hd) => delete hd['X-Api-Key']), 401, 20001);
    expectError(await signed('GET', 'instruments', (hd) => delete hd['X-Api-Ts']), 401, 20001);
    expectError(await signed('GET', 'instruments', (hd) => (hd['X-Api-Ts'] = '12e5')), 401, 20001);
  });

  it('says what a refused signature should have covered, and that a query signed as sent must be sorted, accepting neither', async () => {
    const unsortedPath = '/v4/public/trader/instruments?symbol=BTC-USD&_=1';
    const sortedPath = '/v4/public/trader/instruments?_=1&symbol=BTC-USD';
    const headersFor = (requestPath: string, secret = trader.apiSecret) => {
      const ts = String(Date.now());
      return { 'X-Api-Key': trader.apiKey, 'X-Api-Ts': ts, 'X-Api-Sign': signPerp(secret, { ts, method: 'GET', requestPath, body: '' }), 'X-Chain-Id': String(HARNESS_CHAIN_ID) };
    };
    // Signed over the query in the order the URL has it: refused, and told to sort it.
    const asSent = await send(`${h.baseUrl}${unsortedPath}`, { headers: headersFor(unsortedPath) });
    expectError(asSent, 401, 20006);
    expect(asSent.body.msg).toBe(`signature mismatch: it was made over the query as sent; sign the query sorted by parameter name: X-Api-Ts + GET + ${sortedPath}`);
    // Another secret over the same text: the generic refusal, naming what is signed and nothing more.
    const wrong = await send(`${h.baseUrl}${unsortedPath}`, { headers: headersFor(unsortedPath, 'another secret') });
    expectError(wrong, 401, 20006);
    expect(wrong.body.msg).toBe(`signature mismatch: expected HMAC-SHA256 with the API secret over X-Api-Ts + GET + ${sortedPath}`);
    expect(wrong.body.msg).not.toContain(trader.apiSecret);
    // The same URL signed over the sorted query is authenticated: the route's own validation answers
    // (`_` is no parameter of instruments).
    const sorted = await send(`${h.baseUrl}${unsortedPath}`, { headers: headersFor(sortedPath) });
    expectError(sorted, 400, 10000);
    // A body is named as part of the signed text.
    const post = trader.client.sign('POST', 'orders/cancel-all', { body: { symbol: 'BTC-USD' } });
    const tampered = await send(post.url, { method: 'POST', headers: { ...post.headers, 'X-Api-Sign': headersFor('/v4/public/trader/orders/cancel-all')['X-Api-Sign'] }, body: post.body });
    expectError(tampered, 401, 20006);
    expect(tampered.body.msg).toBe('signature mismatch: expected HMAC-SHA256 with the API secret over X-Api-Ts + POST + /v4/public/trader/orders/cancel-all + the body as sent');
  });

  it('refuses a missing or foreign X-Chain-Id with 20008', async () => {
    expectError(await signed('GET', 'instruments', (hd) => delete hd['X-Chain-Id']), 401, 20008);
    expectError(await signed('GET', 'instruments', (hd) => (hd['X-Chain-Id'] = '1')), 401, 20008);
    const elsewhere = await h.key({ chainId: 1 });
    expectError(await elsewhere.client.request('GET', 'instruments'), 401, 20008);
  });

  it('refuses a timestamp more than 45 s away in either direction with 20005', async () => {
    const now = Date.now();
    expectError(await signed('GET', 'instruments', () => {}, { ts: now - 46_000 }), 401, 20005);
    expectError(await signed('GET', 'instruments', () => {}, { ts: now + 46_000 }), 401, 20005);
    expect((await signed('GET', 'instruments', () => {}, { ts: now - 40_000 })).status).toBe(200);
  });

  it('refuses the same signature again inside the window with 20007', async () => {
    const req = trader.client.sign('GET', 'api-keys');
    const first = await send(req.url, { method: req.method, headers: req.headers });
    expect(first.status).toBe(200);
    expectError(await send(req.url, { method: req.method, headers: req.headers }), 401, 20007);
    // A fresh signature (another timestamp) is a new request.
    const again = trader.client.sign('GET', 'api-keys', { ts: Number(req.headers['X-Api-Ts']) + 1 });
    expect((await send(again.url, { method: again.method, headers: again.headers })).status).toBe(200);
  });

  it('refuses an unknown, deleted or expired key and a foreign address with 20002, 20002, 20003 and 20004', async () => {
    expectError(await h.client('f'.repeat(32), 'secret').request('GET', 'instruments'), 401, 20002);
    const doomed = await h.key();
    expect((await doomed.client.request('GET', 'instruments')).code).toBe(0);
    await h.keys.revoke(doomed.apiKey);
    expectError(await doomed.client.request('GET', 'instruments'), 401, 20002);
    const stock = await h.keys.create({ api: 'stock', permission: 'WRITABLE', ipWhitelist: ['127.0.0.1'], chainId: HARNESS_CHAIN_ID, product: 'STOCK' });
    expectError(await h.client(stock.key.apiKey, stock.apiSecret).request('GET', 'instruments'), 401, 20002);
    // Far enough ahead that a busy machine still creates it in the future (creation refuses a past
    // expiry); then time must pass for it to expire: until the clock the server reads is past it.
    const expiresAt = Date.now() + 1_500;
    const soon = await h.key({ expiresAt });
    await until(async () => Date.now(), (now) => now > expiresAt + 1, 20_000);
    expectError(await soon.client.request('GET', 'instruments'), 401, 20003);
    const fenced = await h.key({ ipWhitelist: ['10.1.2.3'] });
    expectError(await fenced.client.request('GET', 'instruments'), 401, 20004);
    const local = await h.key({ ipWhitelist: ['127.0.0.1', '::1'] });
    expect((await local.client.request('GET', 'instruments')).code).toBe(0);
  });

  it('answers 403 30001 to a key without the route\'s permission, after authenticating it', async () => {
    expect((await reader.client.request('GET', 'api-keys')).code).toBe(0);
    const r = await reader.client.request('PATCH', `api-keys/${reader.apiKey}`, { body: { label: 'x' } });
    expectError(r, 403, 30001);
    expect(r.msg).toBe('TRADE permission required');
    expectError(await reader.client.request('DELETE', `api-keys/${reader.apiKey}`), 403, 30001);
    // Authentication comes first: a bad signature on the same route is 401, not 403.
    const bad = reader.client.sign('PATCH', `api-keys/${reader.apiKey}`, { body: { label: 'x' } });
    bad.headers['X-Api-Sign'] = signPerp('wrong', { ts: bad.headers['X-Api-Ts'], method: 'PATCH', requestPath: '/v4/public/trader/x', body: '' });
    expectError(await send(bad.url, { method: bad.method, headers: bad.headers, body: bad.body }), 401, 20006);
  });

  it('authenticates before it answers an unknown path or reads a body', async () => {
    expectError(await send(api('no-such-endpoint')), 401, 20001);
    expectError(await trader.client.request('GET', 'no-such-endpoint'), 404, 40001);
    expectError(await send(api('api-keys/prepare'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"address":' }), 400, 10000);
    const broken = trader.client.sign('PATCH', `api-keys/${trader.apiKey}`, { body: '{"label":' });
    expectError(await send(broken.url, { method: broken.method, headers: broken.headers, body: broken.body }), 400, 10000);
    const r = await trader.client.request('PATCH', `api-keys/${trader.apiKey}`, { body: { label: 5 } });
    expectError(r, 400, 10000);
    expect(r.data).toEqual({ field: 'label' });
  });
});
