/**
 * The SDK covers each API exactly: every operation of openapi/perp-api.json and
 * openapi/stock-api.json has one route-table entry naming one client method, every entry is an
 * operation, and calling the method sends that method and path (checked against a local server).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERP_ROUTES, PerpClient, STOCK_ROUTES, StockClient, type RouteEntry } from '@tokex/sdk';

type Op = { method: string; path: string };

/**
 * The operations the SDK covers: all but the perp API's Monday Trade clients' shape (tag `monday
 * trade clients`, docs/perp-api.md), which is for clients of that service; the SDK keeps using the
 * venue's own endpoints.
 */
function operations(file: string): Op[] {
  const doc = JSON.parse(fs.readFileSync(new URL(`../../openapi/${file}`, import.meta.url), 'utf8')) as { paths: Record<string, Record<string, { tags?: string[] }>> };
  const ops: Op[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      if (op.tags?.includes('monday trade clients')) continue;
      ops.push({ method: method.toUpperCase(), path });
    }
  }
  return ops;
}

const key = (o: Op) => `${o.method} ${o.path}`;

function templateRegex(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/?]+')}(\\?.*)?$`);
}

/** Arguments that make each method send its request (path parameters first). */
function argsFor(route: RouteEntry): unknown[] {
  const pathParams = (route.path.match(/\{[^}]+\}/g) ?? []).map(() => 'p-1');
  const special: Record<string, unknown[]> = {
    buildOrder: [{ symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1', price: '1' }],
    submitOrder: [{ message: {}, signature: '0x00' }],
    fillOrder: [{ message: {}, signature: '0x00' }],
    submitClosePosition: [{ message: {}, signature: '0x00' }],
    submitBatchOrders: [[{ message: {}, signature: '0x00' }]],
    buildAmend: [{ orderId: '1', price: '1' }],
    submitAmend: [{ message: {}, signature: '0x00' }],
    cancelAllAfter: [0],
    addLiquidity: ['1'],
    removeLiquidity: ['1'],
    getKlines: [{ symbol: 'AAPL-USD', interval: '1m' }],
    orderCalldata: [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '1', deadline: 1 }],
    orderWithDepositCalldata: [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '1', deadline: 1, tokenAddress: '0x1', tokenAmount: '1' }],
    sendOrder: [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '1', deadline: 1 }],
    sendOrderWithDeposit: [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '1', deadline: 1, tokenAddress: '0x1', tokenAmount: '1' }],
  };
  if (special[route.name]) return special[route.name];
  if (/^record.*Tx$/.test(route.name)) return ['0xabc'];
  return [...pathParams, {}];
}

describe('route tables', () => {
  for (const [file, routes] of [
    ['perp-api.json', PERP_ROUTES],
    ['stock-api.json', STOCK_ROUTES],
  ] as const) {
    it(`${file}: each operation has exactly one SDK method and each SDK route is an operation`, () => {
      const ops = operations(file).map(key).sort();
      const table = routes.map((r) => key(r)).sort();
      expect(new Set(table).size).toBe(table.length);
      expect(table).toEqual(ops);
      const names = routes.map((r) => r.name);
      expect(new Set(names).size).toBe(names.length);
      const proto = (file.startsWith('perp') ? PerpClient : StockClient).prototype as unknown as Record<string, unknown>;
      for (const n of names) expect(typeof proto[n], n).toBe('function');
    });
  }

  it('knows the perp market-trades endpoint', () => {
    expect(PERP_ROUTES.find((r) => r.path === '/v4/public/trader/market-trades')).toMatchObject({ method: 'GET', name: 'getMarketTrades', idempotent: 'always' });
  });
});

describe('each method sends its route', () => {
  const seen: Array<{ method: string; url: string; signed: boolean }> = [];
  let server: http.Server;
  let base = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, signed: req.headers['x-api-sign'] !== undefined });
        const stock = req.url!.startsWith('/api/v1/');
        const data = req.url!.includes('/instruments') ? [] : {};
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(stock ? { code: 200, errMsg: '', uuid: 'u', data } : { code: 0, msg: 'ok', requestId: 'r', data }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('perp: method, path and signature as the table says', async () => {
    const client = new PerpClient({ baseUrl: base, apiKey: 'k', apiSecret: 's', chainId: 31337, retry: false });
    for (const route of PERP_ROUTES) {
      seen.length = 0;
      await (client as any)[route.name](...argsFor(route));
      const last = seen.at(-1)!;
      expect([last.method, last.url], route.name).toEqual([route.method, expect.stringMatching(templateRegex(route.path))]);
      expect(last.signed, route.name).toBe(route.signed);
    }
  });

  it('stock: method and path as the table says, every call signed', async () => {
    const client = new StockClient({ baseUrl: base, apiKey: 'k', apiSecret: 's', chainId: 31337, retry: false });
    for (const route of STOCK_ROUTES) {
      seen.length = 0;
      await (client as any)[route.name](...argsFor(route));
      const last = seen.at(-1)!;
      expect([last.method, last.url, last.signed], route.name).toEqual([route.method, expect.stringMatching(templateRegex(route.path)), true]);
    }
  });
});
