import { createCipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SecretDecryptError,
  appendPreviousMasterKeys,
  createSecretBox,
  loadMasterKeyring,
  masterKeyFiles,
  masterKeyId,
  openMasterSecretBox,
  parseMasterKey,
  promoteNextMasterKey,
  readKeyLines,
  stageNextMasterKey,
  unstageNextMasterKey,
} from './secret-box.ts';

/** The first format, as the code before v2 wrote it: no key id, no associated data. */
function encryptV1(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

function errorOf(fn: () => unknown): SecretDecryptError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SecretDecryptError);
    return err as SecretDecryptError;
  }
  throw new Error('expected a SecretDecryptError');
}

const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const SECRET = 'sEcReT-value-0123456789';
const ROW = '0123456789abcdef0123456789abcdef';

describe('secret box v2', () => {
  it('round-trips a secret bound to its row, naming the master key', () => {
    const box = createSecretBox(K1);
    const c = box.encrypt(SECRET, { aad: ROW });
    const parts = c.split('.');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v2');
    expect(parts[1]).toBe(masterKeyId(K1));
    expect(box.keyIdOf(c)).toBe(masterKeyId(K1));
    expect(c).not.toContain(SECRET);
    expect(box.encrypt(SECRET, { aad: ROW })).not.toBe(c);
    expect(box.decrypt(c, { aad: ROW })).toBe(SECRET);
    expect(box.open(c, { aad: ROW })).toEqual({ plain: SECRET, version: 'v2', keyId: masterKeyId(K1), legacy: false });
  });

  it('refuses a ciphertext read for another row (wrong associated data) or without it', () => {
    const box = createSecretBox(K1);
    const c = box.encrypt(SECRET, { aad: ROW });
    expect(errorOf(() => box.decrypt(c, { aad: 'f'.repeat(32) })).reason).toBe('authentication');
    expect(errorOf(() => box.decrypt(c)).reason).toBe('authentication');
    expect(errorOf(() => box.decrypt(box.encrypt(SECRET), { aad: ROW })).reason).toBe('authentication');
  });

  it('decrypts with a previous key and encrypts only with the current one', () => {
    const old = createSecretBox(K1).encrypt(SECRET, { aad: ROW });
    const ring = createSecretBox({ current: K2, previous: [K1] });
    expect(ring.open(old, { aad: ROW })).toMatchObject({ plain: SECRET, keyId: masterKeyId(K1), legacy: false });
    expect(ring.keyIdOf(ring.encrypt(SECRET, { aad: ROW }))).toBe(masterKeyId(K2));
    expect(ring.currentKeyId()).toBe(masterKeyId(K2));
    // Without the previous key the id is unknown to the ring.
    expect(errorOf(() => createSecretBox(K2).decrypt(old, { aad: ROW })).reason).toBe('unknown-key');
  });

  it('reads v1 under the current or a previous key and marks it for migration to v2', () => {
    const v1 = encryptV1(K1, SECRET);
    const box = createSecretBox({ current: K2, previous: [K1] });
    const opened = box.open(v1, { aad: ROW });
    expect(opened).toEqual({ plain: SECRET, version: 'v1', keyId: masterKeyId(K1), legacy: true });
    const migrated = box.encrypt(opened.plain, { aad: ROW });
    expect(box.open(migrated, { aad: ROW })).toMatchObject({ plain: SECRET, version: 'v2', keyId: masterKeyId(K2), legacy: false });
    expect(createSecretBox(K1).open(encryptV1(K1, SECRET)).legacy).toBe(true);
    expect(errorOf(() => createSecretBox(K2).decrypt(v1)).reason).toBe('authentication');
  });

  it('derives a stable id that reveals nothing of the key', () => {
    const key = randomBytes(32);
    const id = masterKeyId(key);
    expect(id).toBe(masterKeyId(Buffer.from(key)));
    expect(id).toMatch(/^[A-Za-z0-9_-]{11}$/);
    expect(id).not.toBe(masterKeyId(randomBytes(32)));
    for (const enc of ['hex', 'base64', 'base64url'] as const) {
      const text = key.toString(enc);
      // No 6-character run of the key's encodings appears in the id, nor the id in them.
      for (let i = 0; i + 6 <= id.length; i++) expect(text).not.toContain(id.slice(i, i + 6));
    }
    expect(id).not.toBe(key.subarray(0, 8).toString('base64url'));
  });

  it('fails on every tampered part and on garbage, with messages free of secret and ciphertext', () => {
    const box = createSecretBox(K1);
    const c = box.encrypt(SECRET, { aad: ROW });
    const parts = c.split('.');
    const flip = (s: string) => {
      const b = Buffer.from(s, 'base64url');
      b[0]! ^= 1;
      return b.toString('base64url');
    };
    const tampered = [2, 3, 4].map((i) => parts.map((p, j) => (j === i ? flip(p) : p)).join('.'));
    const cases = [
      ...tampered,
      parts.map((p, j) => (j === 1 ? masterKeyId(K2) : p)).join('.'),
      ['v3', ...parts.slice(1)].join('.'),
      parts.slice(0, 4).join('.'),
      c + '.x',
      parts.map((p, j) => (j === 4 ? p + '!' : p)).join('.'),
      '',
      SECRET,
    ];
    for (const bad of cases) {
      const err = errorOf(() => box.decrypt(bad, { aad: ROW }));
      const text = `${err.message} ${JSON.stringify(err.detail ?? {})} ${String((err as { cause?: unknown }).cause ?? '')}`;
      expect(text).not.toContain(SECRET);
      for (const p of parts.slice(2)) expect(text).not.toContain(p);
      expect(text).not.toContain(K1.toString('hex'));
    }
    expect(errorOf(() => box.decrypt(tampered[1]!, { aad: ROW })).message).toMatch(/cannot decrypt/);
  });

  it('parses keys as hex or base64 and names only the source on error', () => {
    const key = randomBytes(32);
    expect(parseMasterKey(key.toString('hex')).equals(key)).toBe(true);
    expect(parseMasterKey(key.toString('base64')).equals(key)).toBe(true);
    expect(parseMasterKey(` ${key.toString('base64url')}\n`).equals(key)).toBe(true);
    const bad = 'zz' + key.toString('hex');
    expect(() => parseMasterKey(bad, 'MASTER_KEY_PREVIOUS')).toThrow(/^MASTER_KEY_PREVIOUS: must be 32 bytes/);
    try {
      parseMasterKey(bad);
    } catch (err) {
      expect((err as Error).message).not.toContain(bad);
    }
  });
});

