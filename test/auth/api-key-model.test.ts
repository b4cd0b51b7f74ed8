import { describe, expect, it } from 'vitest';
import {
  hasPermission,
  isBoundWallet,
  validateApiKeyAttributes,
  validateIpWhitelist,
  validatePermissions,
  validateUserAddress,
  type ApiKeyAttributes,
} from '../../src/auth/api-key-model.ts';
import { ValidationError } from '../../src/errors/app-error.ts';

const stock: ApiKeyAttributes = {
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
    expect(validateApiKeyAttributes(stock)).toEqual(stock);
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
