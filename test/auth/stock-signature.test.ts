/**
 * Guards the signing algorithm with an implementation written from contract.md alone (node:crypto
 * by hand, no shared helper), so the SDK and the server cannot silently agree on a mistake.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StockClient } from '../../src/sdk/stock-client.ts';
import { canonicalQuery, HmacSha256, hexSignatureEquals } from '../../src/auth/stock-signature.ts';

const SECRET = 'test-secret-0123456789';

describe('stock request signature', () => {
  it('matches the literal five-line algorithm for a GET with a query', () => {
    const client = new StockClient({ baseUrl: 'http://127.0.0.1:1/svc', apiKey: 'k', apiSecret: SECRET, chainId: 31337 });
    const signed = client.sign('get', '/api/v1/prices/AAPL/history', {
      query: { limit: 5, interval: '1h', endTime: 1700000000000 },
      ts: 1700000000123,
      nonce: '6f1c1a9e-9d7b-4c3f-8f43-2c1f0e5d1a11',
    });
    const payload =
      'GET\n' +
      '/api/v1/prices/AAPL/history?endTime=1700000000000&interval=1h&limit=5\n' +
      '1700000000123\n' +
      '6f1c1a9e-9d7b-4c3f-8f43-2c1f0e5d1a11\n';
    const expected = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(Buffer.from(payload, 'utf8')).digest('hex');
    expect(signed.headers['x-api-sign']).toBe(expected);
    expect(signed.url).toBe('http://127.0.0.1:1/svc/api/v1/prices/AAPL/history?endTime=1700000000000&interval=1h&limit=5');
    expect(signed.headers['x-api-ts']).toBe('1700000000123');
    expect(signed.headers['x-api-p']).toBe('STOCK');
    expect(signed.headers['x-api-chain-id']).toBe('31337');
  });

  it('covers the raw body byte for byte for a POST', () => {
    const client = new StockClient({ baseUrl: 'http://x', apiKey: 'k', apiSecret: SECRET, chainId: 1, product: 'STOCK' });
    const body = '{"symbol":"AAPL","side":"Buy","notional":"100.5"}';
    const signed = client.sign('POST', '/api/v1/orders/calldata', { body, ts: 42, nonce: 'nonce-000001' });
    const payload = ['POST', '/api/v1/orders/calldata', '42', 'nonce-000001', body].join(String.fromCharCode(10));
    expect(payload.includes('\\n')).toBe(false);
    const expected = createHmac('sha256', SECRET).update(payload).digest('hex');
    expect(signed.headers['x-api-sign']).toBe(expected);
    expect(signed.body).toBe(body);
  });

  it('sorts repeated names stably and encodes like URLSearchParams', () => {
    expect(canonicalQuery('b=2&a=z&b=1&c=a%20b')).toBe('a=z&b=2&b=1&c=a+b');
    expect(canonicalQuery({ symbol: 'AAPL', page: 2 })).toBe('page=2&symbol=AAPL');
    expect(canonicalQuery('')).toBe('');
  });
});

describe('server-side HMAC', () => {
  it('equals node:crypto HMAC-SHA256 for short, block-sized and long secrets and messages', () => {
    const secrets = ['', 'k', SECRET, 'x'.repeat(64), 'y'.repeat(65), 'ключ-µ'.repeat(20)];
    const messages = ['', 'GET\n/api/v1/symbols\n1\nn\n', 'é→'.repeat(3000), 'z'.repeat(70_000)];
    for (const secret of secrets) {
      const signer = new HmacSha256(secret);
      for (const m of messages) expect(signer.hex(m)).toBe(createHmac('sha256', secret).update(m, 'utf8').digest('hex'));
    }
  });

  it('compares hex signatures in either case and rejects any other digest', () => {
    const expected = createHmac('sha256', SECRET).update('m').digest('hex');
    expect(hexSignatureEquals(expected, expected)).toBe(true);
    expect(hexSignatureEquals(expected, expected.toUpperCase())).toBe(true);
    const flipped = expected.slice(0, 63) + (expected[63] === '0' ? '1' : '0');
    expect(hexSignatureEquals(expected, flipped)).toBe(false);
    expect(hexSignatureEquals(expected, expected.slice(0, 62))).toBe(false);
  });

  it('never matches a character outside 0-9, a-f, A-F, even one that equals a digit once its 0x20 bit is set', () => {
    const expected = '0'.repeat(32) + 'abcdef0123456789abcdef0123456789';
    // 0x10 | 0x20 is '0', 'A' | 0x20 is 'a', '@' | 0x20 is '`': only the real hex letters may fold.
    for (const [i, bad] of [[0, '\u0010'], [0, 'P'], [32, '!'], [33, '"'], [40, 'g'], [63, '\u0019'], [34, '#']] as const) {
      const given = expected.slice(0, i) + bad + expected.slice(i + 1);
      expect(hexSignatureEquals(expected, given), JSON.stringify(given[i])).toBe(false);
    }
    const mixed = expected.slice(0, 32) + expected.slice(32).toUpperCase();
    expect(hexSignatureEquals(expected, mixed)).toBe(true);
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      const given = ch + expected.slice(1);
      expect(hexSignatureEquals(expected, given), `char ${c}`).toBe(ch === '0');
      const atA = expected.slice(0, 32) + ch + expected.slice(33);
      expect(hexSignatureEquals(expected, atA), `char ${c} for a`).toBe(ch === 'a' || ch === 'A');
    }
  });
});
