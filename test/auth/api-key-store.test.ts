import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, ValidationError } from '../../src/errors/app-error.ts';
import {
  getApiKey,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  updateApiKey,
  type ApiKeyRecord,
  type ApiKeyRecordInput,
} from '../../src/auth/api-key-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

/** A key as written before scopes: a stock key holds the one scope of its chain, product and permission. */
function record(overrides: Partial<ApiKeyRecordInput> = {}): ApiKeyRecordInput {
  return {
    apiKey: 'ak_0001',
    api: 'stock',
    secretCiphertext: 'v1:iv:ciphertext:tag',
    label: 'desk "A" — ünïcode',
    permissions: ['WRITABLE'],
    ipWhitelist: ['127.0.0.1', '::1', '2001:db8::42'],
    chainId: 31337,
    product: 'STOCK',
    userAddress: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    active: true,
    expiresAt: 1_900_000_000_123,
    createdAt: 1_700_000_000_001,
    updatedAt: 1_700_000_000_002,
    ...overrides,
  };
}

/** The record as the store answers it: with the scope its legacy fields describe (none for a perp key). */
function stored(rec: ApiKeyRecordInput): ApiKeyRecord {
  const scopes = rec.api === 'stock' ? [{ chainId: rec.chainId, productType: rec.product, access: rec.permissions[0] as 'READ_ONLY' | 'WRITABLE' }] : [];
  return { ...rec, scopes };
}

