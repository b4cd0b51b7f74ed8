/**
 * What the shared HTTP layer refuses before an API's own hooks run, over raw sockets:
 * - on the perpetual API (which has a rate limit) each such refusal (a body over the limit, a URL that
 *   does not decode, an unknown path, an unmet `Expect`, malformed HTTP) stays in the API's envelope
 *   and code, carries X-RateLimit-Limit/Remaining/Reset and is counted against the client's address,
 *   never against a key it merely names; past the limit it is the 429 42900 refusal;
 * - a credential header sent twice answers the documented refusal: perp 20001 MISSING_CREDENTIALS,
 *   stock the opaque 401 with the cause logged. Raw sockets, since fetch merges repeated headers.
 * On SQLite with memory stores, and on PostgreSQL with Redis when DATABASE_URL / REDIS_URL are set.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { signPerp } from '../../src/auth/hmac.ts';
import { stockOk } from '../../src/stock/stock-envelope.ts';
import { perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';
import { useStockAuthApp } from '../support/stock-auth-app.ts';
import { send, sendRaw, stockAuthHeaders, UUID_V4, type RawAnswer } from './raw-http.ts';

const TRADER = '/v4/public/trader';

/** A request with header lines as given, repeated names included (what `send` cannot express). */
function withLines(baseUrl: string, method: string, target: string, lines: Array<[string, string]>, body = ''): Promise<RawAnswer> {
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${new URL(baseUrl).host}\r\nconnection: close\r\n`;
  for (const [k, v] of lines) head += `${k}: ${v}\r\n`;
  if (body !== '') head += `content-length: ${Buffer.byteLength(body)}\r\n`;
  return sendRaw(baseUrl, Buffer.from(`${head}\r\n${body}`, 'latin1'));
}

function rateHeaders(r: RawAnswer) {
  return { limit: r.headers['x-ratelimit-limit'], remaining: r.headers['x-ratelimit-remaining'] };
}

function expectReset(r: RawAnswer) {
  expect(r.headers['x-ratelimit-reset']).toMatch(/^[0-9]+$/);
  expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  expect(Number(r.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60);
}

function expectPerpError(r: RawAnswer, http: number, code: number, msg?: string) {
  expect({ status: r.status, code: r.json?.code }).toEqual({ status: http, code });
  if (msg !== undefined) expect(r.json?.msg).toBe(msg);
  expect(Object.keys(r.json ?? {}).sort()).toEqual(['code', 'data', 'msg', 'requestId']);
  expect(r.json?.requestId).toMatch(UUID_V4);
}

describe.each(perpHarnessVariants())('perp API: HTTP-layer refusals ($name)', (variant) => {
  let h: PerpHarness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('counts every refusal made before authentication against the address, with the headers, and refuses the one past the limit with 42900', async () => {
    h = await variant.start({ limit: 5 });
    const { baseUrl } = h;
    const k = await h.key();

    // A body over the limit that names a key: the key is not authenticated, so the address pays.
    const big = await send(baseUrl, {
      method: 'POST',
      target: `${TRADER}/orders`,
      headers: { 'content-type': 'application/json', 'x-api-key': k.apiKey, 'x-api-ts': String(Date.now()), 'x-chain-id': '31337' },
      body: `{"pad":"${'x'.repeat(70_000)}"}`,
    });
    expectPerpError(big, 400, 10001, 'body: larger than 65536 bytes');
    expect(big.headers.connection).toBe('close');
    expect(rateHeaders(big)).toEqual({ limit: '5', remaining: '4' });
    expectReset(big);

    const badUrl = await send(baseUrl, { method: 'GET', target: `${TRADER}/%zz` });
    expectPerpError(badUrl, 400, 10000, 'url: is not a valid URL');
    expect(rateHeaders(badUrl)).toEqual({ limit: '5', remaining: '3' });
    expectReset(badUrl);

    // Outside the authenticated scope (the scope's own unknown paths authenticate first).
    const elsewhere = await send(baseUrl, { method: 'GET', target: '/v4/public/nothing-here' });
    expectPerpError(elsewhere, 404, 40001);
    expect(rateHeaders(elsewhere)).toEqual({ limit: '5', remaining: '2' });

    const expectation = await send(baseUrl, { method: 'POST', target: `${TRADER}/orders`, headers: { expect: 'the-unexpected' } });
    expectPerpError(expectation, 400, 10000, 'expect: only 100-continue is supported');
    expect(expectation.headers.connection).toBe('close');
    expect(rateHeaders(expectation)).toEqual({ limit: '5', remaining: '1' });

    // Malformed HTTP that Node refuses before any request exists: answered in the envelope, counted.
    const malformed = await sendRaw(baseUrl, Buffer.from(`GET ${TRADER}/time HTTP/1.1\r\nhost: x\r\nbad header: 1\r\n\r\n`, 'latin1'));
    expectPerpError(malformed, 400, 10000, 'request: malformed HTTP');
    expect(malformed.headers.connection).toBe('close');
    expect(rateHeaders(malformed)).toEqual({ limit: '5', remaining: '0' });
    expectReset(malformed);

    // The address's budget is spent: the next refusal of any kind is the rate limit's, with Retry-After.
    for (const over of [
      await send(baseUrl, { method: 'POST', target: `${TRADER}/api-keys`, headers: { 'content-type': 'application/json' }, body: 'x'.repeat(70_000) }),
      await send(baseUrl, { method: 'GET', target: `${TRADER}/%zz` }),
      await sendRaw(baseUrl, Buffer.from(`GET ${TRADER}/time HTTP/1.1\r\nhost: x\r\nbad header: 1\r\n\r\n`, 'latin1')),
      await send(baseUrl, { method: 'GET', target: `${TRADER}/time` }),
    ]) {
      expectPerpError(over, 429, 42900, 'Too many requests');
      expect(rateHeaders(over)).toEqual({ limit: '5', remaining: '0' });
      expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    }

    // The key named by the oversized body still has its whole budget.
    const own = await k.client.request('GET', 'instruments');
    expect([own.code, own.rateLimit]).toEqual([0, { limit: 5, remaining: 4, reset: own.rateLimit!.reset }]);
  });

  it('answers refusals made after authentication once, counted against the key (malformed JSON, another content type)', async () => {
    h = await variant.start({ limit: 5 });
    const k = await h.key();
    // Signed over the exact bytes sent: the refusal is the body's, after authentication.
    let ts = Date.now();
    const sendSigned = (body: string, contentType: string) => {
      const t = String(++ts);
      const sign = signPerp(k.apiSecret, { ts: t, method: 'POST', requestPath: `${TRADER}/orders`, body });
      return send(h!.baseUrl, {
        method: 'POST',
        target: `${TRADER}/orders`,
        headers: { 'content-type': contentType, 'x-api-key': k.apiKey, 'x-api-sign': sign, 'x-api-ts': t, 'x-chain-id': '31337' },
        body,
      });
    };
    const badJson = await sendSigned('{"message":', 'application/json');
    expectPerpError(badJson, 400, 10000, 'body: is not valid JSON');
    expect(rateHeaders(badJson)).toEqual({ limit: '5', remaining: '4' });
    const text = await sendSigned('{}', 'text/plain');
    expectPerpError(text, 400, 10000, 'content-type: must be application/json (charset utf-8)');
    expect(rateHeaders(text)).toEqual({ limit: '5', remaining: '3' });
    // Counted once each, and not against the address.
    const pub = await send(h.baseUrl, { method: 'GET', target: `${TRADER}/time` });
    expect(pub.status).toBe(200);
    expect(rateHeaders(pub)).toEqual({ limit: '5', remaining: '4' });
  });

  it('answers 20001 for X-Api-Key or X-Chain-Id sent twice, even with the same value, and counts it against the address', async () => {
    h = await variant.start({ limit: 50 });
    const k = await h.key();
    const lines = () => {
      const req = k.client.sign('GET', 'instruments');
      return Object.entries(req.headers);
    };
    const target = `${TRADER}/instruments`;
    // The baseline over the same raw client: one of each answers 0.
    const ok = await withLines(h.baseUrl, 'GET', target, lines());
    expect([ok.status, ok.json?.code]).toEqual([200, 0]);

    const cases: Array<[string, (l: Array<[string, string]>) => Array<[string, string]>]> = [
      ['X-Api-Key twice', (l) => [...l, ['X-Api-Key', k.apiKey]]],
      ['X-Api-Key twice, another case', (l) => [...l, ['x-api-key', k.apiKey]]],
      ['X-Api-Key twice, the second empty', (l) => [...l, ['X-Api-Key', '']]],
      ['X-Chain-Id twice', (l) => [...l, ['X-Chain-Id', '31337']]],
      ['X-Chain-Id twice, the first empty', (l) => [['X-Chain-Id', ''], ...l]],
      ['X-Api-Ts twice', (l) => [...l, ['X-Api-Ts', l.find(([n]) => n === 'X-Api-Ts')![1]]]],
      ['X-Api-Sign twice', (l) => [...l, ['X-Api-Sign', l.find(([n]) => n === 'X-Api-Sign')![1]]]],
    ];
    let remaining = 50;
    for (const [name, edit] of cases) {
      const r = await withLines(h.baseUrl, 'GET', target, edit(lines()));
      expect({ name, status: r.status, code: r.json?.code, msg: r.json?.msg }).toEqual({ name, status: 401, code: 20001, msg: 'Unauthorized' });
      remaining--;
      expect({ name, ...rateHeaders(r) }).toEqual({ name, limit: '50', remaining: String(remaining) });
    }
    // None of them spent the key's budget (only the baseline did).
    const own = await k.client.request('GET', 'instruments');
    expect(own.rateLimit!.remaining).toBe(48);
  });
});

describe('stock API: credential headers sent twice', () => {
  const CHAIN_ID = 31337;
  // The stock API's own HTTP layer, auth hook and decoder (its routes need a chain; these do not).
  const auth = useStockAuthApp({
    chainId: CHAIN_ID,
    decodeJson: true,
    routes: (api) => api.get('/symbols', async (req) => stockOk(req.id, { key: req.apiKey!.apiKey })),
  });

  it('answers the opaque 401 for x-api-key or x-api-chain-id (or any other) sent twice, and logs that cause', async () => {
    const { key, apiSecret } = await auth.keys.create({ permission: 'READ_ONLY', ipWhitelist: ['127.0.0.1'], chainId: CHAIN_ID, product: 'STOCK' });
    const lines = () => Object.entries(stockAuthHeaders('GET', '/api/v1/symbols', undefined, { apiKey: key.apiKey, apiSecret, chainId: CHAIN_ID, product: 'STOCK' }));
    const ok = await withLines(auth.baseUrl, 'GET', '/api/v1/symbols', lines());
    expect([ok.status, ok.json?.code]).toEqual([200, 200]);

    const cases: Array<[string, string, (l: Array<[string, string]>) => Array<[string, string]>]> = [
      ['x-api-key twice', 'x-api-key', (l) => [...l, ['x-api-key', key.apiKey]]],
      ['x-api-key twice, another case', 'x-api-key', (l) => [...l, ['X-API-KEY', key.apiKey]]],
      ['x-api-chain-id twice', 'x-api-chain-id', (l) => [...l, ['x-api-chain-id', String(CHAIN_ID)]]],
      ['x-api-chain-id twice, the first empty', 'x-api-chain-id', (l) => [['X-Api-Chain-Id', ''], ...l]],
      ['x-api-p twice', 'x-api-p', (l) => [...l, ['x-api-p', 'STOCK']]],
      ['x-api-nonce twice', 'x-api-nonce', (l) => [...l, ['x-api-nonce', l.find(([n]) => n === 'x-api-nonce')![1]]]],
    ];
    for (const [name, header, edit] of cases) {
      const r = await withLines(auth.baseUrl, 'GET', '/api/v1/symbols', edit(lines()));
      expect({ name, status: r.status, body: { ...r.json, uuid: undefined, t: undefined } }).toEqual({ name, status: 400, body: { code: 401, errMsg: 'Unauthorized', uuid: undefined, t: undefined } });
      expect(typeof r.json?.t).toBe('number');
      expect(r.json?.uuid).toMatch(UUID_V4);
      const line = auth.logs.find((l) => l.uuid === r.json?.uuid && l.msg === 'authentication failed');
      expect({ name, reason: line?.reason }).toEqual({ name, reason: `${header} repeated` });
    }
  });
});
