/**
 * Guards both signing algorithms with implementations written from contract.md alone (node:crypto
 * by hand for the stock scheme, the openssl command line for the perp scheme), so the SDK and the
 * servers cannot silently agree on a mistake.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StockClient } from '@tokex/sdk';
import {
  canonicalQuery,
  decodeBase64Digest,
  decodeHexDigest,
  perpSignPayload,
  signPerp,
  signStock,
  stockSignPayload,
  verifyPerp,
  verifyStock,
} from '../../src/auth/hmac.ts';

const SECRET = 'test-secret-0123456789';

/** `printf %s payload | openssl dgst -sha256 -hmac secret -binary | base64`, the payload given as bytes on stdin. */
function opensslBase64(secret: string, payload: Buffer): string {
  const mac = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-binary'], { input: payload });
  return execFileSync('base64', [], { input: mac }).toString('utf8').trim();
}

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

  it('hashes a byte body as received: bytes that are not UTF-8 are not read as text first', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x7d]);
    const input = { method: 'POST', uri: '/api/v1/x', ts: '1', nonce: 'nonce-0001', body: bytes };
    const payload = Buffer.concat([Buffer.from('POST\n/api/v1/x\n1\nnonce-0001\n'), bytes]);
    expect(stockSignPayload(input)).toEqual(payload);
    const expected = createHmac('sha256', SECRET).update(payload).digest('hex');
    expect(signStock(SECRET, input)).toBe(expected);
    // The same bytes decoded as UTF-8 (replacement characters) are another message.
    expect(signStock(SECRET, { ...input, body: bytes.toString('utf8') })).not.toBe(expected);
    // Text and its UTF-8 bytes are the same message.
    const text = '{"note":"é→ü"}';
    expect(signStock(SECRET, { ...input, body: text })).toBe(signStock(SECRET, { ...input, body: Buffer.from(text, 'utf8') }));
  });

  it('verifies hex of either case and refuses every other spelling', () => {
    const input = { method: 'GET', uri: '/api/v1/symbols', ts: '7', nonce: 'nonce-0002', body: '' };
    const sig = signStock(SECRET, input);
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyStock(SECRET, input, sig)).toBe(true);
    expect(verifyStock(SECRET, input, sig.toUpperCase())).toBe(true);
    const flipped = sig.slice(0, 63) + (sig[63] === '0' ? '1' : '0');
    expect(verifyStock(SECRET, input, flipped)).toBe(false);
    for (const bad of [sig.slice(0, 62), sig + '0', sig + '00', '', ` ${sig.slice(1)}`, sig.slice(0, 63) + 'g', Buffer.from(sig, 'hex').toString('base64')]) {
      expect(verifyStock(SECRET, input, bad), JSON.stringify(bad)).toBe(false);
    }
    expect(verifyStock('another secret', input, sig)).toBe(false);
  });

  it('decodes only 64 hex digits', () => {
    expect(decodeHexDigest('ab'.repeat(32))).toEqual(Buffer.alloc(32, 0xab));
    expect(decodeHexDigest('AB'.repeat(32))).toEqual(Buffer.alloc(32, 0xab));
    for (const bad of ['ab'.repeat(31), 'ab'.repeat(33), 'zz'.repeat(32), '0x' + 'ab'.repeat(31)]) expect(decodeHexDigest(bad)).toBeUndefined();
  });
});

describe('perp request signature', () => {
  const input = { ts: '1700000000123', method: 'post', requestPath: '/v4/public/trader/orders', body: '{"symbol":"BTC-USD","side":"BUY","size":"0.5"}' };

  it('is Base64 of HMAC-SHA256 over ts + METHOD + request_path + body, as openssl computes it', () => {
    const payload = '1700000000123POST/v4/public/trader/orders{"symbol":"BTC-USD","side":"BUY","size":"0.5"}';
    expect(perpSignPayload(input).toString('utf8')).toBe(payload);
    const sig = signPerp(SECRET, input);
    expect(sig).toBe(opensslBase64(SECRET, Buffer.from(payload, 'utf8')));
    expect(sig).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it('signs a GET with a sorted query and no body', () => {
    const get = { ts: '42', method: 'GET', requestPath: `/v4/public/trader/klines?${canonicalQuery({ symbol: 'BTC-USD', interval: '1m', limit: 10 })}`, body: '' };
    expect(get.requestPath).toBe('/v4/public/trader/klines?interval=1m&limit=10&symbol=BTC-USD');
    expect(signPerp(SECRET, get)).toBe(opensslBase64(SECRET, Buffer.from('42GET/v4/public/trader/klines?interval=1m&limit=10&symbol=BTC-USD')));
  });

  it('matches a fixed vector (RFC 4231 test case 2 as Base64)', () => {
    // key "Jefe", data "what do ya want for nothing?": the digest is RFC 4231's 5bdcc146…3843.
    const sig = signPerp('Jefe', { ts: 'what do ya want', method: ' ', requestPath: 'for nothing', body: '?' });
    expect(Buffer.from(sig, 'base64').toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it('verifies the canonical Base64 only', () => {
    const sig = signPerp(SECRET, input);
    expect(verifyPerp(SECRET, input, sig)).toBe(true);
    expect(verifyPerp(SECRET, { ...input, body: input.body + ' ' }, sig)).toBe(false);
    const hex = Buffer.from(sig, 'base64').toString('hex');
    const urlSafe = Buffer.from(sig, 'base64').toString('base64url');
    for (const bad of [hex, sig.slice(0, 43), sig.slice(0, 43) + '==', `${sig}=`, ` ${sig}`, sig.replace(/=$/, '')]) {
      expect(verifyPerp(SECRET, input, bad), bad).toBe(false);
    }
    if (urlSafe !== sig.replace(/=$/, '')) expect(verifyPerp(SECRET, input, urlSafe)).toBe(false);
    expect(verifyPerp('another secret', input, sig)).toBe(false);
  });

  it('decodes only the canonical spelling of 32 bytes', () => {
    const b = Buffer.alloc(32, 7).toString('base64');
    expect(decodeBase64Digest(b)).toEqual(Buffer.alloc(32, 7));
    // Same bytes, unused low bits of the last character set: not canonical.
    const last = b[42];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const twin = b.slice(0, 42) + alphabet[alphabet.indexOf(last) + 1] + '=';
    expect(Buffer.from(twin, 'base64')).toEqual(Buffer.alloc(32, 7));
    expect(decodeBase64Digest(twin)).toBeUndefined();
    expect(decodeBase64Digest(Buffer.alloc(31).toString('base64'))).toBeUndefined();
  });
});
