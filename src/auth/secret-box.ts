/**
 * Encryption at rest of API secrets: AES-256-GCM under a keyring of master keys (docs/api-keys-secrets.md).
 *
 * - `v2.<masterKeyId>.<iv>.<tag>.<data>` (base64url parts): the id names the master key that
 *   encrypted it, and the GCM associated data is the row's public api key, so a ciphertext copied
 *   into another row fails authentication instead of lending that row its secret.
 * - `v1.<iv>.<tag>.<data>`: the first format, without id or associated data. It still decrypts
 *   (every key of the ring is tried) and callers rewrite it as v2 on first read.
 *
 * The ring has one current key (the only one that encrypts) and older or staged keys that only
 * decrypt. A ring loaded from the data directory can re-read its files when it meets a key id it
 * does not know, which is how running APIs follow a `tokex keys rotate-master` without a restart.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError, type AppErrorOptions } from '../errors/app-error.ts';
import { parseMasterKey } from '../config/master-key.ts';

export interface SecretBoxOptions {
  /** Associated data bound to the ciphertext: the api key string of the row it belongs to. */
  aad?: string;
}

export interface OpenedSecret {
  plain: string;
  version: 'v1' | 'v2';
  /** The master key id that decrypted it. */
  keyId: string;
  /** A v1 ciphertext: rewrite it as v2 (under the current key, with associated data). */
  legacy: boolean;
}

export interface SecretBox {
  /** Always v2 under the current master key. */
  encrypt(plain: string, opts?: SecretBoxOptions): string;
  decrypt(ciphertext: string, opts?: SecretBoxOptions): string;
  /** decrypt, also telling which format and key it was under. */
  open(ciphertext: string, opts?: SecretBoxOptions): OpenedSecret;
  /** Id of the key new ciphertexts are encrypted under. */
  currentKeyId(): string;
  /** The master key id written in a ciphertext (undefined for v1 or garbage); no decryption. */
  keyIdOf(ciphertext: string): string | undefined;
}

/** One current key (encrypts and decrypts) and any number of keys that only decrypt. */
export interface MasterKeyring {
  current: Buffer;
  /** Decrypt-only keys: the staged next key of a rotation and the previous keys. */
  previous?: Buffer[];
}

/**
 * The stored secret could not be authenticated: wrong associated data (moved to another row),
 * tampered, unknown format, or a master key the ring does not hold. Carries no secret material.
 */
export class SecretDecryptError extends AppError {
  readonly reason: 'format' | 'unknown-key' | 'authentication';
  constructor(reason: SecretDecryptError['reason'], message: string, options?: AppErrorOptions) {
    super('INTERNAL', message, options);
    this.reason = reason;
  }
}

const KEY_ID_LABEL = Buffer.from('tokex.master-key-id', 'utf8');

/**
 * A short stable name of a master key: 8 bytes of SHA-256 over a label and the key, base64url
 * (11 characters). One-way, so writing it into every ciphertext reveals nothing of the key.
 */
