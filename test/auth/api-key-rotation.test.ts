import { createCipheriv, randomBytes } from 'node:crypto';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createApiKeyService, type ApiKeyService, type AuthKey } from '../../src/auth/api-key-service.ts';
import { getApiKey } from '../../src/auth/api-key-store.ts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { signPerp, signStock } from '../../src/auth/hmac.ts';
import { createSecretBox, masterKeyFiles, masterKeyId, openMasterSecretBox, readKeyLines } from '../../src/auth/secret-box.ts';
import { loadConfig, type AppConfig } from '../../src/config/app-config.ts';
import { rotateMasterKey } from '../../src/cli/keys-command.ts';
import { createStockSignatureCheck } from '../../src/stock/stock-auth-hook.ts';
import { createPerpSignatureCheck } from '../../src/perp/perp-auth-hook.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { openAppDatabase } from '../../src/app/storage-wiring.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const run = promisify(execFile);
const CHAIN = 31337;
const PRODUCT = 'STOCK';

/** The first ciphertext format, as written before v2: no key id, not bound to the row. */
function encryptV1(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

/** A data directory for the real CLI: SQLite, its master key in DATA_DIR/master.key, no key from this environment. */
function cliDataDir() {
  const dataDir = tempDir();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.MASTER_KEY;
  delete env.MASTER_KEY_PREVIOUS;
  const oldKey = randomBytes(32);
  writeKey(masterKeyFiles(dataDir).current, oldKey);
  return { dataDir, env, config: loadConfig(env), oldKey };
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-rot-'));
}

function writeKey(file: string, key: Buffer): void {
  fs.writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600 });
}

async function ciphertextOf(db: Db, apiKey: string): Promise<string> {
  return (await db.kysely.selectFrom('api_keys').select('secret_ciphertext').where('api_key', '=', apiKey).executeTakeFirstOrThrow()).secret_ciphertext;
}

async function setCiphertext(db: Db, apiKey: string, ciphertext: string): Promise<void> {
  await db.kysely.updateTable('api_keys').set({ secret_ciphertext: ciphertext }).where('api_key', '=', apiKey).execute();
}

/** A pino logger (with the app's redaction) whose lines the test reads. */
function capturedLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { log: createLogger({ destination, level: 'info' }), lines };
}

/**
 * The checks the APIs' auth hooks run on a request: a signed request for the key, checked by the
 * stock or perp signature check over `keys`. Answers the key or throws their UnauthorizedError.
 */
async function signedCheck(keys: ApiKeyService, api: 'stock' | 'perp', apiKey: string, secret: string): Promise<AuthKey> {
  const nonces = createMemoryNonceStore();
  const ts = String(Date.now());
  const body = new Uint8Array();
  if (api === 'stock') {
    const nonce = randomBytes(8).toString('hex');
    const uri = '/api/v1/account';
    const sign = signStock(secret, { method: 'GET', uri, ts, nonce, body });
    const check = createStockSignatureCheck({ keys, nonces, chainId: CHAIN, product: PRODUCT });
    return check({ apiKey, sign, ts, nonce, method: 'GET', uri, body, peer: '127.0.0.1', write: false });
  }
  const requestPath = '/v4/private/account';
  const sign = signPerp(secret, { ts, method: 'GET', requestPath, body });
  return createPerpSignatureCheck({ keys, nonces, chainId: CHAIN })({ apiKey, sign, ts, method: 'GET', requestPath, body, peer: '127.0.0.1' });
}

interface Made {
  apiKey: string;
  secret: string;
  api: 'stock' | 'perp';
  active: boolean;
}

async function makeKey(keys: ApiKeyService, i: number): Promise<Made> {
  const api = i % 3 === 2 ? 'perp' : 'stock';
  const { key, apiSecret } =
    api === 'stock'
      ? await keys.create({ permission: 'READ_ONLY', ipWhitelist: ['127.0.0.1'], chainId: CHAIN, product: PRODUCT, label: `k${i}` })
      : await keys.create({ api: 'perp', permissions: ['READ'], ipWhitelist: [], chainId: CHAIN, label: `k${i}` });
  const active = i % 5 !== 4;
  if (!active) await keys.revoke(key.apiKey);
  return { apiKey: key.apiKey, secret: apiSecret, api, active };
}

