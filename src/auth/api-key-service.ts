/**
 * Stock API keys: creation with a random secret (shown once, stored encrypted), administration,
 * and the per-instance cached lookup the authentication hook uses on every request.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/database.ts';
import { getApiKey, insertApiKey, listApiKeys, revokeApiKey, updateApiKey, type ApiKeyRecord } from '../storage/api-key-store.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { isValidIp } from './ip-match.ts';
import { HmacSha256 } from './stock-signature.ts';
import type { SecretBox } from './secret-box.ts';

export type Permission = 'READ_ONLY' | 'WRITABLE';

/** What administration shows of a key: everything but the secret. */
export type ApiKeyView = Omit<ApiKeyRecord, 'secretCiphertext'>;

export interface CreateApiKeyInput {
  label?: string;
  permission: Permission;
  ipWhitelist: string[];
  chainId: number;
  product: string;
  userAddress?: string | null;
  expiresAt?: number | null;
}

export type UpdateApiKeyInput = Partial<Omit<CreateApiKeyInput, 'ipWhitelist'>> & { ipWhitelist?: string[]; active?: boolean };

/** The decrypted key as the auth hook needs it; lives only in process memory. */
export interface AuthKey {
  apiKey: string;
  secret: string;
  /** HMAC under `secret` with its padded blocks prepared once per cached lookup. */
  signer: HmacSha256;
  permission: Permission;
  ipWhitelist: string[];
  chainId: number;
  product: string;
  userAddress: string | null;
  active: boolean;
  expiresAt: number | null;
}

