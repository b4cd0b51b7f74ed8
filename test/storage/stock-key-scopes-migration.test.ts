/**
 * Migration 0029 (issue 39, docs/api-keys-secrets.md "Stock key scopes"): every stock key made
 * before scopes gets the one scope of its chain, product and permission, and authenticates exactly
 * as before, over real HTTP through the stock auth hook; a perp key gets none. Down keeps each
 * key's first scope in its chain_id, product and permissions.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { StockClient } from '@tokex/sdk';
import { getApiKey, listApiKeys } from '../../src/auth/api-key-store.ts';
import { createApiKeyService } from '../../src/auth/api-key-service.ts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { createHttpServer } from '../../src/http/create-http-server.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createStockAuthHook } from '../../src/stock/stock-auth-hook.ts';
import { stockEnvelope, stockOk } from '../../src/stock/stock-envelope.ts';
import type { Db } from '../../src/storage/database.ts';
import { migrator } from './migration-test-helpers.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const CHAIN_ID = 31337;
const PRODUCT = 'STOCK';
const WALLET = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BEFORE = '0028-perp-reserve-leaf-flows';

/** A key row as release 0.2.0 (migrations up to 0028) wrote it: no scopes column. */
function rowBefore(apiKey: string, api: string, ciphertext: string, permissions: string, product: string, createdAt: number) {
  return sql`insert into api_keys (api_key, api, secret_ciphertext, label, permissions, ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at)
    values (${apiKey}, ${api}, ${ciphertext}, ${'made before scopes'}, ${permissions}, ${'["127.0.0.1","::1"]'}, ${CHAIN_ID}, ${product}, ${WALLET}, 1, null, ${createdAt}, ${createdAt})`;
}

let server: FastifyInstance | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The stock auth hook of a service on CHAIN_ID / PRODUCT over `db`'s keys, with one GET and one POST route. */
async function serve(db: Db, box: ReturnType<typeof createSecretBox>): Promise<string> {
  const keys = createApiKeyService({ db, secretBox: box, cacheTtlMs: 0 });
  const app = createHttpServer({ logger: createLogger({ level: 'silent' }), envelope: stockEnvelope, bodyLimitBytes: 65_536 });
  const auth = createStockAuthHook({ keys, nonces: createMemoryNonceStore(), chainId: CHAIN_ID, product: PRODUCT, prefix: '' });
  await app.register(
    async (api) => {
      api.addHook('preValidation', auth);
      api.get('/whoami', async (req) => stockOk(req.id, { key: req.apiKey!.apiKey }));
      api.post('/whoami', async (req) => stockOk(req.id, { key: req.apiKey!.apiKey, wrote: true }));
    },
    { prefix: '/api/v1' },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  server = app;
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe.each(testDatabases)('migration 0029: stock key scopes ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it("gives every existing stock key the one scope of its chain, product and permission, and it authenticates as before", async () => {
    const m = await migrator(db);
    expect((await m.migrateTo(BEFORE)).error).toBeUndefined();
    const box = createSecretBox(randomBytes(32));
    const secrets = { ak_ro: randomBytes(24).toString('base64url'), ak_rw: randomBytes(24).toString('base64url'), ak_perp: randomBytes(24).toString('base64url') };
    const sealed = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, box.encrypt(v, { aad: k })])) as typeof secrets;
    await rowBefore('ak_ro', 'stock', sealed.ak_ro, '["READ_ONLY"]', PRODUCT, 10).execute(db.kysely);
    await rowBefore('ak_rw', 'stock', sealed.ak_rw, '["WRITABLE"]', PRODUCT, 20).execute(db.kysely);
    // A product the JSON must quote: the scope keeps it byte for byte.
    await rowBefore('ak_odd', 'stock', 'v2.x', '["WRITABLE"]', 'Odd"\\Pr\u00f6duct', 30).execute(db.kysely);
    await rowBefore('ak_perp', 'perp', sealed.ak_perp, '["READ","TRADE"]', '', 40).execute(db.kysely);

    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect(await getApiKey(db, 'ak_ro')).toEqual({
      apiKey: 'ak_ro',
      api: 'stock',
      secretCiphertext: sealed.ak_ro,
      label: 'made before scopes',
      permissions: ['READ_ONLY'],
      scopes: [{ chainId: CHAIN_ID, productType: PRODUCT, access: 'READ_ONLY' }],
      ipWhitelist: ['127.0.0.1', '::1'],
      chainId: CHAIN_ID,
      product: PRODUCT,
      userAddress: WALLET,
      active: true,
      expiresAt: null,
      createdAt: 10,
      updatedAt: 10,
    });
    expect((await listApiKeys(db)).map((k) => [k.apiKey, k.scopes])).toEqual([
      ['ak_ro', [{ chainId: CHAIN_ID, productType: PRODUCT, access: 'READ_ONLY' }]],
      ['ak_rw', [{ chainId: CHAIN_ID, productType: PRODUCT, access: 'WRITABLE' }]],
      ['ak_odd', [{ chainId: CHAIN_ID, productType: 'Odd"\\Pr\u00f6duct', access: 'WRITABLE' }]],
      ['ak_perp', []],
    ]);

    // Each authenticates over HTTP exactly as its permission allowed before: both read, only the
    // WRITABLE one writes, the perp key is refused by the stock API as it always was.
    const base = await serve(db, box);
    const client = (apiKey: keyof typeof secrets) => new StockClient({ baseUrl: base, apiKey, apiSecret: secrets[apiKey], chainId: CHAIN_ID, product: PRODUCT });
    expect(await client('ak_ro').request('GET', '/api/v1/whoami')).toMatchObject({ code: 200, data: { key: 'ak_ro' } });
    expect(await client('ak_rw').request('GET', '/api/v1/whoami')).toMatchObject({ code: 200, data: { key: 'ak_rw' } });
    expect(await client('ak_rw').request('POST', '/api/v1/whoami', { body: {} })).toMatchObject({ code: 200, data: { key: 'ak_rw', wrote: true } });
    expect(await client('ak_ro').request('POST', '/api/v1/whoami', { body: {} })).toMatchObject({ code: 401, errMsg: 'Unauthorized' });
    expect(await client('ak_perp').request('GET', '/api/v1/whoami')).toMatchObject({ code: 401, errMsg: 'Unauthorized' });

    // Down: the scopes column goes, each key's first scope stays in its own columns; up again
    // rebuilds the same one scope.
    expect((await m.migrateTo(BEFORE)).error).toBeUndefined();
    const rows = await sql<{ api_key: string; chain_id: number | string; product: string; permissions: string }>`
      select api_key, chain_id, product, permissions from api_keys where api = 'stock' order by api_key`.execute(db.kysely);
    expect(rows.rows.map((r) => [r.api_key, Number(r.chain_id), r.product, r.permissions])).toEqual([
      ['ak_odd', CHAIN_ID, 'Odd"\\Pr\u00f6duct', '["WRITABLE"]'],
      ['ak_ro', CHAIN_ID, PRODUCT, '["READ_ONLY"]'],
      ['ak_rw', CHAIN_ID, PRODUCT, '["WRITABLE"]'],
    ]);
    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect((await getApiKey(db, 'ak_rw'))?.scopes).toEqual([{ chainId: CHAIN_ID, productType: PRODUCT, access: 'WRITABLE' }]);
  });
});
