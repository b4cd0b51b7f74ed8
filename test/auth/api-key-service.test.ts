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
    expect(keys.cachedForAuth('0'.repeat(32))).toEqual({ at: clock, key: undefined });
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
    expect((await keys.lookupForAuth(other.apiKey))?.permission).toBe('READ_ONLY');
    await keys.update(other.apiKey, { permission: 'WRITABLE' });
    expect((await keys.lookupForAuth(other.apiKey))?.permission).toBe('WRITABLE');
  });
});
