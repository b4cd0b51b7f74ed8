/**
 * One focused test per finding of the hostile-input run (issue 12, section 5), on the real stack
 * over a real socket, each with the exact status, code and errMsg the client now gets.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { uniqueSchemaName } from '../support/test-databases.ts';
import { dropStackSchema } from '../support/stack-engines.ts';
import { send, sendRaw, stockAuthHeaders, UUID_V4, type RawAnswer, type RawRequest } from '../http/raw-http.ts';

const DECIMAL_REASON = 'must be a decimal string like "12.5" (no sign, exponent or spaces)';
const JSON_TYPE = { 'content-type': 'application/json' };

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stop();
});

function keyOf(s: TestStack, which: 'writable' | 'readOnly' = 'writable') {
  const k = s.demo.stock.keys[which];
  return { apiKey: k.apiKey, apiSecret: k.apiSecret, chainId: s.demo.chainId, product: s.demo.stock.product };
}

/** A request signed over exactly the bytes it sends. `target` is the path from /api/v1 with its query (sorted). */
function signed(s: TestStack, method: string, target: string, body?: Uint8Array | string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const req: RawRequest = { method, target, body, headers: { ...stockAuthHeaders(method, target, body, keyOf(s)), ...headers } };
  return send(s.stack.stockBaseUrl!, req);
}

function unsigned(s: TestStack, method: string, target: string, body?: Uint8Array | string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return send(s.stack.stockBaseUrl!, { method, target, body, headers });
}

function expectAnswer(r: RawAnswer, status: number, code: number, errMsg: string) {
  expect({ status: r.status, code: r.json?.code, errMsg: r.json?.errMsg }).toEqual({ status, code, errMsg });
  expect(r.json!.uuid).toMatch(UUID_V4);
}

const expectOpaque401 = (r: RawAnswer) => {
  expectAnswer(r, 400, 401, 'Unauthorized');
  expect(Object.keys(r.json!).sort()).toEqual(['code', 'errMsg', 't', 'uuid']);
};

describe('numbers are not coerced', () => {
  const cash = () => t.demo.stock.contracts.cashToken;
  const stock = () => t.demo.stock.contracts.stocks.AAPL;
  const routes = (): Array<{ path: string; base: Record<string, unknown>; fields: string[] }> => [
    { path: '/api/v1/orders/calldata', base: { symbol: 'AAPL', side: 'Buy', type: 'Limit', timeInForce: 'DAY' }, fields: ['quantity', 'notional', 'price'] },
    { path: '/api/v1/orders/with-deposit/calldata', base: { symbol: 'AAPL', side: 'Buy', type: 'Market' }, fields: ['quantity', 'notional', 'price', 'tokenAmount'] },
    { path: '/api/v1/cash/deposits/calldata', base: { tokenAddress: cash() }, fields: ['tokenAmount'] },
    { path: '/api/v1/cash/withdrawals/calldata', base: { tokenAddress: cash() }, fields: ['tokenAmount'] },
    { path: '/api/v1/stock/deposits/calldata', base: { tokenAddress: stock() }, fields: ['tokenAmount'] },
    { path: '/api/v1/stock/withdrawals/calldata', base: { tokenAddress: stock() }, fields: ['tokenAmount'] },
  ];

  // A plain JSON number is an amount read from its digits (Anchored types amounts "string / number"):
  // stock-anchored-requests.test.ts. One with an exponent or a sign, an array or a boolean is not.
  it('answers 400 naming the field for a JSON number with an exponent or a sign, an array or a boolean, on every route', async () => {
    for (const { path, base, fields } of routes()) {
      for (const field of fields) {
        for (const raw of ['1e3', '-12.5', '["1"]', 'true']) {
          const body = JSON.stringify(base).slice(0, -1) + `,"${field}":${raw}}`;
          const r = await signed(t, 'POST', path, body, JSON_TYPE);
          expectAnswer(r, 400, 400, `${field}: ${DECIMAL_REASON}`);
        }
      }
    }
  });

  it('takes the same values as decimal strings (the calldata carries 9007199254740993 exactly)', async () => {
    const r = await signed(t, 'POST', '/api/v1/stock/deposits/calldata', JSON.stringify({ tokenAddress: stock(), tokenAmount: '0.000000000009007199' }), JSON_TYPE);
    expect(r.status).toBe(200);
    // 0.000000000009007199 stock (18 decimals) is 9007199 units; the amount is the last word of the calldata.
    const callData = (r.json!.data as { callData: string }).callData;
    expect(BigInt(`0x${callData.slice(-64)}`)).toBe(9007199n);
    // In USDC (6 decimals): as 18-decimal stock it would pass the contracts' 2^96 - 1 units.
    const big = await signed(t, 'POST', '/api/v1/cash/deposits/calldata', JSON.stringify({ tokenAddress: cash(), tokenAmount: '9007199254740993' }), JSON_TYPE);
    expect(BigInt(`0x${(big.json!.data as { callData: string }).callData.slice(-64)}`)).toBe(9007199254740993n * 10n ** 6n);
  });

  it('wants deadline as a JSON integer, not as text', async () => {
    const body = { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: String(Math.floor(Date.now() / 1000) + 600) };
    expectAnswer(await signed(t, 'POST', '/api/v1/orders/calldata', JSON.stringify(body), JSON_TYPE), 400, 400, 'deadline: must be integer');
  });
});