describe.each(testDatabases)('api-key-store ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('round-trips every field exactly', async () => {
    const rec = record();
    await insertApiKey(db, rec);
    expect(await getApiKey(db, rec.apiKey)).toEqual(stored(rec));
  });

  it('round-trips null expiry, null address, inactive and an empty whitelist', async () => {
    const rec = record({ apiKey: 'ak_null', expiresAt: null, userAddress: null, active: false, ipWhitelist: [], permissions: ['READ_ONLY'] });
    await insertApiKey(db, rec);
    const got = await getApiKey(db, 'ak_null');
    expect(got).toEqual(stored(rec));
    expect(got?.active).toBe(false);
    expect(got?.expiresAt).toBeNull();
  });

  it('stores the user address in lower case and rejects a malformed one', async () => {
    await insertApiKey(db, record({ userAddress: '0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266' }));
    expect((await getApiKey(db, 'ak_0001'))?.userAddress).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    await expect(insertApiKey(db, record({ apiKey: 'ak_bad', userAddress: '0x1234' }))).rejects.toBeInstanceOf(ValidationError);
    await expect(insertApiKey(db, record({ apiKey: 'ak_bad', permissions: ['ADMIN' as never] }))).rejects.toBeInstanceOf(ValidationError);
    await expect(insertApiKey(db, record({ apiKey: 'ak_bad', ipWhitelist: ['not-an-ip'] }))).rejects.toThrow('ipWhitelist: not an IP address: not-an-ip');
    expect(await getApiKey(db, 'ak_bad')).toBeUndefined();
  });

  it('answers undefined for an unknown key and ConflictError for a duplicate', async () => {
    expect(await getApiKey(db, 'nope')).toBeUndefined();
    await insertApiKey(db, record());
    await expect(insertApiKey(db, record({ label: 'second' }))).rejects.toBeInstanceOf(ConflictError);
    expect((await getApiKey(db, 'ak_0001'))?.label).toBe(record().label);
  });

  it('lists all keys oldest first', async () => {
    await insertApiKey(db, record({ apiKey: 'ak_c', createdAt: 30 }));
    await insertApiKey(db, record({ apiKey: 'ak_a', createdAt: 10, active: false }));
    await insertApiKey(db, record({ apiKey: 'ak_b', createdAt: 20 }));
    const list = await listApiKeys(db);
    expect(list.map((k) => k.apiKey)).toEqual(['ak_a', 'ak_b', 'ak_c']);
    expect(list[0]).toEqual(stored(record({ apiKey: 'ak_a', createdAt: 10, active: false })));
  });

  it('updates only the patched fields and bumps updatedAt', async () => {
    const rec = record();
    await insertApiKey(db, rec);
    const before = Date.now();
    const updated = await updateApiKey(db, rec.apiKey, {
      label: 'renamed',
      permissions: ['READ_ONLY'],
      ipWhitelist: ['10.0.0.1'],
      userAddress: null,
      expiresAt: null,
    });
    // A one-scope key's permission is its scope's access, changed with it.
    expect(updated).toEqual(
      stored({
        ...rec,
        label: 'renamed',
        permissions: ['READ_ONLY'],
        ipWhitelist: ['10.0.0.1'],
        userAddress: null,
        expiresAt: null,
        updatedAt: updated!.updatedAt,
      }),
    );
    expect(updated!.updatedAt).toBeGreaterThanOrEqual(before);
    expect(await getApiKey(db, rec.apiKey)).toEqual(updated);

    const again = await updateApiKey(db, rec.apiKey, {
      chainId: 1,
      product: 'STOCK2',
      active: false,
      userAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      expiresAt: 2_000_000_000_000,
    });
    expect(again).toMatchObject({
      label: 'renamed',
      chainId: 1,
      product: 'STOCK2',
      scopes: [{ chainId: 1, productType: 'STOCK2', access: 'READ_ONLY' }],
      active: false,
      userAddress: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      expiresAt: 2_000_000_000_000,
    });
  });

  it('keeps perp keys beside stock keys with their permission set in canonical order', async () => {
    await insertApiKey(db, record());
    const perp = record({ apiKey: 'ak_perp', api: 'perp', product: '', permissions: ['TRANSFER', 'READ'], createdAt: 1_700_000_000_100 });
    await insertApiKey(db, perp);
    expect(await getApiKey(db, 'ak_perp')).toEqual({ ...stored(perp), permissions: ['READ', 'TRANSFER'] });
    expect((await listApiKeys(db, { api: 'perp' })).map((k) => k.apiKey)).toEqual(['ak_perp']);
    expect((await listApiKeys(db, { api: 'stock' })).map((k) => k.apiKey)).toEqual(['ak_0001']);
    expect((await listApiKeys(db, { userAddress: '0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266' })).map((k) => k.apiKey)).toEqual(['ak_0001', 'ak_perp']);

    // One validation for both APIs: each API takes only its own permissions.
    await expect(insertApiKey(db, record({ apiKey: 'ak_x', api: 'perp', product: '', permissions: ['WRITABLE'] }))).rejects.toThrow(/^permissions: perp keys take any of READ, TRADE, TRANSFER$/);
    await expect(insertApiKey(db, record({ apiKey: 'ak_x', permissions: ['TRADE'] }))).rejects.toThrow(/^permissions: stock keys take one of READ_ONLY, WRITABLE$/);
    await expect(insertApiKey(db, record({ apiKey: 'ak_x', permissions: ['READ_ONLY', 'WRITABLE'] }))).rejects.toBeInstanceOf(ValidationError);
    await expect(insertApiKey(db, record({ apiKey: 'ak_x', api: 'perp', product: '', permissions: [] }))).rejects.toBeInstanceOf(ValidationError);
    await expect(insertApiKey(db, record({ apiKey: 'ak_x', api: 'spot' as never }))).rejects.toThrow('api: must be one of stock, perp');
    expect(await getApiKey(db, 'ak_x')).toBeUndefined();

    // An update is validated against the key's own API, which never changes.
    await expect(updateApiKey(db, 'ak_perp', { permissions: ['READ_ONLY'] })).rejects.toBeInstanceOf(ValidationError);
    expect((await updateApiKey(db, 'ak_perp', { permissions: ['TRADE', 'READ', 'TRADE'] }))?.permissions).toEqual(['READ', 'TRADE']);
    await expect(updateApiKey(db, 'ak_perp', { api: 'stock' } as never)).resolves.toMatchObject({ api: 'perp' });
    expect((await getApiKey(db, 'ak_perp'))?.permissions).toEqual(['READ', 'TRADE']);
  });

  it('answers undefined when updating an unknown key', async () => {
    expect(await updateApiKey(db, 'nope', { label: 'x' })).toBeUndefined();
  });

  it('revokes by deactivating; true while the key exists, false otherwise', async () => {
    await insertApiKey(db, record());
    expect(await revokeApiKey(db, 'ak_0001')).toBe(true);
    const got = await getApiKey(db, 'ak_0001');
    expect(got?.active).toBe(false);
    expect(got?.secretCiphertext).toBe(record().secretCiphertext);
    expect(await revokeApiKey(db, 'ak_0001')).toBe(true);
    expect(await revokeApiKey(db, 'nope')).toBe(false);
  });
});
