/**
 * API keys of both APIs: creation with a random secret (shown once, stored encrypted),
 * administration, and the per-instance cached lookup the authentication hooks use on every request.
 * Validation is the model's (api-key-model.ts), applied by the store on every write.
 */
import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { Db } from '../storage/database.ts';
import { getApiKey, insertApiKey, listApiKeys, revokeApiKey, updateApiKey, type ApiKeyPatch, type ApiKeyRecord } from './api-key-store.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { ApiKeyAttributes, ApiKeyPermission, ApiKind, StockPermission } from './api-key-model.ts';
import type { SecretBox } from './secret-box.ts';

/** What administration shows of a key: everything but the secret. */
export type ApiKeyView = Omit<ApiKeyRecord, 'secretCiphertext'>;

export interface CreateApiKeyInput {
  /** Default `stock`. */
  api?: ApiKind;
  permissions?: ApiKeyPermission[];
  /** A stock key's one permission: shorthand for `permissions: [permission]`. */
  permission?: StockPermission;
  label?: string;
  ipWhitelist: string[];
  chainId: number;
  /** Stock keys only. */
  product?: string;
  userAddress?: string | null;
  expiresAt?: number | null;
}

export type UpdateApiKeyInput = ApiKeyPatch & { permission?: StockPermission };

/** The decrypted key as an auth hook needs it; lives only in process memory. */
export interface AuthKey extends ApiKeyAttributes {
  apiKey: string;
  secret: string;
  /** The secret prepared once per cached lookup for node's HMAC. */
  hmacKey: KeyObject;
}

export interface ApiKeyService {
  create(input: CreateApiKeyInput): Promise<{ key: ApiKeyView; apiSecret: string }>;
  list(filter?: { api?: ApiKind; userAddress?: string }): Promise<ApiKeyView[]>;
  get(apiKey: string): Promise<ApiKeyView | undefined>;
  update(apiKey: string, patch: UpdateApiKeyInput): Promise<ApiKeyView>;
  revoke(apiKey: string): Promise<void>;
  lookupForAuth(apiKey: string): Promise<AuthKey | undefined>;
  /** The cached lookup without waiting: `{ key }` on a fresh, settled entry (key undefined for an unknown key), else undefined. */
  cachedForAuth(apiKey: string): { key: AuthKey | undefined } | undefined;
  /** Drops the cached lookup so a change made by this instance applies at once. */
  invalidate(apiKey?: string): void;
}

/** Beyond this many cached keys the cache starts afresh: a bound on memory, not a policy. */
const MAX_CACHE = 10_000;

interface CacheEntry {
  at: number;
  /** Shared by every request that misses while the read runs. */
  pending: Promise<AuthKey | undefined>;
  /** Set once the read has answered. */
  settled?: { key: AuthKey | undefined };
}

function view(rec: ApiKeyRecord): ApiKeyView {
  const { secretCiphertext: _omit, ...rest } = rec;
  return rest;
}

function permissionsOf(input: { permissions?: ApiKeyPermission[]; permission?: StockPermission }): ApiKeyPermission[] | undefined {
  if (input.permission !== undefined && input.permissions !== undefined) throw new ValidationError('permission', 'give permission or permissions, not both');
  return input.permission !== undefined ? [input.permission] : input.permissions;
}

export function createApiKeyService(opts: {
  db: Db;
  secretBox: SecretBox;
  /** How long a lookup is reused: the longest a revocation made elsewhere takes to apply here. */
  cacheTtlMs: number;
  now?: () => number;
}): ApiKeyService {
  const { db, secretBox } = opts;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, CacheEntry>();

  function fresh(apiKey: string): CacheEntry | undefined {
    const hit = cache.get(apiKey);
    return hit && now() - hit.at < opts.cacheTtlMs ? hit : undefined;
  }

  async function load(apiKey: string): Promise<AuthKey | undefined> {
    const rec = await getApiKey(db, apiKey);
    if (!rec) return undefined;
    const { secretCiphertext, createdAt: _c, updatedAt: _u, ...attributes } = rec;
    const secret = secretBox.decrypt(secretCiphertext);
    return { ...attributes, secret, hmacKey: createSecretKey(Buffer.from(secret, 'utf8')) };
  }

  return {
    async create(input) {
      const t = now();
      if (input.expiresAt != null && input.expiresAt <= t) throw new ValidationError('expiresAt', 'must be in the future');
      const api = input.api ?? 'stock';
      const apiSecret = randomBytes(32).toString('base64url');
      const rec: ApiKeyRecord = {
        apiKey: randomBytes(16).toString('hex'),
        secretCiphertext: secretBox.encrypt(apiSecret),
        api,
        permissions: permissionsOf(input) ?? [],
        label: input.label ?? '',
        ipWhitelist: input.ipWhitelist,
        chainId: input.chainId,
        product: input.product ?? '',
        userAddress: input.userAddress ?? null,
        active: true,
        expiresAt: input.expiresAt ?? null,
        createdAt: t,
        updatedAt: t,
      };
      return { key: view(await insertApiKey(db, rec)), apiSecret };
    },
    async list(filter) {
      return (await listApiKeys(db, filter)).map(view);
    },
    async get(apiKey) {
      const rec = await getApiKey(db, apiKey);
      return rec && view(rec);
    },
    async update(apiKey, patch) {
      const { permission: _p, ...rest } = patch;
      const rec = await updateApiKey(db, apiKey, { ...rest, permissions: permissionsOf(patch) });
      if (!rec) throw new NotFoundError('apiKey');
      cache.delete(apiKey);
      return view(rec);
    },
    async revoke(apiKey) {
      if (!(await revokeApiKey(db, apiKey))) throw new NotFoundError('apiKey');
      cache.delete(apiKey);
    },
    cachedForAuth(apiKey) {
      return fresh(apiKey)?.settled;
    },
    lookupForAuth(apiKey) {
      const hit = fresh(apiKey);
      if (hit) return hit.pending;
      if (cache.size >= MAX_CACHE) cache.clear();
      const entry: CacheEntry = { at: now(), pending: load(apiKey) };
      cache.set(apiKey, entry);
      // An update or revocation while the read runs deletes the entry: the read still answers the
      // requests waiting on it but is never served again. A failed read is not remembered.
      entry.pending.then(
        (key) => void (entry.settled = { key }),
        () => void (cache.get(apiKey) === entry && cache.delete(apiKey)),
      );
      return entry.pending;
    },
    invalidate(apiKey) {
      if (apiKey === undefined) cache.clear();
      else cache.delete(apiKey);
    },
  };
}
