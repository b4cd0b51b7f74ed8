import type { Selectable, Updateable } from 'kysely';
import { ConflictError, ValidationError } from '../errors/app-error.ts';
import { kyselyOf, type DbExecutor } from './database.ts';
import type { ApiKeyPermission, ApiKeysTable } from './schema.ts';
import { isUniqueViolation } from './storage-errors.ts';

export interface ApiKeyRecord {
  apiKey: string;
  /** The API secret encrypted at rest; this layer never sees the clear secret. */
  secretCiphertext: string;
  label: string;
  permission: ApiKeyPermission;
  ipWhitelist: string[];
  chainId: number;
  product: string;
  /** Lower-case 0x address the key acts for, or null. Stored lower-case whatever case is given. */
  userAddress: string | null;
  active: boolean;
  /** ms since the epoch, or null for no expiry. */
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type ApiKeyPatch = Partial<
  Pick<ApiKeyRecord, 'label' | 'permission' | 'ipWhitelist' | 'chainId' | 'product' | 'userAddress' | 'active' | 'expiresAt'>
>;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const PERMISSIONS: readonly ApiKeyPermission[] = ['READ_ONLY', 'WRITABLE'];

function normalizeAddress(address: string | null): string | null {
  if (address === null) return null;
  if (!ADDRESS.test(address)) throw new ValidationError('userAddress', 'must be a 0x address of 40 hex digits');
  return address.toLowerCase();
}

function checkPermission(permission: string): ApiKeyPermission {
  if (!PERMISSIONS.includes(permission as ApiKeyPermission)) {
    throw new ValidationError('permission', 'must be READ_ONLY or WRITABLE');
  }
  return permission as ApiKeyPermission;
}

function checkWhitelist(list: string[]): string {
  if (!Array.isArray(list) || list.some((ip) => typeof ip !== 'string')) {
    throw new ValidationError('ipWhitelist', 'must be an array of strings');
  }
  return JSON.stringify(list);
}

function toRow(rec: ApiKeyRecord): Selectable<ApiKeysTable> {
  return {
    api_key: rec.apiKey,
    secret_ciphertext: rec.secretCiphertext,
    label: rec.label,
    permission: checkPermission(rec.permission),
    ip_whitelist: checkWhitelist(rec.ipWhitelist),
    chain_id: rec.chainId,
    product: rec.product,
    user_address: normalizeAddress(rec.userAddress),
    active: rec.active ? 1 : 0,
    expires_at: rec.expiresAt,
    created_at: rec.createdAt,
    updated_at: rec.updatedAt,
  };
}

function fromRow(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    apiKey: row.api_key,
    secretCiphertext: row.secret_ciphertext,
    label: row.label,
    permission: row.permission,
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

/** Throws ConflictError when the apiKey exists already. */
export async function insertApiKey(db: DbExecutor, rec: ApiKeyRecord): Promise<void> {
  try {
    await kyselyOf(db).insertInto('api_keys').values(toRow(rec)).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('apiKey: already exists', { cause: err });
    throw err;
  }
}

export async function getApiKey(db: DbExecutor, apiKey: string): Promise<ApiKeyRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('api_keys').selectAll().where('api_key', '=', apiKey).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Every key, active or not, oldest first. */
export async function listApiKeys(db: DbExecutor): Promise<ApiKeyRecord[]> {
  const rows = await kyselyOf(db).selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('api_key').execute();
  return rows.map(fromRow);
}

/**
 * Changes the given fields (an `undefined` field is left alone; `null` clears userAddress or
 * expiresAt) and sets updatedAt to now. Answers the updated record, or undefined when no such key.
 */
export async function updateApiKey(db: DbExecutor, apiKey: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined> {
  const set: Updateable<ApiKeysTable> = { updated_at: Date.now() };
  if (patch.label !== undefined) set.label = patch.label;
  if (patch.permission !== undefined) set.permission = checkPermission(patch.permission);
  if (patch.ipWhitelist !== undefined) set.ip_whitelist = checkWhitelist(patch.ipWhitelist);
  if (patch.chainId !== undefined) set.chain_id = patch.chainId;
  if (patch.product !== undefined) set.product = patch.product;
  if (patch.userAddress !== undefined) set.user_address = normalizeAddress(patch.userAddress);
  if (patch.active !== undefined) set.active = patch.active ? 1 : 0;
  if (patch.expiresAt !== undefined) set.expires_at = patch.expiresAt;
  const row = await kyselyOf(db)
    .updateTable('api_keys')
    .set(set)
    .where('api_key', '=', apiKey)
    .returningAll()
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
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