export interface ApiKeyService {
  create(input: CreateApiKeyInput): Promise<{ key: ApiKeyView; apiSecret: string }>;
  list(): Promise<ApiKeyView[]>;
  get(apiKey: string): Promise<ApiKeyView | undefined>;
  update(apiKey: string, patch: UpdateApiKeyInput): Promise<ApiKeyView>;
  revoke(apiKey: string): Promise<void>;
  lookupForAuth(apiKey: string): Promise<AuthKey | undefined>;
  /** The cached lookup without waiting: `{ key }` on a fresh cache entry (key undefined for an unknown key), else undefined. */
  cachedForAuth(apiKey: string): { key: AuthKey | undefined } | undefined;
  /** Drops the cached lookup so a change made by this instance applies at once. */
  invalidate(apiKey?: string): void;
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

function view(rec: ApiKeyRecord): ApiKeyView {
  const { secretCiphertext: _omit, ...rest } = rec;
  return rest;
}

function checkWhitelist(list: string[]): string[] {
  for (const ip of list) if (!isValidIp(ip)) throw new ValidationError('ipWhitelist', `not an IP address: ${ip}`);
  return list.map((ip) => ip.trim());
}

function checkAddress(addr: string | null | undefined): string | null {
  if (addr === undefined || addr === null || addr === '') return null;
  if (!ADDRESS_RE.test(addr)) throw new ValidationError('userAddress', 'must be a 0x-prefixed 20-byte hex address');
  return addr.toLowerCase();
}

function checkPermission(p: string): Permission {
  if (p !== 'READ_ONLY' && p !== 'WRITABLE') throw new ValidationError('permission', 'must be READ_ONLY or WRITABLE');
  return p;
}

export function createApiKeyService(opts: {
  db: Db;
  secretBox: SecretBox;
  cacheTtlMs: number;
  now?: () => number;
}): ApiKeyService {
  const { db, secretBox } = opts;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { at: number; key: AuthKey | undefined }>();
  const loading = new Map<string, Promise<AuthKey | undefined>>();
  const MAX_CACHE = 10_000;

  return {
    async create(input) {
      const t = now();
      if (input.expiresAt != null && input.expiresAt <= t) throw new ValidationError('expiresAt', 'must be in the future');
      const apiSecret = randomBytes(32).toString('base64url');
      const rec: ApiKeyRecord = {
        apiKey: randomBytes(16).toString('hex'),
        secretCiphertext: secretBox.encrypt(apiSecret),
        label: input.label ?? '',
        permission: checkPermission(input.permission),
        ipWhitelist: checkWhitelist(input.ipWhitelist),
        chainId: input.chainId,
        product: input.product,
        userAddress: checkAddress(input.userAddress),
        active: true,
        expiresAt: input.expiresAt ?? null,
        createdAt: t,
        updatedAt: t,
      };
      await insertApiKey(db, rec);
      return { key: view(rec), apiSecret };
    },
    async list() {
      return (await listApiKeys(db)).map(view);
    },
    async get(apiKey) {
      const rec = await getApiKey(db, apiKey);
      return rec && view(rec);
    },
    async update(apiKey, patch) {
      const clean: Parameters<typeof updateApiKey>[2] = {};
      if (patch.label !== undefined) clean.label = patch.label;
      if (patch.permission !== undefined) clean.permission = checkPermission(patch.permission);
      if (patch.ipWhitelist !== undefined) clean.ipWhitelist = checkWhitelist(patch.ipWhitelist);
      if (patch.chainId !== undefined) clean.chainId = patch.chainId;
      if (patch.product !== undefined) clean.product = patch.product;
      if (patch.userAddress !== undefined) clean.userAddress = checkAddress(patch.userAddress);
      if (patch.active !== undefined) clean.active = patch.active;
      if (patch.expiresAt !== undefined) clean.expiresAt = patch.expiresAt;
      const rec = await updateApiKey(db, apiKey, clean);
      if (!rec) throw new NotFoundError('apiKey');
      forget(apiKey);
      return view(rec);
    },
    async revoke(apiKey) {
      if (!(await revokeApiKey(db, apiKey))) throw new NotFoundError('apiKey');
      forget(apiKey);
    },
    cachedForAuth(apiKey) {
      const hit = cache.get(apiKey);
      return hit && now() - hit.at < opts.cacheTtlMs ? hit : undefined;
    },
    lookupForAuth(apiKey) {
      const t = now();
      const hit = cache.get(apiKey);
      if (hit && t - hit.at < opts.cacheTtlMs) return Promise.resolve(hit.key);
      // When the entry expires under load, every request in flight misses at once: they share one
      // read (and one decryption) instead of each querying the database.
      const inFlight = loading.get(apiKey);
      if (inFlight !== undefined) return inFlight;
      const pending: Promise<AuthKey | undefined> = load(apiKey).then(
        (key) => {
          // An update or revocation while this read ran made it stale: answer it, never cache it.
          if (loading.get(apiKey) === pending) {
            loading.delete(apiKey);
            if (cache.size >= MAX_CACHE) cache.clear();
            cache.set(apiKey, { at: t, key });
          }
          return key;
        },
        (err: unknown) => {
          if (loading.get(apiKey) === pending) loading.delete(apiKey);
          throw err;
        },
      );
      loading.set(apiKey, pending);
      return pending;
    },
    invalidate(apiKey) {
      if (apiKey === undefined) {
        cache.clear();
        loading.clear();
      } else {
        forget(apiKey);
      }
    },
  };

  function forget(apiKey: string): void {
    cache.delete(apiKey);
    loading.delete(apiKey);
  }

  async function load(apiKey: string): Promise<AuthKey | undefined> {
    const rec = await getApiKey(db, apiKey);
    if (!rec) return undefined;
    const secret = secretBox.decrypt(rec.secretCiphertext);
    return {
      apiKey: rec.apiKey,
      secret,
      signer: new HmacSha256(secret),
      permission: rec.permission,
      ipWhitelist: rec.ipWhitelist,
      chainId: rec.chainId,
      product: rec.product,
      userAddress: rec.userAddress,
      active: rec.active,
      expiresAt: rec.expiresAt,
    };
  }
}
