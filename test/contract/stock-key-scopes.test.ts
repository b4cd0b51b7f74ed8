/**
 * The stock key scope of the wire contract (packages/contract, stock-key-scopes.ts): the string form
 * round-trips, a string that names no scope says why, a scope is found only for its exact chain and
 * product, and READ_ONLY reads only.
 */
import { describe, expect, it } from 'vitest';
import { findStockScope, formatStockScope, parseStockScope, stockAccessAllows, type StockScope } from '@tokex/contract';

describe('stock key scopes', () => {
  it('parse and print the string form chainId:product:ACCESS', () => {
    for (const text of ['8453:Anchored:WRITABLE', '1:Anchored:READ_ONLY', '143:MondayTrade:READ_ONLY', '10143:Synfutures:WRITABLE']) {
      const parsed = parseStockScope(text);
      expect(parsed, text).toHaveProperty('scope');
      expect(formatStockScope((parsed as { scope: StockScope }).scope)).toBe(text);
    }
    expect(parseStockScope('8453:Anchored:WRITABLE')).toEqual({ scope: { chainId: 8453, productType: 'Anchored', access: 'WRITABLE' } });
  });

  it('say why a string names no scope', () => {
    expect(parseStockScope('')).toEqual({ reason: '"" is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE' });
    expect(parseStockScope(8453)).toEqual({ reason: '8453 is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE' });
    expect(parseStockScope(' 8453:Anchored:WRITABLE')).toEqual({ reason: '" 8453:Anchored:WRITABLE": bad chain id " 8453": must be a positive integer without a leading zero' });
    expect(parseStockScope('8453:Anchored:READ')).toEqual({ reason: '"8453:Anchored:READ": unknown access "READ": must be READ_ONLY or WRITABLE' });
    expect(parseStockScope('8453::READ_ONLY')).toEqual({ reason: '"8453::READ_ONLY": the product is empty' });
    expect(parseStockScope('8453:Anchored')).toEqual({ reason: '"8453:Anchored" is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE' });
    expect(parseStockScope('base:Anchored:WRITABLE')).toEqual({ reason: '"base:Anchored:WRITABLE": bad chain id "base": must be a positive integer without a leading zero' });
    expect(parseStockScope('0:Anchored:WRITABLE')).toEqual({ reason: '"0:Anchored:WRITABLE": bad chain id "0": must be a positive integer without a leading zero' });
    expect(parseStockScope('8453:Anchored:ADMIN')).toEqual({ reason: '"8453:Anchored:ADMIN": unknown access "ADMIN": must be READ_ONLY or WRITABLE' });
    expect(parseStockScope('8453:Anchored:writable')).toEqual({ reason: '"8453:Anchored:writable": unknown access "writable": must be READ_ONLY or WRITABLE' });
  });

  it('find the scope of the exact chain and product, case-sensitive', () => {
    const scopes: StockScope[] = [
      { chainId: 8453, productType: 'Anchored', access: 'WRITABLE' },
      { chainId: 1, productType: 'Anchored', access: 'READ_ONLY' },
    ];
    expect(findStockScope(scopes, 1, 'Anchored')).toBe(scopes[1]);
    expect(findStockScope(scopes, 1, 'anchored')).toBeUndefined();
    expect(findStockScope(scopes, 143, 'Anchored')).toBeUndefined();
  });

  it('let READ_ONLY GET only, WRITABLE GET, POST and DELETE', () => {
    expect(['GET', 'POST', 'DELETE'].map((m) => stockAccessAllows('READ_ONLY', m))).toEqual([true, false, false]);
    expect(['GET', 'POST', 'DELETE'].map((m) => stockAccessAllows('WRITABLE', m))).toEqual([true, true, true]);
  });
});
