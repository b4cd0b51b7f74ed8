/**
 * The one definition of an API key, for both APIs: which API it belongs to, its permission set,
 * scopes, IP whitelist, bound wallet, label and expiry, and the one validation every writer (the
 * store, the key service, the CLI, the HTTP key endpoints) goes through. Nothing else lists the
 * permissions or checks these fields. A stock scope's shape, string form and limits are the wire
 * contract's (packages/contract, stock-key-scopes.ts); what a key may hold of them is decided here.
 */
import { isAddress } from 'viem';
import {
  formatStockScope,
  parseStockScope,
  STOCK_ACCESS_LEVELS,
  STOCK_MAX_KEY_SCOPES,
  stockScopeIssue,
  type StockScope,
} from '@tokex/contract';
import { ValidationError } from '../errors/app-error.ts';
import { isValidIp } from './ip-match.ts';

export type { StockScope };

export const API_KINDS = ['stock', 'perp'] as const;
export type ApiKind = (typeof API_KINDS)[number];

/**
 * A stock scope's access (seed §5A): READ_ONLY may only GET. A stock key's `permissions` is its
 * first scope's access, kept for the clients of keys made before scopes.
 */
export const STOCK_PERMISSIONS = STOCK_ACCESS_LEVELS;
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
  /**
   * Stock: exactly one permission, the first scope's access. Perp: distinct permissions in the
   * order of PERP_PERMISSIONS.
   */
  permissions: ApiKeyPermission[];
  label: string;
  /**
   * Exact IPv4/IPv6 addresses. Empty: a stock key rejects every request; a perp key accepts any
   * address (keys a wallet creates have no whitelist; docs/perp-api.md).
   */
  ipWhitelist: string[];
  /**
   * Stock: the non-empty list of `(chainId, productType, access)` the key may be used under, at
   * most one per chain and product, in the order they were given (docs/api-keys-secrets.md "Stock
   * key scopes"). Perp: empty (a perp key's chain is `chainId`, its rights `permissions`).
   */
  scopes: StockScope[];
  /**
   * Perp: the chain the key may be used on (`X-Chain-Id`). Stock: the first scope's chain, kept
   * (with `product` and `permissions`) for clients and rows of keys made before scopes.
   */
  chainId: number;
  /** Stock: the first scope's product (`x-api-p`, exact case); empty for perp keys. */
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

/** A scope as a writer may give it: the object, or its string form `8453:Anchored:WRITABLE`. */
export type StockScopeInput = StockScope | string;

/** The scope `text` names; a ValidationError naming `field` (and saying why) when it names none. */
export function parseScope(text: unknown, field = 'scope'): StockScope {
  const parsed = parseStockScope(text);
  if ('reason' in parsed) throw new ValidationError(field, parsed.reason);
  return parsed.scope;
}

/** One scope, given as an object or a string, as a fresh object; throws naming `field`. */
function scopeOf(value: unknown, field: string): StockScope {
  if (typeof value === 'string') return parseScope(value, field);
  const issue = stockScopeIssue(value);
  if (issue !== undefined) throw new ValidationError(field, issue);
  const s = value as StockScope;
  return { chainId: s.chainId, productType: s.productType, access: s.access };
}

/**
 * A key's scopes in canonical form: a stock key's non-empty list of at most STOCK_MAX_KEY_SCOPES,
 * one per chain and product (two accesses for one pair would leave it undecided which applies);
 * nothing for a perp key. Throws naming `scopes`.
 */
export function validateScopes(api: ApiKind, value: unknown): StockScope[] {
  if (api === 'perp') {
    if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) throw new ValidationError('scopes', 'perp keys have no scopes (their rights are permissions)');
    return [];
  }
  if (!Array.isArray(value) || value.length === 0) throw new ValidationError('scopes', 'a stock key holds at least one scope chainId:product:ACCESS');
  if (value.length > STOCK_MAX_KEY_SCOPES) throw new ValidationError('scopes', `at most ${STOCK_MAX_KEY_SCOPES} scopes`);
  const scopes = value.map((v) => scopeOf(v, 'scopes'));
  const seen = new Set<string>();
  for (const s of scopes) {
    const pair = `${s.chainId}:${s.productType}`;
    if (seen.has(pair)) throw new ValidationError('scopes', `more than one scope for chain ${s.chainId} product ${s.productType}: a key holds one access per chain and product`);
    seen.add(pair);
  }
  return scopes;
}

/** What a writer gives: a stock key's scopes may be left out for its legacy chainId, product and permission. */
export type ApiKeyAttributesInput = Omit<ApiKeyAttributes, 'scopes'> & { scopes?: readonly StockScopeInput[] };

