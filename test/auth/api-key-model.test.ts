import { describe, expect, it } from 'vitest';
import {
  hasPermission,
  isBoundWallet,
  parseScope,
  scopesAfterPatch,
  validateApiKeyAttributes,
  validateIpWhitelist,
  validatePermissions,
  validateScopes,
  validateUserAddress,
  type ApiKeyAttributesInput,
  type StockScope,
} from '../../src/auth/api-key-model.ts';
import { ValidationError } from '../../src/errors/app-error.ts';

/** A stock key as written before scopes: chain, product and one permission. */
const stock: ApiKeyAttributesInput = {
  api: 'stock',
  permissions: ['WRITABLE'],
  label: 'desk',
  ipWhitelist: ['127.0.0.1'],
  chainId: 31337,
  product: 'STOCK',
  userAddress: null,
  active: true,
  expiresAt: null,
};

describe('API key model', () => {
  it('takes one stock permission, and a perp set in canonical order without repeats', () => {
    expect(validatePermissions('stock', ['READ_ONLY'])).toEqual(['READ_ONLY']);
    expect(validatePermissions('perp', ['TRANSFER', 'READ', 'TRANSFER'])).toEqual(['READ', 'TRANSFER']);
    for (const [api, list] of [
      ['stock', []],
      ['stock', ['READ']],
      ['stock', ['READ_ONLY', 'WRITABLE']],
      ['perp', []],
      ['perp', ['WRITABLE']],
      ['perp', 'READ'],
      ['perp', [1]],
    ] as const) {
      expect(() => validatePermissions(api, list), JSON.stringify(list)).toThrow(ValidationError);
    }
  });

  it('normalises addresses and whitelists, and names the field it refuses', () => {
    expect(validateUserAddress('0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266')).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    expect(validateUserAddress('')).toBeNull();
    expect(() => validateUserAddress('0xf39fd6e51aad88f6f4ce6ab8827279cfffb9226')).toThrow(/^userAddress: /);
    expect(validateIpWhitelist([' ::1 ', '10.0.0.1'])).toEqual(['::1', '10.0.0.1']);
    expect(() => validateIpWhitelist(['10.0.0.256'])).toThrow('ipWhitelist: not an IP address: 10.0.0.256');
    expect(() => validateIpWhitelist('10.0.0.1')).toThrow(/^ipWhitelist: /);
  });

  it('validates a whole key: perp keys carry no product, stock keys need one', () => {
    expect(validateApiKeyAttributes(stock)).toEqual({ ...stock, scopes: [{ chainId: 31337, productType: 'STOCK', access: 'WRITABLE' }] });
    expect(validateApiKeyAttributes({ ...stock, api: 'perp', permissions: ['READ'], product: '' })).toMatchObject({ api: 'perp', product: '' });
    expect(() => validateApiKeyAttributes({ ...stock, product: '' })).toThrow(/^product: /);
    expect(() => validateApiKeyAttributes({ ...stock, api: 'perp', permissions: ['READ'] })).toThrow('product: perp keys have no product scope');
    expect(() => validateApiKeyAttributes({ ...stock, label: 'x'.repeat(201) })).toThrow(/^label: /);
    expect(() => validateApiKeyAttributes({ ...stock, chainId: 0 })).toThrow(/^chainId: /);
  });

  it('answers permission and wallet questions', () => {
    expect(hasPermission({ permissions: ['READ', 'TRADE'] }, 'TRADE')).toBe(true);
    expect(hasPermission({ permissions: ['READ_ONLY'] }, 'WRITABLE')).toBe(false);
    const bound = { userAddress: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' };
    expect(isBoundWallet(bound, '0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266')).toBe(true);
    expect(isBoundWallet(bound, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8')).toBe(false);
    expect(isBoundWallet({ userAddress: null }, '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')).toBe(false);
  });
});

describe('stock key scopes', () => {
  const base = { api: 'stock' as const, scopes: [{ chainId: 8453, productType: 'Anchored', access: 'WRITABLE' as const }] };
  const held = (...scopes: string[]): { api: 'stock'; scopes: StockScope[] } => ({ api: 'stock', scopes: scopes.map((s) => parseScope(s)) });

  it('take the string form or the object, and give the key its first scope as chainId, product and permission', () => {
    const key = validateApiKeyAttributes({ ...stock, scopes: ['8453:Anchored:WRITABLE', { chainId: 1, productType: 'Anchored', access: 'READ_ONLY' }] });
    expect(key).toMatchObject({
      scopes: [
        { chainId: 8453, productType: 'Anchored', access: 'WRITABLE' },
        { chainId: 1, productType: 'Anchored', access: 'READ_ONLY' },
      ],
      chainId: 8453,
      product: 'Anchored',
      permissions: ['WRITABLE'],
    });
    // A perp key holds none.
    expect(validateApiKeyAttributes({ ...stock, api: 'perp', permissions: ['READ'], product: '' }).scopes).toEqual([]);
    expect(() => validateApiKeyAttributes({ ...stock, api: 'perp', permissions: ['READ'], product: '', scopes: ['1:Anchored:READ_ONLY'] })).toThrow('scopes: perp keys have no scopes');
  });

  it('refuse an empty list, two accesses for one chain and product, too many, and a scope that does not parse', () => {
    expect(() => validateScopes('stock', [])).toThrow('scopes: a stock key holds at least one scope chainId:product:ACCESS');
    expect(() => validateScopes('stock', ['8453:Anchored:WRITABLE', '8453:Anchored:READ_ONLY'])).toThrow(
      'scopes: more than one scope for chain 8453 product Anchored: a key holds one access per chain and product',
    );
    // Products are case-sensitive: these are two products.
    expect(validateScopes('stock', ['8453:Anchored:WRITABLE', '8453:anchored:READ_ONLY'])).toHaveLength(2);
    expect(() => validateScopes('stock', Array.from({ length: 65 }, (_, i) => `${i + 1}:Anchored:READ_ONLY`))).toThrow('scopes: at most 64 scopes');
    expect(() => validateScopes('stock', ['8453:Anchored:ADMIN'])).toThrow('scopes: "8453:Anchored:ADMIN": unknown access "ADMIN": must be READ_ONLY or WRITABLE');
    expect(() => validateScopes('stock', [{ chainId: 8453, productType: 'Anchored', access: 'WRITABLE', extra: 1 }])).toThrow('scopes: unknown field extra');
    expect(() => validateScopes('stock', [{ chainId: 0, productType: 'Anchored', access: 'WRITABLE' }])).toThrow('scopes: the chain id must be a positive integer');
    expect(() => parseScope('8453:Anchored')).toThrow('scope: "8453:Anchored" is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE');
    expect(() => parseScope('x:Anchored:WRITABLE', '--scope')).toThrow(/^--scope: "x:Anchored:WRITABLE": bad chain id "x"/);
    expect(() => parseScope('8453::WRITABLE')).toThrow('scope: "8453::WRITABLE": the product is empty');
    for (const bad of ['0:Anchored:WRITABLE', '-1:Anchored:WRITABLE', '08453:Anchored:WRITABLE', '1.5:Anchored:WRITABLE', '99999999999999999:Anchored:WRITABLE']) {
      expect(() => parseScope(bad), bad).toThrow(/bad chain id/);
    }
    expect(() => parseScope('8453:Anchored:writable')).toThrow(/unknown access "writable"/);
    expect(() => parseScope('8453:Anch ored:WRITABLE')).toThrow(/visible ASCII/);
    expect(() => parseScope(`8453:${'P'.repeat(33)}:WRITABLE`)).toThrow(/longer than 32 characters/);
    try {
      parseScope('8453:Anchored:');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe('scope');
    }
  });

  it('are added (replacing the access held for the same chain and product) and removed, never down to none', () => {
    expect(scopesAfterPatch(base, { addScopes: ['1:Anchored:READ_ONLY'] })).toEqual(held('8453:Anchored:WRITABLE', '1:Anchored:READ_ONLY').scopes);
    expect(scopesAfterPatch(held('8453:Anchored:WRITABLE', '1:Anchored:READ_ONLY'), { addScopes: ['1:Anchored:WRITABLE'] })).toEqual(
      held('8453:Anchored:WRITABLE', '1:Anchored:WRITABLE').scopes,
    );
    expect(scopesAfterPatch(held('8453:Anchored:WRITABLE', '1:Anchored:READ_ONLY'), { removeScopes: ['8453:Anchored:WRITABLE'] })).toEqual(held('1:Anchored:READ_ONLY').scopes);
    // Removing the last one is refused (revoking the key is how a key loses every right)…
    expect(() => scopesAfterPatch(base, { removeScopes: ['8453:Anchored:WRITABLE'] })).toThrow(
      'removeScopes: a stock key keeps at least one scope: add another in the same update, or revoke the key',
    );
    // …but it may be swapped for another in one update.
    expect(scopesAfterPatch(base, { removeScopes: ['8453:Anchored:WRITABLE'], addScopes: ['143:Anchored:READ_ONLY'] })).toEqual(held('143:Anchored:READ_ONLY').scopes);
    // Removed only as held: the access must match.
    expect(() => scopesAfterPatch(base, { removeScopes: ['8453:Anchored:READ_ONLY'] })).toThrow(
      'removeScopes: the key holds no scope 8453:Anchored:READ_ONLY (it holds 8453:Anchored:WRITABLE)',
    );
    // A key of several scopes is changed only through them; one of one scope as before.
    expect(() => scopesAfterPatch(held('8453:Anchored:WRITABLE', '1:Anchored:READ_ONLY'), { permissions: ['READ_ONLY'] })).toThrow(/^scopes: the key holds 2 scopes/);
    expect(scopesAfterPatch(base, { permissions: ['READ_ONLY'] })).toBeUndefined();
    expect(() => scopesAfterPatch(base, { permissions: ['READ_ONLY'], addScopes: ['1:Anchored:READ_ONLY'] })).toThrow(/^scopes: change a key's scopes one way at a time/);
    expect(() => scopesAfterPatch({ api: 'perp', scopes: [] }, { addScopes: ['1:Anchored:READ_ONLY'] })).toThrow('scopes: perp keys have no scopes');
  });
});
