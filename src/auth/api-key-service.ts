/**
 * API keys of both APIs: creation with a random secret (shown once, stored encrypted),
 * administration, and the per-instance cached lookup the authentication hooks use on every request.
 * Validation is the model's (api-key-model.ts), applied by the store on every write.
 */
import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { Db } from '../storage/database.ts';
import { withTransaction } from '../storage/transaction.ts';
import {
  getApiKey,
  insertApiKey,
  listApiKeys,
  listSecretCiphertexts,
  replaceSecretCiphertext,
  revokeApiKey,
  updateApiKey,
  type ApiKeyPatch,
  type ApiKeyRecord,
  type ApiKeyRecordInput,
} from './api-key-store.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { ApiKeyAttributes, ApiKeyPermission, ApiKind, StockPermission, StockScopeInput } from './api-key-model.ts';
import { SecretDecryptError, type SecretBox } from './secret-box.ts';

/** The part of a pino logger the key service uses. */
export interface KeyServiceLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** What administration shows of a key: everything but the secret. */
export type ApiKeyView = Omit<ApiKeyRecord, 'secretCiphertext'>;

export interface CreateApiKeyInput {
  /** Default `stock`. */
  api?: ApiKind;
  /**
   * Stock keys: every `(chainId, productType, access)` the key may be used under, as objects or in
   * the string form `8453:Anchored:WRITABLE`. Without it a stock key holds the one scope of
   * `chainId`, `product` and `permission`, as keys did before scopes; with it those are left out.
   */
  scopes?: StockScopeInput[];
  permissions?: ApiKeyPermission[];
  /** A stock key's one permission: shorthand for `permissions: [permission]`. */
  permission?: StockPermission;
  label?: string;
  ipWhitelist: string[];
  /** Perp keys, and stock keys given without scopes. */
  chainId?: number;
  /** Stock keys without scopes only. */
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
  /** Where a refused stored secret is reported (apiKey and reason only). */
  log?: KeyServiceLog;
}): ApiKeyService {
  const { db, secretBox } = opts;
  const log = opts.log;
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
    let opened;
    try {
      opened = secretBox.open(secretCiphertext, { aad: apiKey });
    } catch (err) {
      if (!(err instanceof SecretDecryptError)) throw err;
      // A ciphertext moved from another row, tampered, or under a master key this instance lacks:
      // the key is refused like an unknown one (the API's usual 401), never a 500.
      log?.warn({ apiKey, reason: err.reason, ...err.detail }, 'api key refused: its stored secret failed authentication');
      return undefined;
    }
    const secret = opened.plain;
    if (opened.legacy) {
      // A v1 row (no key id, not bound to its row) is rewritten as v2 on its first read. Compare
      // and set: a rotation that rewrote it meanwhile wins. A failed write only delays the migration.
      try {
        await replaceSecretCiphertext(db, apiKey, secretCiphertext, secretBox.encrypt(secret, { aad: apiKey }));
      } catch (err) {
        // The error's name and code only: a driver's message may quote the values it was given.
        const e = err as { name?: string; code?: unknown };
        log?.warn({ apiKey, error: e?.name, code: e?.code }, 'api key: could not rewrite its v1 secret as v2; will retry on a later read');
      }
    }
    return { ...attributes, secret, hmacKey: createSecretKey(Buffer.from(secret, 'utf8')) };
  }

  return {
    async create(input) {
      const t = now();
      if (input.expiresAt != null && input.expiresAt <= t) throw new ValidationError('expiresAt', 'must be in the future');
      const api = input.api ?? 'stock';
      if (api === 'stock' && input.scopes !== undefined) {
        // Which of two descriptions of the key's rights was meant would be a guess.
        const legacy = (['chainId', 'product', 'permission', 'permissions'] as const).filter((f) => input[f] !== undefined);
        if (legacy.length > 0) throw new ValidationError('scopes', `give scopes, or ${legacy.join(' and ')}, not both`);
      }
      const apiSecret = randomBytes(32).toString('base64url');
      const apiKey = randomBytes(16).toString('hex');
      const rec: ApiKeyRecordInput = {
        apiKey,
        secretCiphertext: secretBox.encrypt(apiSecret, { aad: apiKey }),
        api,
        scopes: input.scopes,
        permissions: permissionsOf(input) ?? [],
        label: input.label ?? '',
        ipWhitelist: input.ipWhitelist,
        // Left to the validation: with scopes, a stock key's chain and product are its first scope's.
        chainId: input.chainId as number,
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

/** Called after each committed batch of a re-encryption. */
export type ReencryptProgress = (batch: number, result: ReencryptResult) => void | Promise<void>;

export interface ReencryptResult {
  /** Rows rewritten under the box's current key. */
  rewritten: number;
  /** Rows already v2 under the current key. */
  current: number;
  /** Rows no key of the ring decrypts (left as they are: they were unusable already). */
  failed: string[];
  batches: number;
}

/**
 * Re-encrypts every API secret of both APIs (active and revoked) as v2 under `box`'s current key,
 * `batchSize` rows per transaction, while the APIs keep serving. Each row is replaced by compare
 * and set, so a row is always either its old ciphertext or the new one, both decryptable by a ring
 * holding both keys: a crash at any point leaves a table a rerun finishes. `afterBatch` runs after
 * each committed batch (progress; tests throw from it to simulate a crash).
 */
export async function reencryptApiSecrets(
  db: Db,
  box: SecretBox,
  opts: { batchSize?: number; afterBatch?: ReencryptProgress } = {},
): Promise<ReencryptResult> {
  const limit = opts.batchSize ?? 100;
  const target = box.currentKeyId();
  const result: ReencryptResult = { rewritten: 0, current: 0, failed: [], batches: 0 };
  // A lost compare and set (an instance migrated a v1 row meanwhile) leaves the row for another pass.
  for (let pass = 0; pass < 10; pass++) {
    let after: string | undefined;
    let lost = 0;
    result.current = 0;
    result.failed = [];
    for (;;) {
      const batch = await withTransaction(db, async (tx) => {
        const rows = await listSecretCiphertexts(tx, { after, limit });
        for (const row of rows) {
          if (box.keyIdOf(row.secretCiphertext) === target) {
            // Under the target key already; not re-checked here, the auth path authenticates it.
            result.current++;
            continue;
          }
          let plain: string;
          try {
            plain = box.decrypt(row.secretCiphertext, { aad: row.apiKey });
          } catch (err) {
            if (!(err instanceof SecretDecryptError)) throw err;
            result.failed.push(row.apiKey);
            continue;
          }
          if (await replaceSecretCiphertext(tx, row.apiKey, row.secretCiphertext, box.encrypt(plain, { aad: row.apiKey }))) result.rewritten++;
          else lost++;
        }
        return rows;
      });
      if (batch.length === 0) break;
      after = batch[batch.length - 1]!.apiKey;
      result.batches++;
      await opts.afterBatch?.(result.batches, result);
      if (batch.length < limit) break;
    }
    if (lost === 0) break;
  }
  return result;
}
