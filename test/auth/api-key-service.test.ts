import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createApiKeyService, type ApiKeyService } from '../../src/auth/api-key-service.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

describe.each(testDatabases)('API key service: the authentication cache ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  let clock = 1_000_000;

  function service(): ApiKeyService {
    return createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 5_000, now: () => clock });
  }

  const input = { permission: 'READ_ONLY' as const, ipWhitelist: ['127.0.0.1'], chainId: 31337, product: 'STOCK' };

  it('serves a key from the cache until its entry expires, then reads it again', async () => {
    const keys = service();
    const { key } = await keys.create(input);
    const first = await keys.lookupForAuth(key.apiKey);
    expect(first?.active).toBe(true);
    expect(keys.cachedForAuth(key.apiKey)?.key).toBe(first);
    clock += 4_999;
    expect(await keys.lookupForAuth(key.apiKey)).toBe(first);
    clock += 2;
    expect(keys.cachedForAuth(key.apiKey)).toBeUndefined();
    const again = await keys.lookupForAuth(key.apiKey);
    expect(again).not.toBe(first);
    expect(again?.secret).toBe(first?.secret);
  });

  it('lets concurrent misses share one read: every request in flight gets the same key', async () => {
    const keys = service();
    const { key, apiSecret } = await keys.create(input);
    const all = await Promise.all(Array.from({ length: 16 }, () => keys.lookupForAuth(key.apiKey)));
    expect(new Set(all).size).toBe(1);
    expect(all[0]?.secret).toBe(apiSecret);
    // An unknown key is a shared miss too, and is remembered as unknown.
    const unknown = await Promise.all([keys.lookupForAuth('0'.repeat(32)), keys.lookupForAuth('0'.repeat(32))]);
    expect(unknown).toEqual([undefined, undefined]);
    expect(keys.cachedForAuth('0'.repeat(32))).toEqual({ key: undefined });
  });

  it('forgets a key on revocation and update, even with a read in flight', async () => {
    const keys = service();
    const { key } = await keys.create(input);
    expect((await keys.lookupForAuth(key.apiKey))?.active).toBe(true);
    const inFlight = (clock += 10_000, keys.lookupForAuth(key.apiKey));
    await keys.revoke(key.apiKey);
    await inFlight;
    expect((await keys.lookupForAuth(key.apiKey))?.active).toBe(false);

    const other = (await keys.create(input)).key;
    expect((await keys.lookupForAuth(other.apiKey))?.permissions).toEqual(['READ_ONLY']);
    await keys.update(other.apiKey, { permission: 'WRITABLE' });
    expect((await keys.lookupForAuth(other.apiKey))?.permissions).toEqual(['WRITABLE']);
  });

  it('does not remember a failed read', async () => {
    const keys = service();
    const { key } = await keys.create(input);
    const closed = await open();
    await closed.close();
    const broken = createApiKeyService({ db: closed, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 5_000, now: () => clock });
    await expect(broken.lookupForAuth(key.apiKey)).rejects.toBeDefined();
    expect(broken.cachedForAuth(key.apiKey)).toBeUndefined();
  });
});

describe.each(testDatabases)('API key service: keys of both APIs ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const keys = () => createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 0 });

  it('creates a perp key whose secret signs like any other and whose fields are normalised', async () => {
    const svc = keys();
    const { key, apiSecret } = await svc.create({
      api: 'perp',
      permissions: ['TRADE', 'READ'],
      ipWhitelist: [' 127.0.0.1 '],
      chainId: 31337,
      userAddress: '0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
      label: 'bot',
    });
    expect(key).toMatchObject({
      api: 'perp',
      permissions: ['READ', 'TRADE'],
      ipWhitelist: ['127.0.0.1'],
      product: '',
      userAddress: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
      active: true,
    });
    expect(key).not.toHaveProperty('secretCiphertext');
    const auth = await svc.lookupForAuth(key.apiKey);
    expect(auth?.secret).toBe(apiSecret);
    expect(auth?.permissions).toEqual(['READ', 'TRADE']);
    expect((await svc.list({ api: 'perp' })).map((k) => k.apiKey)).toEqual([key.apiKey]);
    expect(await svc.list({ api: 'stock' })).toEqual([]);
  });

  it('refuses what the model refuses, naming the field', async () => {
    const svc = keys();
    const base = { ipWhitelist: ['127.0.0.1'], chainId: 31337, product: 'STOCK' };
    await expect(svc.create({ ...base, permission: 'READ_ONLY', permissions: ['WRITABLE'] })).rejects.toThrow(/^permission: /);
    await expect(svc.create({ ...base })).rejects.toThrow(/^permissions: must be a non-empty list$/);
    await expect(svc.create({ ...base, permission: 'READ_ONLY', ipWhitelist: ['1.2.3'] })).rejects.toThrow('ipWhitelist: not an IP address: 1.2.3');
    await expect(svc.create({ ...base, permission: 'READ_ONLY', userAddress: '0x1234' })).rejects.toThrow(/^userAddress: /);
    await expect(svc.create({ ...base, permission: 'READ_ONLY', expiresAt: 1 })).rejects.toThrow('expiresAt: must be in the future');
    await expect(svc.create({ ...base, api: 'perp', permissions: ['READ'] })).rejects.toThrow('product: perp keys have no product scope');
    await expect(svc.create({ ...base, permission: 'READ_ONLY', chainId: Number('x') })).rejects.toThrow('chainId: must be a positive integer');
    expect(await svc.list()).toEqual([]);
  });
});