/** Every key answers its secret through the auth lookup, and every active one passes a signed check. */
async function expectAllWork(keys: ApiKeyService, made: Made[]): Promise<void> {
  for (const m of made) {
    const key = await keys.lookupForAuth(m.apiKey);
    expect(key?.secret, m.apiKey).toBe(m.secret);
    if (m.active) expect((await signedCheck(keys, m.api, m.apiKey, m.secret)).apiKey).toBe(m.apiKey);
  }
}

describe.each(testDatabases)('API secrets bound to their key, and master-key rotation ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('refuses two keys whose ciphertexts were swapped, as unknown keys, with a warning free of secrets', async () => {
    const { log, lines } = capturedLogger();
    const keys = createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 0, log });
    const a = await makeKey(keys, 0);
    const b = await makeKey(keys, 2);
    await expectAllWork(keys, [a, b]);
    const ca = await ciphertextOf(db, a.apiKey);
    const cb = await ciphertextOf(db, b.apiKey);
    expect(ca.startsWith('v2.')).toBe(true);
    await setCiphertext(db, a.apiKey, cb);
    await setCiphertext(db, b.apiKey, ca);

    expect(await keys.lookupForAuth(a.apiKey)).toBeUndefined();
    expect(await keys.lookupForAuth(b.apiKey)).toBeUndefined();
    // The hooks answer their ordinary 401 (UnauthorizedError), as for a key that does not exist.
    await expect(signedCheck(keys, 'stock', a.apiKey, a.secret)).rejects.toMatchObject({ code: 'UNAUTHORIZED', reason: 'unknown api key' });
    await expect(signedCheck(keys, 'perp', b.apiKey, b.secret)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(signedCheck(keys, 'stock', a.apiKey, b.secret)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });

    const warns = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
    expect(warns.length).toBeGreaterThanOrEqual(2);
    expect(warns.map((w) => w.apiKey)).toEqual(expect.arrayContaining([a.apiKey, b.apiKey]));
    for (const w of warns) {
      expect(w.msg).toBe('api key refused: its stored secret failed authentication');
      expect(w.reason).toBe('authentication');
    }
    const all = lines.join('\n');
    for (const s of [a.secret, b.secret, ca, cb, ...ca.split('.').slice(2), ...cb.split('.').slice(2)]) expect(all).not.toContain(s);

    // Put back, both work again: nothing was cached or rewritten by the refusal.
    await setCiphertext(db, a.apiKey, ca);
    await setCiphertext(db, b.apiKey, cb);
    await expectAllWork(keys, [a, b]);
  });

  it('migrates a v1 secret to v2 on its first read, and still refuses it when it is garbage', async () => {
    const master = randomBytes(32);
    const keys = createApiKeyService({ db, secretBox: createSecretBox(master), cacheTtlMs: 0 });
    const k = await makeKey(keys, 0);
    await setCiphertext(db, k.apiKey, encryptV1(master, k.secret));
    expect((await keys.lookupForAuth(k.apiKey))?.secret).toBe(k.secret);
    const migrated = await ciphertextOf(db, k.apiKey);
    expect(migrated.startsWith(`v2.${masterKeyId(master)}.`)).toBe(true);
    expect(createSecretBox(master).decrypt(migrated, { aad: k.apiKey })).toBe(k.secret);
    expect((await getApiKey(db, k.apiKey))?.active).toBe(true);
    await setCiphertext(db, k.apiKey, 'v9.garbage');
    expect(await keys.lookupForAuth(k.apiKey)).toBeUndefined();
  });

  /** A data directory with an old master key, one older key in MASTER_KEY_PREVIOUS, and N keys. */
  async function seeded(n: number) {
    const dataDir = tempDir();
    const oldKey = randomBytes(32);
    const olderKey = randomBytes(32);
    writeKey(masterKeyFiles(dataDir).current, oldKey);
    const config: AppConfig = loadConfig({ DATA_DIR: dataDir, MASTER_KEY_PREVIOUS: olderKey.toString('base64') });
    const src = { dataDir, masterKeyPrevious: config.masterKeyPrevious };
    const keys = createApiKeyService({ db, secretBox: openMasterSecretBox(src), cacheTtlMs: 0 });
    const made: Made[] = [];
    for (let i = 0; i < n; i++) made.push(await makeKey(keys, i));
    // Some rows still in the first format, under the current and under the previous key.
    for (const [i, m] of made.entries()) {
      if (i % 4 === 1) await setCiphertext(db, m.apiKey, encryptV1(i % 8 === 1 ? oldKey : olderKey, m.secret));
    }
    return { dataDir, oldKey, olderKey, config, src, made };
  }

  async function expectAllUnder(made: Made[], keyId: string): Promise<void> {
    for (const m of made) expect((await ciphertextOf(db, m.apiKey)).startsWith(`v2.${keyId}.`), m.apiKey).toBe(true);
  }

  it('rotates every secret of both APIs under a new master key while a running service keeps verifying them', async () => {
    const { dataDir, oldKey, olderKey, config, src, made } = await seeded(23);
    expect(made.filter((m) => !m.active).length).toBeGreaterThan(0);
    expect(made.filter((m) => m.api === 'perp').length).toBeGreaterThan(0);
    let clock = 1_000_000;
    // A running API: started before the rotation, caching lookups for 5 s.
    const running = createApiKeyService({ db, secretBox: openMasterSecretBox(src), cacheTtlMs: 5_000, now: () => clock });
    const cachedBefore = await running.lookupForAuth(made[0]!.apiKey);

    const newKey = randomBytes(32);
    const progress: number[] = [];
    const res = await rotateMasterKey({
      config,
      db,
      newKey,
      batchSize: 5,
      afterBatch: async (batch) => {
        progress.push(batch);
        // Mid-rotation, rows are under the old or the new key and the running service reads both.
        if (batch === 2) {
          clock += 10_000;
          await expectAllWork(running, made);
        }
      },
    });
    expect(res).toMatchObject({ rewritten: 23, failed: [], batches: 5, promoted: true, envManaged: false, newKeyId: masterKeyId(newKey), oldKeyId: masterKeyId(oldKey) });
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    await expectAllUnder(made, masterKeyId(newKey));

    const files = masterKeyFiles(dataDir);
    expect(readKeyLines(files.current).map(masterKeyId)).toEqual([masterKeyId(newKey)]);
    expect(readKeyLines(files.previous).map(masterKeyId)).toEqual([masterKeyId(oldKey)]);
    expect(fs.existsSync(files.next)).toBe(false);
    for (const f of [files.current, files.previous]) expect(fs.statSync(f).mode & 0o777).toBe(0o600);

    // The running service: its cached entry, then fresh reads under the new key.
    expect(running.cachedForAuth(made[0]!.apiKey)?.key?.secret ?? cachedBefore?.secret).toBe(made[0]!.secret);
    clock += 10_000;
    await expectAllWork(running, made);
    // A restarted service without MASTER_KEY_PREVIOUS: master.key and master.key.previous suffice.
    const restarted = createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 });
    await expectAllWork(restarted, made);
    // New keys are created under the new key.
    const fresh = await makeKey(restarted, 0);
    await expectAllUnder([fresh], masterKeyId(newKey));
    // Only the new key is needed now: a box holding it alone reads every row.
    await expectAllWork(createApiKeyService({ db, secretBox: createSecretBox(newKey), cacheTtlMs: 0 }), [...made, fresh]);
    // A rerun with the same key changes nothing.
    const again = await rotateMasterKey({ config: loadConfig({ DATA_DIR: dataDir }), db, newKey, batchSize: 5 });
    expect(again).toMatchObject({ rewritten: 0, current: 24, promoted: false });
    expect(olderKey.equals(newKey)).toBe(false);
  });

  it('finishes a rotation interrupted halfway when rerun, every key working throughout', async () => {
    const { dataDir, oldKey, config, src, made } = await seeded(17);
    const newKey = randomBytes(32);
    const running = createApiKeyService({ db, secretBox: openMasterSecretBox(src), cacheTtlMs: 0 });
    await expect(
      rotateMasterKey({
        config,
        db,
        newKey,
        batchSize: 4,
        afterBatch: (batch) => {
          if (batch === 2) throw new Error('killed after batch 2');
        },
      }),
    ).rejects.toThrow('killed after batch 2');

    const files = masterKeyFiles(dataDir);
    expect(readKeyLines(files.current).map(masterKeyId)).toEqual([masterKeyId(oldKey)]);
    expect(readKeyLines(files.next).map(masterKeyId)).toEqual([masterKeyId(newKey)]);
    const cts = await Promise.all(made.map((m) => ciphertextOf(db, m.apiKey)));
    expect(cts.filter((c) => c.startsWith(`v2.${masterKeyId(newKey)}.`))).toHaveLength(8);
    await expectAllWork(running, made);
    // A process started now (the data dir holds master.key and master.key.next) reads them all.
    await expectAllWork(createApiKeyService({ db, secretBox: openMasterSecretBox(src), cacheTtlMs: 0 }), made);

    const res = await rotateMasterKey({ config, db, newKey, batchSize: 4 });
    expect(res).toMatchObject({ failed: [], promoted: true, current: 8 });
    expect(res.rewritten).toBe(9);
    await expectAllUnder(made, masterKeyId(newKey));
    expect(fs.existsSync(files.next)).toBe(false);
    await expectAllWork(running, made);
    await expectAllWork(createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 }), made);
  });

  it('with MASTER_KEY from the environment re-encrypts and leaves DATA_DIR alone', async () => {
    const dataDir = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    // The instances were given the new key as a previous one before the rotation.
    const env = { DATA_DIR: dataDir, MASTER_KEY: oldKey.toString('hex'), MASTER_KEY_PREVIOUS: newKey.toString('hex') };
    const config = loadConfig(env);
    const src = { dataDir, masterKey: config.masterKey, masterKeyPrevious: config.masterKeyPrevious };
    const keys = createApiKeyService({ db, secretBox: openMasterSecretBox(src), cacheTtlMs: 0 });
    const made = [await makeKey(keys, 0), await makeKey(keys, 2)];
    const res = await rotateMasterKey({ config, db, newKey });
    expect(res).toMatchObject({ rewritten: 2, promoted: false, envManaged: true });
    expect(fs.readdirSync(dataDir)).toEqual([]);
    await expectAllUnder(made, masterKeyId(newKey));
    await expectAllWork(keys, made);
    // After the switch the operator was told to make: MASTER_KEY=new, MASTER_KEY_PREVIOUS=old.
    const switched = loadConfig({ DATA_DIR: dataDir, MASTER_KEY: newKey.toString('base64'), MASTER_KEY_PREVIOUS: oldKey.toString('hex') });
    await expectAllWork(createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir, masterKey: switched.masterKey, masterKeyPrevious: switched.masterKeyPrevious }), cacheTtlMs: 0 }), made);
  });
});

