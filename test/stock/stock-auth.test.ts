/**
 * Every authentication failure of seed §7A answers the identical opaque HTTP 400 / code 401, the
 * cause is logged under the response's uuid, and no secret or signature reaches the log.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignedRequest } from '@tokex/sdk';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stop();
});

async function send(req: SignedRequest): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function expectOpaque401(r: { status: number; body: Record<string, unknown> }) {
  expect(r.status).toBe(400);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'errMsg', 't', 'uuid']);
  expect(r.body.code).toBe(401);
  expect(r.body.errMsg).toBe('Unauthorized');
  expect(r.body.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
}

function hmac(secret: string, payload: string) {
  return createHmac('sha256', secret).update(payload).digest('hex');
}

async function newKey(patch: Partial<Parameters<TestStack['stack']['keys']['create']>[0]> = {}) {
  const { key, apiSecret } = await t.stack.keys.create({
    permission: 'READ_ONLY',
    ipWhitelist: ['127.0.0.1', '::1'],
    chainId: t.demo.chainId,
    product: 'STOCK',
    ...patch,
  });
  return { apiKey: key.apiKey, apiSecret };
}

describe('stock API authentication', () => {
  it('accepts a correctly signed request (the baseline the failures differ from)', async () => {
    const r = await send(t.readOnly.sign('GET', '/api/v1/symbols'));
    expect(r.status).toBe(200);
    expect(r.body.code).toBe(200);
  });

  const cases: Array<[string, () => Promise<SignedRequest>]> = [
    ['unknown key', async () => t.client('0'.repeat(32), 'whatever').sign('GET', '/api/v1/symbols')],
    [
      'revoked key',
      async () => {
        const k = await newKey();
        await t.stack.keys.revoke(k.apiKey);
        return t.client(k.apiKey, k.apiSecret).sign('GET', '/api/v1/symbols');
      },
    ],
    [
      'expired key',
      async () => {
        const k = await newKey({ expiresAt: Date.now() + 60_000 });
        await t.stack.keys.update(k.apiKey, { expiresAt: Date.now() - 1 });
        return t.client(k.apiKey, k.apiSecret).sign('GET', '/api/v1/symbols');
      },
    ],
    [
      'empty IP whitelist',
      async () => {
        const k = await newKey({ ipWhitelist: [] });
        return t.client(k.apiKey, k.apiSecret).sign('GET', '/api/v1/symbols');
      },
    ],
    [
      'mismatched IP whitelist',
      async () => {
        const k = await newKey({ ipWhitelist: ['10.9.8.7'] });
        return t.client(k.apiKey, k.apiSecret).sign('GET', '/api/v1/symbols');
      },
    ],
    [
      'key scoped to another chain',
      async () => {
        const k = await newKey({ chainId: 1 });
        return t.client(k.apiKey, k.apiSecret).sign('GET', '/api/v1/symbols');
      },
    ],
    ['timestamp 46 s old', async () => t.readOnly.sign('GET', '/api/v1/symbols', { ts: Date.now() - 46_000 })],
    ['timestamp 46 s ahead', async () => t.readOnly.sign('GET', '/api/v1/symbols', { ts: Date.now() + 46_000 })],
    [
      'full URL signed',
      async () => {
        const req = t.readOnly.sign('GET', '/api/v1/symbols');
        const h = req.headers;
        h['x-api-sign'] = hmac(t.demo.stock.keys.readOnly.apiSecret, ['GET', req.url, h['x-api-ts'], h['x-api-nonce'], ''].join('\n'));
        return req;
      },
    ],
    [
      'literal backslash-n instead of newlines',
      async () => {
        const req = t.readOnly.sign('GET', '/api/v1/symbols');
        const h = req.headers;
        h['x-api-sign'] = hmac(t.demo.stock.keys.readOnly.apiSecret, ['GET', '/api/v1/symbols', h['x-api-ts'], h['x-api-nonce'], ''].join('\\n'));
        return req;
      },
    ],
    [
      'query not sorted before signing',
      async () => {
        const uri = '/api/v1/prices/AAPL/history?limit=5&interval=1h';
        const ts = String(Date.now());
        const nonce = randomUUID();
        const req = t.readOnly.sign('GET', '/api/v1/prices/AAPL/history', { query: { interval: '1h', limit: 5 }, ts: Number(ts), nonce });
        req.url = t.stack.stockBaseUrl + uri;
        req.headers['x-api-sign'] = hmac(t.demo.stock.keys.readOnly.apiSecret, ['GET', uri, ts, nonce, ''].join('\n'));
        return req;
      },
    ],
    [
      'body changed after signing',
      async () => {
        const req = t.writable.sign('POST', '/api/v1/orders/calldata', { body: '{"symbol":"AAPL","notional":"10"}' });
        req.body = '{"symbol":"AAPL","notional":"1000"}';
        return req;
      },
    ],
    [
      'missing x-api-chain-id',
      async () => {
        const req = t.readOnly.sign('GET', '/api/v1/symbols');
        delete req.headers['x-api-chain-id'];
        return req;
      },
    ],
    ['wrong x-api-chain-id', async () => t.client(t.demo.stock.keys.readOnly.apiKey, t.demo.stock.keys.readOnly.apiSecret, { chainId: 1 }).sign('GET', '/api/v1/symbols')],
    ['x-api-p in the wrong case', async () => t.client(t.demo.stock.keys.readOnly.apiKey, t.demo.stock.keys.readOnly.apiSecret, { product: 'stock' }).sign('GET', '/api/v1/symbols')],
    [
      'missing x-api-p',
      async () => {
        const req = t.readOnly.sign('GET', '/api/v1/symbols');
        delete req.headers['x-api-p'];
        return req;
      },
    ],
    ['READ_ONLY key on POST', async () => t.readOnly.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })],
    ['READ_ONLY key on DELETE', async () => t.readOnly.sign('DELETE', '/api/v1/orders/1/calldata')],
    [
      'unknown route probed without a valid signature',
      async () => t.client(t.demo.stock.keys.readOnly.apiKey, 'not-the-secret').sign('GET', '/api/v1/admin/secrets'),
    ],
    [
      'signature from another secret',
      async () => t.client(t.demo.stock.keys.readOnly.apiKey, 'not-the-secret').sign('GET', '/api/v1/symbols'),
    ],
  ];

  it.each(cases)('rejects %s with the opaque 400/401', async (_name, build) => {
    expectOpaque401(await send(await build()));
  });

  /** Sends `req` over node:http with its header names written as `rename` says, plus `extra` lines. */
  function sendRaw(req: SignedRequest, rename: (name: string) => string, extra: Array<[string, string]> = []): Promise<{ status: number; body: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const out = request(req.url, { method: req.method }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      });
      out.on('error', reject);
      const lines = new Map<string, string[]>();
      for (const [name, value] of Object.entries(req.headers)) lines.set(rename(name), [value]);
      for (const [name, value] of extra) lines.set(name, [...(lines.get(name) ?? []), value]);
      for (const [name, values] of lines) out.setHeader(name, values.length === 1 ? values[0] : values);
      out.end(req.body);
    });
  }

  it('reads the authentication headers whatever the case of their names', async () => {
    const upper = await sendRaw(t.readOnly.sign('GET', '/api/v1/symbols'), (n) => n.toUpperCase());
    expect(upper.status).toBe(200);
    const mixed = await sendRaw(t.readOnly.sign('GET', '/api/v1/symbols'), (n) => n.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase()));
    expect(mixed.status).toBe(200);
  });

  it('rejects an authentication header sent twice, even with the same value', async () => {
    const req = t.readOnly.sign('GET', '/api/v1/symbols');
    expectOpaque401(await sendRaw(req, (n) => n, [['x-api-nonce', req.headers['x-api-nonce']]]));
    const again = t.readOnly.sign('GET', '/api/v1/symbols');
    expectOpaque401(await sendRaw(again, (n) => n, [['x-api-key', again.headers['x-api-key']]]));
  });

  it('rejects a reused nonce', async () => {
    const req = t.readOnly.sign('GET', '/api/v1/symbols');
    expect((await send(req)).status).toBe(200);
    expectOpaque401(await send(req));
  });

  it('lets a WRITABLE key through the same paths a READ_ONLY key is refused on', async () => {
    // Past authentication the request meets validation and lookups, not the opaque 401.
    const post = await send(t.writable.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } }));
    expect(post).toMatchObject({ status: 400, body: { code: 400, errMsg: 'side: required' } });
    const del = await send(t.writable.sign('DELETE', '/api/v1/orders/999999/calldata'));
    expect(del).toMatchObject({ status: 404, body: { code: 404, errMsg: 'order: not found' } });
  });

  it('logs the cause under the uuid and never the secret or the signature', async () => {
    const req = t.readOnly.sign('GET', '/api/v1/symbols', { ts: Date.now() - 60_000 });
    const r = await send(req);
    expectOpaque401(r);
    const line = t.logs.find((l) => l.includes(String(r.body.uuid)) && l.includes('authentication failed'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!).reason).toContain('45 s window');
    // The request's own access line carries the same uuid.
    const access = t.logs.map((l) => JSON.parse(l)).find((l) => l.uuid === r.body.uuid && l.msg === 'request');
    expect(access).toMatchObject({ level: 30, method: 'GET', url: '/api/v1/symbols', status: 400 });
    const all = t.logs.join('\n');
    expect(all).not.toContain(t.demo.stock.keys.readOnly.apiSecret);
    expect(all).not.toContain(t.demo.stock.keys.writable.apiSecret);
    expect(all).not.toContain(req.headers['x-api-sign']);
  });
});
