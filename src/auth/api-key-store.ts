/**
 * API keys of both APIs in one table. Every write goes through the model's one validation
 * (src/auth/api-key-model.ts), so a row in the table is always a valid key.
 */
import type { Selectable } from 'kysely';
import {
  scopesAfterPatch,
  validateApiKeyAttributes,
  type ApiKeyAttributes,
  type ApiKeyAttributesInput,
  type ApiKind,
  type ApiKeyPermission,
  type ScopePatch,
  type StockScope,
} from './api-key-model.ts';
import { ConflictError } from '../errors/app-error.ts';
import { kyselyOf, type DbExecutor } from '../storage/database.ts';
import type { ApiKeysTable } from '../storage/schema.ts';
import { isUniqueViolation } from '../storage/storage-errors.ts';
import { withTransaction } from '../storage/transaction.ts';

export interface ApiKeyRecord extends ApiKeyAttributes {
  apiKey: string;
  /** The API secret encrypted at rest; this layer never sees the clear secret. */
  secretCiphertext: string;
  createdAt: number;
  updatedAt: number;
}

/** What a writer gives: a stock key's scopes may be left out (ApiKeyAttributesInput). */
export type ApiKeyRecordInput = Omit<ApiKeyRecord, 'scopes'> & Pick<ApiKeyAttributesInput, 'scopes'>;

/**
 * What an update may change: everything but the key's identity, its API and its secret. A stock
 * key's scopes change as a whole list or by scopes added and removed (ScopePatch, checked by
 * scopesAfterPatch inside the update's transaction).
 */
export type ApiKeyPatch = Partial<Omit<ApiKeyAttributes, 'api' | 'scopes'>> & Omit<ScopePatch, 'chainId' | 'product' | 'permissions'>;

const PATCH_FIELDS = ['permissions', 'label', 'ipWhitelist', 'chainId', 'product', 'userAddress', 'active', 'expiresAt'] as const satisfies ReadonlyArray<keyof ApiKeyPatch>;

function toRow(rec: ApiKeyRecordInput): Selectable<ApiKeysTable> {
  const a = validateApiKeyAttributes(rec);
  return {
    api_key: rec.apiKey,
    api: a.api,
    secret_ciphertext: rec.secretCiphertext,
    label: a.label,
    permissions: JSON.stringify(a.permissions),
    scopes: JSON.stringify(a.scopes),
    ip_whitelist: JSON.stringify(a.ipWhitelist),
    chain_id: a.chainId,
    product: a.product,
    user_address: a.userAddress,
    active: a.active ? 1 : 0,
    expires_at: a.expiresAt,
    created_at: rec.createdAt,
    updated_at: rec.updatedAt,
  };
}

function fromRow(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    apiKey: row.api_key,
    api: row.api as ApiKind,
    secretCiphertext: row.secret_ciphertext,
    label: row.label,
    permissions: JSON.parse(row.permissions) as ApiKeyPermission[],
    scopes: JSON.parse(row.scopes) as StockScope[],
    ipWhitelist: JSON.parse(row.ip_whitelist) as string[],
    chainId: Number(row.chain_id),
    product: row.product,
    userAddress: row.user_address,
    active: Number(row.active) === 1,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * Validates and stores a new key; answers it as stored (normalised: lower-case address, trimmed
 * IPs, permissions in canonical order, a stock key's scopes as objects). ConflictError when the
 * apiKey exists already.
 */
export async function insertApiKey(db: DbExecutor, rec: ApiKeyRecordInput): Promise<ApiKeyRecord> {
  const row = toRow(rec);
  try {
    await kyselyOf(db).insertInto('api_keys').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('apiKey: already exists', { cause: err });
    throw err;
  }
  return fromRow(row);
}

export async function getApiKey(db: DbExecutor, apiKey: string): Promise<ApiKeyRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('api_keys').selectAll().where('api_key', '=', apiKey).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Keys, active or not, oldest first; optionally only one API's, or only those bound to a wallet. */
export async function listApiKeys(db: DbExecutor, filter: { api?: ApiKind; userAddress?: string } = {}): Promise<ApiKeyRecord[]> {
  let q = kyselyOf(db).selectFrom('api_keys').selectAll();
  if (filter.api !== undefined) q = q.where('api', '=', filter.api);
  if (filter.userAddress !== undefined) q = q.where('user_address', '=', filter.userAddress.toLowerCase());
  const rows = await q.orderBy('created_at').orderBy('api_key').execute();
  return rows.map(fromRow);
}

/**
 * Changes the given fields (an `undefined` field is left alone; `null` clears userAddress or
 * expiresAt), validates the key as a whole and sets updatedAt to now. Answers the updated record,
 * or undefined when no such key.
 */
export async function updateApiKey(db: DbExecutor, apiKey: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined> {
  return withTransaction(db, async (tx) => {
    const current = await getApiKey(tx, apiKey);
    if (!current) return undefined;
    const scopes = scopesAfterPatch(current, patch);
    const next: ApiKeyRecordInput = { ...current, updatedAt: Date.now() };
    for (const field of PATCH_FIELDS) {
      if (patch[field] !== undefined) (next as unknown as Record<string, unknown>)[field] = patch[field];
    }
    // Unchanged scopes stay as they are; a one-scope stock key whose chainId, product or permission
    // changed gets its one scope rebuilt from them by the validation (scopes left out).
    const legacy = patch.chainId !== undefined || patch.product !== undefined || patch.permissions !== undefined;
    if (scopes !== undefined) next.scopes = scopes;
    else if (legacy && current.api === 'stock') next.scopes = undefined;
    const row = toRow(next);
    const { api_key: _id, api: _api, created_at: _created, secret_ciphertext: _secret, ...set } = row;
    await tx.updateTable('api_keys').set(set).where('api_key', '=', apiKey).execute();
    return fromRow(row);
  });
}

/**
 * Deactivates the key (the row stays for audit). True when the key exists, including one that was
 * revoked already, so revoking twice is harmless; false when there is no such key.
 */
export async function revokeApiKey(db: DbExecutor, apiKey: string): Promise<boolean> {
  const res = await kyselyOf(db)
    .updateTable('api_keys')
    .set({ active: 0, updated_at: Date.now() })
    .where('api_key', '=', apiKey)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** A key's stored secret, as the master-key rotation walks the table. */
export interface SecretRow {
  apiKey: string;
  secretCiphertext: string;
}

/** Up to `limit` keys of both APIs, active or not, in api_key order after `after` (keyset paging). */
export async function listSecretCiphertexts(db: DbExecutor, opts: { after?: string; limit: number }): Promise<SecretRow[]> {
  let q = kyselyOf(db).selectFrom('api_keys').select(['api_key', 'secret_ciphertext']);
  if (opts.after !== undefined) q = q.where('api_key', '>', opts.after);
  const rows = await q.orderBy('api_key').limit(opts.limit).execute();
  return rows.map((r) => ({ apiKey: r.api_key, secretCiphertext: r.secret_ciphertext }));
}

/**
 * Replaces a key's stored secret only while it still holds `expected` (compare and set), so a
 * rotation and an instance migrating a v1 row never overwrite each other's newer ciphertext.
 * updated_at is left alone: the secret itself does not change. True when the row was replaced.
 */
export async function replaceSecretCiphertext(db: DbExecutor, apiKey: string, expected: string, next: string): Promise<boolean> {
  const res = await kyselyOf(db)
    .updateTable('api_keys')
    .set({ secret_ciphertext: next })
    .where('api_key', '=', apiKey)
    .where('secret_ciphertext', '=', expected)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}
