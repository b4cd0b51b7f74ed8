/**
 * The one definition of an API key, for both APIs: which API it belongs to, its permission set,
 * scope, IP whitelist, bound wallet, label and expiry, and the one validation every writer (the
 * store, the key service, the CLI, the HTTP key endpoints) goes through. Nothing else lists the
 * permissions or checks these fields.
 */
import { isAddress } from 'viem';
import { ValidationError } from '../errors/app-error.ts';
import { isValidIp } from './ip-match.ts';

export const API_KINDS = ['stock', 'perp'] as const;
export type ApiKind = (typeof API_KINDS)[number];

/** Stock keys hold exactly one of these (seed §5A): READ_ONLY may only GET. */
export const STOCK_PERMISSIONS = ['READ_ONLY', 'WRITABLE'] as const;
/** Perp keys hold any non-empty set of these (contract.md §B). */
export const PERP_PERMISSIONS = ['READ', 'TRADE', 'TRANSFER'] as const;

export type StockPermission = (typeof STOCK_PERMISSIONS)[number];
export type PerpPermission = (typeof PERP_PERMISSIONS)[number];
export type ApiKeyPermission = StockPermission | PerpPermission;

export const PERMISSIONS: { readonly stock: readonly StockPermission[]; readonly perp: readonly PerpPermission[] } = {
  stock: STOCK_PERMISSIONS,
  perp: PERP_PERMISSIONS,
};

/** Labels are free text for the operator, bounded so a list stays printable. */
export const MAX_LABEL_LENGTH = 200;
/** More entries than any egress set an integrator has; bounds what one key costs to check. */
export const MAX_IP_WHITELIST = 100;

/** Everything about a key but its identity, its secret and its timestamps. */
export interface ApiKeyAttributes {
  api: ApiKind;
  /** Stock: exactly one permission. Perp: distinct permissions in the order of PERP_PERMISSIONS. */
  permissions: ApiKeyPermission[];
  label: string;
  /**
   * Exact IPv4/IPv6 addresses. Empty: a stock key rejects every request; a perp key accepts any
   * address (keys a wallet creates have no whitelist; docs/perp-api.md).
   */
  ipWhitelist: string[];
  /** Chain the key may be used on (`x-api-chain-id` / `X-Chain-Id`). */
  chainId: number;
  /** Stock product scope (`x-api-p`, exact case); empty for perp keys. */
  product: string;
  /** Lower-case 0x address of the wallet the key acts for, or null. */
  userAddress: string | null;
  active: boolean;
  /** ms since the epoch, or null for no expiry. */
  expiresAt: number | null;
}

export function validateApi(value: unknown): ApiKind {
  if (!API_KINDS.includes(value as ApiKind)) throw new ValidationError('api', `must be one of ${API_KINDS.join(', ')}`);
  return value as ApiKind;
}

/** The permission set in its canonical form for `api`; throws naming `permissions` otherwise. */
export function validatePermissions(api: ApiKind, value: unknown): ApiKeyPermission[] {
  const allowed: readonly string[] = PERMISSIONS[api];
  if (!Array.isArray(value) || value.length === 0) throw new ValidationError('permissions', 'must be a non-empty list');
  for (const p of value) {
    if (typeof p !== 'string' || !allowed.includes(p)) throw new ValidationError('permissions', `${api} keys take ${api === 'stock' ? 'one of' : 'any of'} ${allowed.join(', ')}`);
  }
  if (api === 'stock') {
    if (value.length !== 1) throw new ValidationError('permissions', 'a stock key has exactly one of READ_ONLY, WRITABLE');
    return [value[0] as StockPermission];
  }
  return allowed.filter((p) => value.includes(p)) as ApiKeyPermission[];
}

export function validateIpWhitelist(value: unknown): string[] {
  if (!Array.isArray(value)) throw new ValidationError('ipWhitelist', 'must be a list of IP addresses');
  if (value.length > MAX_IP_WHITELIST) throw new ValidationError('ipWhitelist', `at most ${MAX_IP_WHITELIST} addresses`);
  return value.map((ip) => {
    if (typeof ip !== 'string' || !isValidIp(ip)) throw new ValidationError('ipWhitelist', `not an IP address: ${String(ip)}`);
    return ip.trim();
  });
}

/** Lower-case address, or null for none (`null`, `undefined` or the empty string). */
export function validateUserAddress(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new ValidationError('userAddress', 'must be a 0x-prefixed 20-byte hex address');
  }
  return value.toLowerCase();
}

export function validateLabel(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ValidationError('label', 'must be text');
  if (value.length > MAX_LABEL_LENGTH) throw new ValidationError('label', `at most ${MAX_LABEL_LENGTH} characters`);
  return value;
}

export function validateChainId(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new ValidationError('chainId', 'must be a positive integer');
  return value;
}

export function validateProduct(api: ApiKind, value: unknown): string {
  if (api === 'perp') {
    if (value !== undefined && value !== null && value !== '') throw new ValidationError('product', 'perp keys have no product scope');
    return '';
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > 32) throw new ValidationError('product', 'must be 1 to 32 characters');
  return value;
}

export function validateExpiresAt(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new ValidationError('expiresAt', 'must be ms since the epoch');
  return value;
}

export function validateActive(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new ValidationError('active', 'must be true or false');
  return value;
}

/** Validates and normalises every attribute of a key: the single check before anything is stored. */
export function validateApiKeyAttributes(input: ApiKeyAttributes): ApiKeyAttributes {
  const api = validateApi(input.api);
  return {
    api,
    permissions: validatePermissions(api, input.permissions),
    label: validateLabel(input.label),
    ipWhitelist: validateIpWhitelist(input.ipWhitelist),
    chainId: validateChainId(input.chainId),
    product: validateProduct(api, input.product),
    userAddress: validateUserAddress(input.userAddress),
    active: validateActive(input.active),
    expiresAt: validateExpiresAt(input.expiresAt),
  };
}

/** Whether a key with these permissions holds `permission`. */
export function hasPermission(key: { permissions: readonly ApiKeyPermission[] }, permission: ApiKeyPermission): boolean {
  return key.permissions.includes(permission);
}

/**
 * Whether `address` is the wallet the key is bound to. A bound key reads that wallet's records
 * (orders, operations) whoever recorded them; writing stays with the recording key.
 */
export function isBoundWallet(key: { userAddress: string | null }, address: string): boolean {
  return key.userAddress !== null && address.toLowerCase() === key.userAddress;
}