describe('tokex keys rotate-master (the real CLI, SQLite)', () => {
  it('re-encrypts the data directory under the key of --new-key-file and promotes it', async () => {
    const { dataDir, env, config, oldKey } = cliDataDir();
    let db = await openAppDatabase(config);
    const made: Made[] = [];
    try {
      const keys = createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 });
      for (let i = 0; i < 4; i++) made.push(await makeKey(keys, i));
      await setCiphertext(db, made[1]!.apiKey, encryptV1(oldKey, made[1]!.secret));
    } finally {
      await db.close();
    }
    const newKey = randomBytes(32);
    const keyFile = path.join(tempDir(), 'new.key');
    fs.writeFileSync(keyFile, newKey.toString('base64') + '\n', { mode: 0o600 });

    const { stdout, stderr } = await run(process.execPath, ['bin/tokex.mjs', 'keys', 'rotate-master', '--new-key-file', keyFile, '--json'], { env });
    const res = JSON.parse(stdout) as Record<string, unknown>;
    expect(res).toMatchObject({ rewritten: 4, failed: [], promoted: true, newKeyId: masterKeyId(newKey), oldKeyId: masterKeyId(oldKey) });
    // No key material on either stream.
    for (const s of [newKey.toString('base64'), newKey.toString('hex'), oldKey.toString('hex'), ...made.map((m) => m.secret)]) {
      expect(stdout + stderr).not.toContain(s);
    }
    expect(readKeyLines(masterKeyFiles(dataDir).current).map(masterKeyId)).toEqual([masterKeyId(newKey)]);
    expect(readKeyLines(masterKeyFiles(dataDir).previous).map(masterKeyId)).toEqual([masterKeyId(oldKey)]);

    db = await openAppDatabase(config);
    try {
      await expectAllUnder2(db, made, masterKeyId(newKey));
      await expectAllWork(createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 }), made);
    } finally {
      await db.close();
    }

    // A key file that is not a key: refused, naming the file, not echoing it.
    fs.writeFileSync(keyFile, 'not-a-key-0123456789\n');
    const bad = await run(process.execPath, ['bin/tokex.mjs', 'keys', 'rotate-master', '--new-key-file', keyFile], { env }).catch((e: { stderr: string; code: number }) => e);
    expect(bad).toMatchObject({ code: 1 });
    expect((bad as { stderr: string }).stderr).toContain('must be 32 bytes as hex or base64');
    expect((bad as { stderr: string }).stderr).not.toContain('not-a-key-0123456789');
  }, 60_000);
});