export function masterKeyId(key: Buffer): string {
  return createHash('sha256').update(KEY_ID_LABEL).update(key).digest().subarray(0, 8).toString('base64url');
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function checkKey(key: Buffer): void {
  if (key.length !== 32) throw new AppError('INTERNAL', 'master key: must be 32 bytes');
}

function gcmOpen(key: Buffer, iv: string, tag: string, data: string, aad: string | undefined): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

interface Ring {
  current: Buffer;
  currentId: string;
  byId: Map<string, Buffer>;
  /** Every key, current first, for v1 ciphertexts that do not say which. */
  all: Buffer[];
}

function ringOf(k: MasterKeyring): Ring {
  checkKey(k.current);
  const byId = new Map<string, Buffer>();
  const all: Buffer[] = [];
  for (const key of [k.current, ...(k.previous ?? [])]) {
    checkKey(key);
    const id = masterKeyId(key);
    if (byId.has(id)) continue;
    byId.set(id, key);
    all.push(key);
  }
  return { current: k.current, currentId: masterKeyId(k.current), byId, all };
}

/** How often encrypt() re-reads a reloadable ring, so a promoted key is used without a restart. */
const ENCRYPT_RELOAD_MS = 1_000;

/**
 * A box over one key (as before) or a keyring. With `reload`, a v2 ciphertext under an unknown
 * key id makes the box reload the ring once and retry (a rotation staged a new key meanwhile).
 */
export function createSecretBox(keys: Buffer | MasterKeyring, opts: { reload?: () => MasterKeyring; now?: () => number } = {}): SecretBox {
  let ring = ringOf(Buffer.isBuffer(keys) ? { current: keys } : keys);
  const now = opts.now ?? Date.now;
  let loadedAt = now();

  function reload(): boolean {
    if (!opts.reload) return false;
    ring = ringOf(opts.reload());
    loadedAt = now();
    return true;
  }

  function parse(ciphertext: string): { version: 'v1' | 'v2'; id?: string; iv: string; tag: string; data: string } {
    const parts = ciphertext.split('.');
    const ok = (xs: string[]) => xs.every((x) => B64URL.test(x));
    if (parts[0] === 'v2' && parts.length === 5 && ok(parts.slice(1)) && parts[1] && parts[2] && parts[3]) {
      return { version: 'v2', id: parts[1], iv: parts[2], tag: parts[3], data: parts[4]! };
    }
    if (parts[0] === 'v1' && parts.length === 4 && ok(parts.slice(1)) && parts[1] && parts[2]) {
      return { version: 'v1', iv: parts[1], tag: parts[2], data: parts[3]! };
    }
    throw new SecretDecryptError('format', 'secret: unknown ciphertext format');
  }

  function open(ciphertext: string, o: SecretBoxOptions = {}): OpenedSecret {
    const c = parse(ciphertext);
    if (c.version === 'v2') {
      let key = ring.byId.get(c.id!);
      if (!key && reload()) key = ring.byId.get(c.id!);
      if (!key) throw new SecretDecryptError('unknown-key', 'secret: cannot decrypt (encrypted under a master key this keyring does not hold)', { detail: { masterKeyId: c.id } });
      try {
        return { plain: gcmOpen(key, c.iv, c.tag, c.data, o.aad ?? ''), version: 'v2', keyId: c.id!, legacy: false };
      } catch (cause) {
        // Not this row's secret, or tampered; the cause carries no secret material.
        throw new SecretDecryptError('authentication', 'secret: cannot decrypt (failed authentication: tampered or not this key\'s secret)', { cause });
      }
    }
    // v1 carries no key id and no associated data: try each key, current first.
    for (const key of ring.all) {
      try {
        return { plain: gcmOpen(key, c.iv, c.tag, c.data, undefined), version: 'v1', keyId: masterKeyId(key), legacy: true };
      } catch {
        // next key
      }
    }
    throw new SecretDecryptError('authentication', 'secret: cannot decrypt (wrong master key or tampered)');
  }

  return {
    encrypt(plain, o = {}) {
      if (opts.reload && now() - loadedAt >= ENCRYPT_RELOAD_MS) reload();
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', ring.current, iv, { authTagLength: 16 });
      cipher.setAAD(Buffer.from(o.aad ?? '', 'utf8'));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v2', ring.currentId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    decrypt(ciphertext, o) {
      return open(ciphertext, o).plain;
    },
    open,
    currentKeyId() {
      return ring.currentId;
    },
    keyIdOf(ciphertext) {
      const parts = ciphertext.split('.');
      return parts[0] === 'v2' && parts.length === 5 ? parts[1] : undefined;
    },
  };
}

export { parseMasterKey } from '../config/master-key.ts';

/** MASTER_KEY wins; otherwise DATA_DIR/master.key, created with owner-only permissions on first use. */
export function loadMasterKey(opts: { masterKey?: string; dataDir: string }): Buffer {
  if (opts.masterKey) return parseMasterKey(opts.masterKey);
  const file = masterKeyFiles(opts.dataDir).current;
  if (fs.existsSync(file)) return parseMasterKey(fs.readFileSync(file, 'utf8'), file);
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process of the stack created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return parseMasterKey(fs.readFileSync(file, 'utf8'), file);
    throw err;
  }
  return key;
}

/** The key files of a data directory. */
export function masterKeyFiles(dataDir: string): { current: string; next: string; previous: string } {
  return {
    current: path.join(dataDir, 'master.key'),
    next: path.join(dataDir, 'master.key.next'),
    previous: path.join(dataDir, 'master.key.previous'),
  };
}