describe('the signature covers the body as sent', () => {
  const body = () => JSON.stringify({ tokenAddress: t.demo.stock.contracts.stocks.AAPL, tokenAmount: '1' });

  it('a text/plain body signed over the empty string is refused as unauthenticated', async () => {
    const headers = { ...stockAuthHeaders('POST', '/api/v1/stock/deposits/calldata', '', keyOf(t)), 'content-type': 'text/plain' };
    expectOpaque401(await send(t.stack.stockBaseUrl!, { method: 'POST', target: '/api/v1/stock/deposits/calldata', headers, body: body() }));
  });

  it('a text/plain or utf-16 body signed over its bytes authenticates, then is refused by its type', async () => {
    for (const type of ['text/plain', 'application/json; charset=utf-16', 'application/octet-stream']) {
      const r = await signed(t, 'POST', '/api/v1/stock/deposits/calldata', body(), { 'content-type': type });
      expectAnswer(r, 400, 400, 'content-type: must be application/json (charset utf-8)');
    }
    const none = await signed(t, 'POST', '/api/v1/stock/deposits/calldata', body());
    expectAnswer(none, 400, 400, 'content-type: must be application/json (charset utf-8)');
  });

  it('invalid UTF-8: signed over a lenient decoding it is the opaque 401; signed over its bytes it is a 400 naming the body', async () => {
    const bytes = Buffer.concat([Buffer.from('{"tokenAddress":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    expectOpaque401(await unsigned(t, 'POST', '/api/v1/stock/deposits/calldata', bytes, JSON_TYPE));
    // Signed over the text a lenient decoder would make of it (replacement characters): not the bytes sent.
    const lenient = bytes.toString('utf8');
    const headers = { ...stockAuthHeaders('POST', '/api/v1/stock/deposits/calldata', lenient, keyOf(t)), ...JSON_TYPE };
    expectOpaque401(await send(t.stack.stockBaseUrl!, { method: 'POST', target: '/api/v1/stock/deposits/calldata', headers, body: bytes }));
    // The signature covers the bytes as sent, so it holds; the body is then refused for what it is.
    expectAnswer(await signed(t, 'POST', '/api/v1/stock/deposits/calldata', bytes, JSON_TYPE), 400, 400, 'body: is not valid UTF-8');
  });
});

describe('authentication decides first', () => {
  it('invalid JSON without auth: the opaque 401 on a real route and on an unknown one; with auth: 400 naming the body', async () => {
    for (const path of ['/api/v1/orders/calldata', '/api/v1/no-such-route', '/api/v1/orders/calldata/nope']) {
      expectOpaque401(await unsigned(t, 'POST', path, '{"symbol":', JSON_TYPE));
    }
    expectAnswer(await signed(t, 'POST', '/api/v1/orders/calldata', '{"symbol":', JSON_TYPE), 400, 400, 'body: is not valid JSON');
  });

  it('a path parameter over 100 characters: the opaque 401 on real and unknown routes alike; with auth the schema names it', async () => {
    const long = 'A'.repeat(150);
    for (const path of [`/api/v1/prices/${long}`, `/api/v1/orders/${'1'.repeat(150)}`, `/api/v1/no-such/${long}`, `/api/v1/users/${long}/balance`]) {
      expectOpaque401(await unsigned(t, 'GET', path));
    }
    // prices/{symbol} also takes a token address: 42 characters.
    expectAnswer(await signed(t, 'GET', `/api/v1/prices/${long}`), 400, 400, 'symbol: must NOT have more than 42 characters');
    expectAnswer(await signed(t, 'GET', `/api/v1/underlying/${long}/price`), 400, 400, 'symbol: must NOT have more than 16 characters');
    expectAnswer(await signed(t, 'GET', `/api/v1/operations/${long}`), 404, 404, 'route: not found');
    expectAnswer(await signed(t, 'GET', `/api/v1/cash/deposits/${'a'.repeat(101)}`), 400, 400, 'operationId: must NOT have more than 100 characters');
  });
});

describe('text that reaches the database', () => {
  it('an operation id with a NUL byte or other controls is 400, not a PostgreSQL error', async () => {
    for (const id of ['%00', 'a%00b', '%0A', '%C3%A9']) {
      expectAnswer(await signed(t, 'GET', `/api/v1/cash/deposits/${id}`), 400, 400, 'operationId: must be visible ASCII characters only');
    }
    expectAnswer(await signed(t, 'GET', `/api/v1/stock/withdrawals/0x${'a'.repeat(64)}-0`), 404, 404, 'operation: not found');
  });
});

describe('answers in the envelope', () => {
  const host = () => new URL(t.stack.stockBaseUrl!).host;
  const raw = (text: string) => sendRaw(t.stack.stockBaseUrl!, Buffer.from(text, 'latin1'));

  it('malformed HTTP that Node refuses: 400 in the envelope, Connection: close', async () => {
    const r = await raw(`GET /api/v1/symbols HTTP/1.1\r\nHost: ${host()}\r\nno colon here\r\n\r\n`);
    expectAnswer(r, 400, 400, 'request: malformed HTTP');
    expect(r.headers.connection).toBe('close');
  });

  it('headers too large (Node\'s 431): 400 in the envelope, Connection: close', async () => {
    const r = await raw(`GET /api/v1/symbols HTTP/1.1\r\nHost: ${host()}\r\nx-pad: ${'p'.repeat(32_000)}\r\n\r\n`);
    expectAnswer(r, 400, 400, 'headers: too large');
    expect(r.headers.connection).toBe('close');
  });

  it('a URL that does not decode (FST_ERR_BAD_URL): 400 in the envelope, without echoing it', async () => {
    for (const target of ['/api/v1/prices/%E0%A4%A', '/api/v1/no-such/%E0%A4%A']) {
      const r = await unsigned(t, 'GET', target);
      expectAnswer(r, 400, 400, 'url: is not a valid URL');
      expect(r.text).not.toContain('%E0');
    }
  });

  it('outside /api/v1, unknown routes and methods are 404 in the envelope', async () => {
    expectAnswer(await unsigned(t, 'GET', '/nothing'), 404, 404, 'route: not found');
    expectAnswer(await unsigned(t, 'OPTIONS', '/api/v1/symbols'), 400, 401, 'Unauthorized');
  });
});

describe('huge page numbers', () => {
  const engines: Array<[string, Record<string, string>]> = [['sqlite', {}]];
  if (process.env.DATABASE_URL) engines.push(['postgres', { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: uniqueSchemaName('hostile') }]);
  const lists = ['/api/v1/orders', '/api/v1/cash/deposits', '/api/v1/cash/withdrawals', '/api/v1/stock/deposits', '/api/v1/stock/withdrawals', '/api/v1/corporate-action'];

  describe.each(engines)('on %s', (_name, env) => {
    let s: TestStack;
    beforeAll(async () => {
      s = _name === 'sqlite' ? t : await startTestStack(env);
    }, 120_000);
    afterAll(async () => {
      if (s !== t) await s?.stop();
      await dropStackSchema(env);
    });

    it('falls back or answers 400, never 500', async () => {
      for (const path of lists) {
        expectAnswer(await signed(s, 'GET', `${path}?page=1e18`), 400, 400, 'page: must be integer');
        expectAnswer(await signed(s, 'GET', `${path}?page=99999999999999999999`), 400, 400, 'page: must be <= 1000000000');
        expectAnswer(await signed(s, 'GET', `${path}?page=1000000001`), 400, 400, 'page: must be <= 1000000000');
        const last = await signed(s, 'GET', `${path}?limit=100&page=1000000000`);
        expect(last.status, path).toBe(200);
        expect((last.json!.data as { rows: unknown[] }).rows).toEqual([]);
        // Out-of-range values fall back to the defaults (page 1, limit 10).
        for (const q of ['limit=99999999999999999999&page=-99999999999999999999', 'limit=0&page=0']) {
          const r = await signed(s, 'GET', `${path}?${q}`);
          expect(r.status, `${path}?${q}`).toBe(200);
        }
      }
      for (const path of lists.slice(0, 5)) {
        const r = await signed(s, 'GET', `${path}?startTime=99999999999999999999`);
        expect(r.status, path).toBe(200);
        expect(r.json!.data).toEqual({ total: 0, rows: [] });
      }
    });

    it('a symbol filter with a NUL byte or other controls is 400, not a PostgreSQL error (found by the hostile-input run)', async () => {
      for (const path of ['/api/v1/corporate-action', '/api/v1/orders']) {
        for (const symbol of ['%00', 'AA%00PL', '%0A', '%C3%A9']) {
          expectAnswer(await signed(s, 'GET', `${path}?symbol=${symbol}`), 400, 400, 'symbol: must be visible ASCII characters only');
        }
      }
      // An empty filter and a ticker with a dot pass the pattern, as before: corporate actions have
      // none for them, and the order list names the symbol it does not list.
      for (const symbol of ['', 'BRK.B']) {
        const r = await signed(s, 'GET', `/api/v1/corporate-action?symbol=${symbol}`);
        expect(r.status, symbol).toBe(200);
        expectAnswer(await signed(s, 'GET', `/api/v1/orders?symbol=${symbol}`), 400, 400, `symbol: "${symbol}" is not listed`);
      }
    });
  });
});

describe('a client that disconnects during an uncached key lookup', () => {
  it('is not logged as an error (the peer address survives the disconnect)', async () => {
    // API_KEY_CACHE_TTL_MS is 0 in the test stack: every request looks its key up in the database.
    const url = new URL(t.stack.stockBaseUrl!);
    const before = t.logs.length;
    for (let i = 0; i < 40; i++) {
      const headers = stockAuthHeaders('GET', '/api/v1/symbols', undefined, keyOf(t, 'readOnly'));
      const socket = net.connect({ host: url.hostname, port: Number(url.port) });
      await new Promise<void>((r) => socket.once('connect', () => r()));
      let text = `GET /api/v1/symbols HTTP/1.1\r\nHost: ${url.host}\r\n`;
      for (const [k, v] of Object.entries(headers)) text += `${k}: ${v}\r\n`;
      socket.write(text + '\r\n');
      // Leave after a varying number of event-loop turns, to land inside the lookup now and then.
      for (let j = 0; j < i % 4; j++) await new Promise((r) => setImmediate(r));
      socket.resetAndDestroy();
    }
    // A request that is answered shows the server has handled what came before it.
    const after = await signed(t, 'GET', '/api/v1/symbols');
    expect(after.status).toBe(200);
    const errors = t.logs.slice(before).map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
  });
});
