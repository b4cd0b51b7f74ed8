/**
 * The wire contract (packages/contract) loads in a browser, and its stateless rules answer what the
 * server answers: the same field and reason for each refusal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  canonicalQuery,
  defaultTimeInForce,
  orderBasicIssue,
  requestWeight,
  triggersOnRise,
  orderExpiryIssue,
  perpRequestPath,
  perpSignMessage,
  stockSignedUri,
  stockSignMessage,
  timeInForceAllowed,
} from '@tokex/contract';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTRACT = path.join(ROOT, 'packages', 'contract', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

describe('the contract package', () => {
  it('imports nothing but its own files and TypeBox (no Node-only module)', () => {
    const outside = new Set<string>();
    for (const file of sources(CONTRACT)) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/\bfrom\s+'([^']+)'/g)) if (!m[1].startsWith('.')) outside.add(m[1]);
    }
    expect([...outside].sort()).toEqual(['@sinclair/typebox']);
  });

  it('bundles for a browser, and a client taking only the signing recipes gets no schema library', async () => {
    const all = await build({ entryPoints: [path.join(CONTRACT, 'index.ts')], bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent' });
    expect(all.outputFiles[0].text).toContain('POST_ONLY');
    const signing = await build({
      stdin: { contents: "export { perpSignMessage, canonicalQuery } from './index.ts';", resolveDir: CONTRACT, loader: 'ts' },
      bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, logLevel: 'silent',
    });
    expect(signing.outputFiles[0].text).not.toContain('TypeBox');
    expect(signing.outputFiles[0].text.length).toBeLessThan(2_000);
  });
});

describe('the time-in-force rule', () => {
  it('gives each order type its list, the first the default', () => {
    expect(defaultTimeInForce('LIMIT')).toBe('GTC');
    expect(defaultTimeInForce('MARKET')).toBe('IOC');
    expect(['GTC', 'IOC', 'FOK', 'POST_ONLY', 'DAY'].filter((t) => timeInForceAllowed('MARKET', t))).toEqual(['IOC', 'FOK']);
    expect(['GTC', 'IOC', 'FOK', 'POST_ONLY', 'DAY'].filter((t) => timeInForceAllowed('LIMIT', t))).toEqual(['GTC', 'IOC', 'FOK', 'POST_ONLY']);
    expect(timeInForceAllowed('STOP', 'GTC')).toBe(false);
  });
});

describe('orderBasicIssue (ValidateBasic of an order)', () => {
  const ok = { side: 'BUY', type: 'LIMIT', size: '0.5', price: '50000' };
  it('passes a valid order and names the first broken rule with the reason the server answers', () => {
    expect(orderBasicIssue(ok)).toBeUndefined();
    expect(orderBasicIssue({ ...ok, type: 'MARKET', price: undefined })).toBeUndefined();
    expect(orderBasicIssue({ ...ok, side: 'buy' })).toEqual({ field: 'side', reason: 'must be BUY or SELL' });
    expect(orderBasicIssue({ ...ok, type: 'STOP' })).toEqual({ field: 'type', reason: 'must be one of LIMIT, MARKET, STOP_MARKET, STOP_LIMIT, TAKE_PROFIT_MARKET, TAKE_PROFIT_LIMIT' });
    expect(orderBasicIssue({ ...ok, type: 'MARKET', timeInForce: 'GTC' })).toEqual({ field: 'timeInForce', reason: 'must be one of IOC, FOK for a MARKET order' });
    expect(orderBasicIssue({ ...ok, size: '1e3' })).toEqual({ field: 'size', reason: 'must be a decimal string like "0.5"' });
    expect(orderBasicIssue({ ...ok, price: '' })).toEqual({ field: 'price', reason: 'required for a LIMIT order' });
    expect(orderBasicIssue({ ...ok, price: '-1' })).toEqual({ field: 'price', reason: 'must be a decimal string like "50000.5"' });
    expect(orderBasicIssue({ ...ok, clientOrderId: 'a b' })).toEqual({ field: 'clientOrderId', reason: 'must be 1 to 64 visible ASCII characters' });
    expect(orderBasicIssue({ ...ok, clientOrderId: 'x'.repeat(65) })?.field).toBe('clientOrderId');
    expect(orderBasicIssue({ ...ok, clientOrderId: '' })).toBeUndefined();
  });

  it('checks trigger orders: triggerPrice required and only on them, closePosition without a size and only on them', () => {
    const stop = { side: 'SELL', type: 'STOP_MARKET', size: '0.5', triggerPrice: '48000' };
    expect(orderBasicIssue(stop)).toBeUndefined();
    expect(orderBasicIssue({ ...stop, triggerBy: 'LAST' })).toBeUndefined();
    expect(orderBasicIssue({ ...stop, triggerPrice: undefined })).toEqual({ field: 'triggerPrice', reason: 'required for a STOP_MARKET order' });
    expect(orderBasicIssue({ ...stop, triggerPrice: '4.8e4' })).toEqual({ field: 'triggerPrice', reason: 'must be a decimal string like "50000.5"' });
    expect(orderBasicIssue({ ...stop, triggerBy: 'INDEX' })).toEqual({ field: 'triggerBy', reason: 'must be MARK or LAST' });
    expect(orderBasicIssue({ ...stop, type: 'STOP_LIMIT' })).toEqual({ field: 'price', reason: 'required for a STOP_LIMIT order' });
    expect(orderBasicIssue({ ...stop, type: 'TAKE_PROFIT_MARKET', timeInForce: 'GTC' })?.field).toBe('timeInForce');
    expect(orderBasicIssue({ ...stop, size: undefined, closePosition: true })).toBeUndefined();
    expect(orderBasicIssue({ ...stop, closePosition: true })).toEqual({ field: 'size', reason: 'must be omitted with closePosition: the whole position is closed' });
    expect(orderBasicIssue({ ...ok, triggerPrice: '1' })).toEqual({ field: 'triggerPrice', reason: 'only a trigger order (STOP_* or TAKE_PROFIT_*) has one, not a LIMIT order' });
    expect(orderBasicIssue({ ...ok, closePosition: true })).toEqual({ field: 'closePosition', reason: 'only a trigger order (STOP_* or TAKE_PROFIT_*) closes the position' });
    expect(triggersOnRise('STOP_MARKET', 'BUY')).toBe(true);
    expect(triggersOnRise('STOP_LIMIT', 'SELL')).toBe(false);
    expect(triggersOnRise('TAKE_PROFIT_MARKET', 'SELL')).toBe(true);
    expect(triggersOnRise('TAKE_PROFIT_LIMIT', 'BUY')).toBe(false);
    expect([1, 9, 10, 20, 100].map(requestWeight)).toEqual([1, 1, 2, 3, 11]);
  });

  it('bounds a signed order expiry to the future and 30 days ahead', () => {
    const now = 1_700_000_000_000;
    expect(orderExpiryIssue(now + 1, now)).toBeUndefined();
    expect(orderExpiryIssue(now, now)).toEqual({ field: 'expiry', reason: 'must be a time in ms in the future' });
    expect(orderExpiryIssue(now + 30 * 86_400_000 + 1, now)).toEqual({ field: 'expiry', reason: 'must be at most 30 days ahead' });
  });
});

describe('the signing recipes', () => {
  it('sort the query by name, keep repeated names in order, and leave out undefined and null', () => {
    expect(canonicalQuery({ symbol: 'BTC-USD', limit: 5, a: undefined, b: null, ids: ['2', '1'] })).toBe('ids=2&ids=1&limit=5&symbol=BTC-USD');
    expect(canonicalQuery('?b=2&a=1&b=1')).toBe('a=1&b=2&b=1');
    expect(perpRequestPath('/v4/public/trader/orders/open', { symbol: 'ETH-USD', page: 2 })).toBe('/v4/public/trader/orders/open?page=2&symbol=ETH-USD');
    expect(stockSignedUri('/api/v1/orders', '')).toBe('/api/v1/orders');
  });

  it('build the messages contract.md spells out', () => {
    expect(perpSignMessage({ ts: '1700000000000', method: 'post', requestPath: '/v4/public/trader/orders', body: '{"a":1}' })).toBe(
      '1700000000000POST/v4/public/trader/orders{"a":1}',
    );
    expect(stockSignMessage({ method: 'get', uri: '/api/v1/symbols?a=1', ts: '1700000000', nonce: 'n-1', body: '' })).toBe('GET\n/api/v1/symbols?a=1\n1700000000\nn-1\n');
  });
});