/** Keys of a file of one key a line (blank lines and `#` comments skipped); none when absent. */
export function readKeyLines(file: string): Buffer[] {
  if (!fs.existsSync(file)) return [];
  const keys: Buffer[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const t = line.trim();
      if (t !== '' && !t.startsWith('#')) keys.push(parseMasterKey(t, `${file} line ${i + 1}`));
    });
  return keys;
}

export interface KeyringSource {
  /** MASTER_KEY: the current key; otherwise DATA_DIR/master.key. */
  masterKey?: string;
  /** MASTER_KEY_PREVIOUS entries (decrypt only). */
  masterKeyPrevious?: string[];
  dataDir: string;
}

/**
 * The ring of a process: current = MASTER_KEY or DATA_DIR/master.key (created on first use);
 * decrypt-only = DATA_DIR/master.key.next (a rotation in progress), MASTER_KEY_PREVIOUS and
 * DATA_DIR/master.key.previous.
 */
export function loadMasterKeyring(src: KeyringSource): MasterKeyring {
  const files = masterKeyFiles(src.dataDir);
  const current = loadMasterKey(src);
  const previous = [
    ...readKeyLines(files.next),
    ...(src.masterKeyPrevious ?? []).map((v, i) => parseMasterKey(v, `MASTER_KEY_PREVIOUS entry ${i + 1}`)),
    ...readKeyLines(files.previous),
  ];
  return { current, previous };
}

/** A box over the process's ring that follows the data directory's key files (see createSecretBox). */
export function openMasterSecretBox(src: KeyringSource): SecretBox {
  return createSecretBox(loadMasterKeyring(src), { reload: () => loadMasterKeyring(src) });
}

// ------------------------------------------------------------------ key files of a rotation

/** Writes `text` to `file` atomically (temp file, fsync, rename) with owner-only permissions. */
function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
  syncDir(path.dirname(file));
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not every platform can fsync a directory; the rename is still atomic.
  }
}

/** Adds keys to DATA_DIR/master.key.previous unless there already; keys are never removed here. */
export function appendPreviousMasterKeys(dataDir: string, keys: Buffer[]): void {
  const file = masterKeyFiles(dataDir).previous;
  const have = readKeyLines(file);
  const ids = new Set(have.map(masterKeyId));
  const add = keys.filter((k) => !ids.has(masterKeyId(k)) && ids.add(masterKeyId(k)));
  if (add.length === 0) return;
  writeFileAtomic(file, [...have, ...add].map((k) => k.toString('hex') + '\n').join(''));
}

/**
 * Step (a) of a rotation: DATA_DIR/master.key.next holds the new key, so every process of the data
 * directory decrypts rows re-encrypted under it. A different key staged by an interrupted rotation
 * is kept in master.key.previous first: rows may be under it.
 */
export function stageNextMasterKey(dataDir: string, key: Buffer): void {
  checkKey(key);
  fs.mkdirSync(dataDir, { recursive: true });
  const { next } = masterKeyFiles(dataDir);
  const staged = readKeyLines(next);
  if (staged.length === 1 && staged[0]!.equals(key)) return;
  appendPreviousMasterKeys(dataDir, staged);
  writeFileAtomic(next, key.toString('hex') + '\n');
}

/**
 * A rerun with the current key itself: a key staged by an interrupted rotation to another key is
 * kept in master.key.previous (rows may be under it) and unstaged, so it never becomes current.
 */
export function unstageNextMasterKey(dataDir: string): void {
  const { next } = masterKeyFiles(dataDir);
  if (!fs.existsSync(next)) return;
  appendPreviousMasterKeys(dataDir, readKeyLines(next));
  fs.unlinkSync(next);
  syncDir(dataDir);
}

/**
 * Step (d): the staged key becomes master.key, the old master.key joins master.key.previous.
 * Each step is atomic and a rerun after a crash between them repeats it harmlessly.
 */
export function promoteNextMasterKey(dataDir: string): boolean {
  const files = masterKeyFiles(dataDir);
  if (!fs.existsSync(files.next)) return false;
  if (fs.existsSync(files.current)) appendPreviousMasterKeys(dataDir, readKeyLines(files.current));
  fs.renameSync(files.next, files.current);
  syncDir(dataDir);
  return true;
}