/**
 * Validates and normalises every attribute of a key: the single check before anything is stored.
 * A stock key with `scopes` takes its `chainId`, `product` and `permissions` from the first scope
 * (whatever was given for them); one without `scopes` is a key as written before scopes, and holds
 * the one scope of its chainId, product and permission, so every earlier writer keeps working.
 */
export function validateApiKeyAttributes(input: ApiKeyAttributesInput): ApiKeyAttributes {
  const api = validateApi(input.api);
  const common = {
    api,
    label: validateLabel(input.label),
    ipWhitelist: validateIpWhitelist(input.ipWhitelist),
    userAddress: validateUserAddress(input.userAddress),
    active: validateActive(input.active),
    expiresAt: validateExpiresAt(input.expiresAt),
  };
  if (api === 'perp') {
    return {
      ...common,
      permissions: validatePermissions(api, input.permissions),
      scopes: validateScopes(api, input.scopes),
      chainId: validateChainId(input.chainId),
      product: validateProduct(api, input.product),
    };
  }
  let scopes: StockScope[];
  if (input.scopes === undefined) {
    const [access] = validatePermissions(api, input.permissions) as StockPermission[];
    scopes = validateScopes(api, [{ chainId: validateChainId(input.chainId), productType: validateProduct(api, input.product), access }]);
  } else scopes = validateScopes(api, input.scopes);
  const first = scopes[0]!;
  return { ...common, permissions: [first.access], scopes, chainId: first.chainId, product: first.productType };
}

/** What an update may do to a stock key's scopes, beside replacing the legacy fields. */
export interface ScopePatch {
  /** Replaces the whole list. */
  scopes?: readonly StockScopeInput[];
  /** Each added, or replacing the access of the scope held for its chain and product. */
  addScopes?: readonly StockScopeInput[];
  /** Each must be held exactly (chain, product and access). */
  removeScopes?: readonly StockScopeInput[];
  chainId?: number;
  product?: string;
  permissions?: ApiKeyPermission[];
}

/**
 * The scopes a stock key holds after `patch`, or undefined when the patch leaves them alone (it may
 * still change the legacy fields of a one-scope key: then its one scope is rebuilt from them, as
 * `keys update --permission WRITABLE` did before scopes). A key of several scopes is changed only
 * through its scopes: which of them a bare `chainId` meant would be a guess. Removing the last
 * scope is refused (revoke the key instead). Throws ValidationError naming the field.
 */
export function scopesAfterPatch(current: Pick<ApiKeyAttributes, 'api' | 'scopes'>, patch: ScopePatch): StockScope[] | undefined {
  const listed = patch.scopes !== undefined;
  const stepwise = patch.addScopes !== undefined || patch.removeScopes !== undefined;
  const legacy = patch.chainId !== undefined || patch.product !== undefined || patch.permissions !== undefined;
  if (current.api !== 'stock') {
    if (listed || stepwise) throw new ValidationError('scopes', 'perp keys have no scopes (their rights are permissions)');
    return undefined;
  }
  if ([listed, stepwise, legacy].filter(Boolean).length > 1) {
    throw new ValidationError('scopes', 'change a key\'s scopes one way at a time: the whole list, scopes added and removed, or chainId/product/permission of a one-scope key');
  }
  if (listed) return validateScopes('stock', patch.scopes);
  if (legacy) {
    if (current.scopes.length > 1) {
      throw new ValidationError('scopes', `the key holds ${current.scopes.length} scopes: change them with scopes added and removed (--add-scope, --remove-scope), not chainId/product/permission`);
    }
    return undefined;
  }
  if (!stepwise) return undefined;
  let next = [...current.scopes];
  for (const r of patch.removeScopes ?? []) {
    const s = scopeOf(r, 'removeScopes');
    const i = next.findIndex((h) => h.chainId === s.chainId && h.productType === s.productType && h.access === s.access);
    if (i === -1) throw new ValidationError('removeScopes', `the key holds no scope ${formatStockScope(s)} (it holds ${next.map(formatStockScope).join(', ')})`);
    next.splice(i, 1);
  }
  for (const a of patch.addScopes ?? []) {
    const s = scopeOf(a, 'addScopes');
    const i = next.findIndex((h) => h.chainId === s.chainId && h.productType === s.productType);
    if (i === -1) next.push(s);
    else next[i] = s;
  }
  if (next.length === 0) throw new ValidationError('removeScopes', 'a stock key keeps at least one scope: add another in the same update, or revoke the key');
  next = validateScopes('stock', next);
  return next;
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
