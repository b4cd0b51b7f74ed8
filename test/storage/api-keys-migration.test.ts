import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { getApiKey, insertApiKey, listApiKeys } from '../../src/auth/api-key-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { migrator } from './migration-test-helpers.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';


/** A row as 0001 stored it: one `permission` column. */
function legacyRow(apiKey: string, permission: string, createdAt: number) {
  return sql`insert into api_keys (api_key, secret_ciphertext, label, permission, ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at)
    values (${apiKey}, ${'v1.a.b.c'}, ${'old ' + permission}, ${permission}, ${'["127.0.0.1","::1"]'}, 31337, 'STOCK',
      ${permission === 'WRITABLE' ? '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' : null}, 1, null, ${createdAt}, ${createdAt})`;
}

describe.each(testDatabases)('migration 0004: API keys of both APIs ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('turns every existing key into a stock key with its one permission, and back', async () => {
    const m = await migrator(db);
    expect((await m.migrateTo('0003-events-by-position')).error).toBeUndefined();
    await legacyRow('ak_ro', 'READ_ONLY', 10).execute(db.kysely);
    await legacyRow('ak_rw', 'WRITABLE', 20).execute(db.kysely);

    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect(await listApiKeys(db)).toEqual([
      {
        apiKey: 'ak_ro',
        api: 'stock',
        secretCiphertext: 'v1.a.b.c',
        label: 'old READ_ONLY',
        permissions: ['READ_ONLY'],
        ipWhitelist: ['127.0.0.1', '::1'],
        chainId: 31337,
        product: 'STOCK',
        // 0029: the one scope of its chain, product and permission.
        scopes: [{ chainId: 31337, productType: 'STOCK', access: 'READ_ONLY' }],
        userAddress: null,
        active: true,
        expiresAt: null,
        createdAt: 10,
        updatedAt: 10,
      },
      expect.objectContaining({ apiKey: 'ak_rw', api: 'stock', permissions: ['WRITABLE'], userAddress: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' }),
    ]);
    // The table now takes perp keys and refuses an unknown API even past the store.
    await insertApiKey(db, { ...(await getApiKey(db, 'ak_ro'))!, apiKey: 'ak_perp', api: 'perp', product: '', scopes: [], permissions: ['READ', 'TRADE'], createdAt: 30 });
    const bad = await sql`update api_keys set api = 'spot' where api_key = 'ak_ro'`.execute(db.kysely).then(
      () => 'accepted',
      () => 'refused',
    );
    expect(bad).toBe('refused');

    // Down: perp keys cannot be expressed and go; stock keys keep their permission.
    expect((await m.migrateTo('0003-events-by-position')).error).toBeUndefined();
    const rows = await sql<{ api_key: string; permission: string }>`select api_key, permission from api_keys order by api_key`.execute(db.kysely);
    expect(rows.rows).toEqual([
      { api_key: 'ak_ro', permission: 'READ_ONLY' },
      { api_key: 'ak_rw', permission: 'WRITABLE' },
    ]);
    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect((await getApiKey(db, 'ak_rw'))?.permissions).toEqual(['WRITABLE']);
    // The wallet index survives the SQLite rebuild.
    const indexes = db.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'api_keys'`.execute(db.kysely)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'api_keys'`.execute(db.kysely)).rows.map((r) => r.name);
    expect(indexes).toContain('api_keys_user_address_idx');
  });
});