describe('tokex keys rotate-master killed halfway (the real CLI, SQLite)', () => {
  it('leaves every key working, and a second run finishes the rotation', async () => {
    const { dataDir, env, config, oldKey } = cliDataDir();
    const db = await openAppDatabase(config);
    try {
      const made: Made[] = [];
      const seed = createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 });
      for (let i = 0; i < 300; i++) made.push(await makeKey(seed, i));
      const newKey = randomBytes(32);
      const newId = masterKeyId(newKey);
      const keyFile = path.join(tempDir(), 'new.key');
      fs.writeFileSync(keyFile, newKey.toString('hex') + '\n', { mode: 0o600 });
      const rotated = async () =>
        Number((await db.kysely.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).where('secret_ciphertext', 'like', `v2.${newId}.%`).executeTakeFirstOrThrow()).n);

      // One row a transaction, killed once some rows are under the new key.
      const child = spawn(process.execPath, ['bin/tokex.mjs', 'keys', 'rotate-master', '--new-key-file', keyFile, '--batch-size', '1'], { env, stdio: 'ignore' });
      const exited = new Promise((r) => child.once('exit', r));
      let seen = 0;
      while ((seen = await rotated()) < 20 && child.exitCode === null) await new Promise((r) => setImmediate(r));
      child.kill('SIGKILL');
      await exited;
      const atKill = await rotated();
      expect(seen).toBeGreaterThanOrEqual(20);
      expect(atKill).toBeLessThan(made.length);
      // Halfway: the new key is staged, not promoted, and every key works with the ring an API
      // instance reads (current + next).
      expect(readKeyLines(masterKeyFiles(dataDir).current).map(masterKeyId)).toEqual([masterKeyId(oldKey)]);
      await expectAllWork(createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 }), made);

      const { stdout } = await run(process.execPath, ['bin/tokex.mjs', 'keys', 'rotate-master', '--new-key-file', keyFile, '--json'], { env });
      expect(JSON.parse(stdout)).toMatchObject({ rewritten: made.length - atKill, failed: [], promoted: true, newKeyId: newId });
      await expectAllUnder2(db, made, newId);
      expect(readKeyLines(masterKeyFiles(dataDir).current).map(masterKeyId)).toEqual([newId]);
      await expectAllWork(createApiKeyService({ db, secretBox: openMasterSecretBox({ dataDir }), cacheTtlMs: 0 }), made);
    } finally {
      await db.close();
    }
  }, 120_000);
});

async function expectAllUnder2(db: Db, made: Made[], keyId: string): Promise<void> {
  for (const m of made) expect((await ciphertextOf(db, m.apiKey)).startsWith(`v2.${keyId}.`), m.apiKey).toBe(true);
}