describe('data directory keyring', () => {
  function tempDir(): string {
    return fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-ring-'));
  }

  it('loads current, staged next, MASTER_KEY_PREVIOUS and master.key.previous', () => {
    const dir = tempDir();
    const [a, b, c, d] = [1, 2, 3, 4].map(() => randomBytes(32));
    fs.writeFileSync(masterKeyFiles(dir).current, a!.toString('hex') + '\n', { mode: 0o600 });
    fs.writeFileSync(masterKeyFiles(dir).previous, `# old keys\n${b!.toString('base64')}\n\n`, { mode: 0o600 });
    stageNextMasterKey(dir, c!);
    const ring = loadMasterKeyring({ dataDir: dir, masterKeyPrevious: [d!.toString('hex')] });
    expect(ring.current.equals(a!)).toBe(true);
    expect(ring.previous!.map(masterKeyId).sort()).toEqual([b, c, d].map((k) => masterKeyId(k!)).sort());
    const env = loadMasterKeyring({ dataDir: dir, masterKey: d!.toString('hex') });
    expect(env.current.equals(d!)).toBe(true);
    expect(fs.statSync(masterKeyFiles(dir).next).mode & 0o777).toBe(0o600);
    fs.writeFileSync(masterKeyFiles(dir).previous, 'nonsense\n');
    expect(() => loadMasterKeyring({ dataDir: dir })).toThrow(/master\.key\.previous line 1: must be 32 bytes/);
  });

  it('stages, promotes and keeps every key: a rerun after a crash between steps is harmless', () => {
    const dir = tempDir();
    const old = randomBytes(32);
    const abandoned = randomBytes(32);
    const next = randomBytes(32);
    const files = masterKeyFiles(dir);
    fs.writeFileSync(files.current, old.toString('hex') + '\n', { mode: 0o600 });
    stageNextMasterKey(dir, abandoned);
    // Another key staged later: the abandoned one may encrypt rows, so it is kept as previous.
    stageNextMasterKey(dir, next);
    stageNextMasterKey(dir, next);
    expect(readKeyLines(files.next).map(masterKeyId)).toEqual([masterKeyId(next)]);
    expect(readKeyLines(files.previous).map(masterKeyId)).toEqual([masterKeyId(abandoned)]);
    // A crash after master.key joined the previous keys but before the rename: the rerun repeats it.
    appendPreviousMasterKeys(dir, [old]);
    expect(promoteNextMasterKey(dir)).toBe(true);
    expect(promoteNextMasterKey(dir)).toBe(false);
    expect(readKeyLines(files.current).map(masterKeyId)).toEqual([masterKeyId(next)]);
    expect(readKeyLines(files.previous).map(masterKeyId)).toEqual([masterKeyId(abandoned), masterKeyId(old)]);
    expect(fs.existsSync(files.next)).toBe(false);
    expect(fs.statSync(files.previous).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir).sort()).toEqual(['master.key', 'master.key.previous']);
  });

  it('unstages a key staged by an interrupted rotation, keeping it as previous', () => {
    const dir = tempDir();
    const files = masterKeyFiles(dir);
    const current = randomBytes(32);
    const staged = randomBytes(32);
    fs.writeFileSync(files.current, current.toString('hex') + '\n', { mode: 0o600 });
    stageNextMasterKey(dir, staged);
    unstageNextMasterKey(dir);
    unstageNextMasterKey(dir);
    expect(fs.existsSync(files.next)).toBe(false);
    expect(promoteNextMasterKey(dir)).toBe(false);
    expect(readKeyLines(files.current).map(masterKeyId)).toEqual([masterKeyId(current)]);
    expect(readKeyLines(files.previous).map(masterKeyId)).toEqual([masterKeyId(staged)]);
  });

  it('a running box learns a key staged after it started when it meets its id', () => {
    const dir = tempDir();
    const running = openMasterSecretBox({ dataDir: dir });
    const next = randomBytes(32);
    stageNextMasterKey(dir, next);
    const c = createSecretBox(next).encrypt(SECRET, { aad: ROW });
    expect(running.decrypt(c, { aad: ROW })).toBe(SECRET);
    // After promotion it encrypts under the new current key once its ring is re-read.
    promoteNextMasterKey(dir);
    let t = 0;
    const later = createSecretBox(loadMasterKeyring({ dataDir: dir }), { reload: () => loadMasterKeyring({ dataDir: dir }), now: () => t });
    expect(later.currentKeyId()).toBe(masterKeyId(next));
    t += 5_000;
    expect(later.keyIdOf(later.encrypt(SECRET, { aad: ROW }))).toBe(masterKeyId(next));
  });
});
