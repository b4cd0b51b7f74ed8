/**
 * Encryption at rest of API secrets: AES-256-GCM under a master key that comes from the
 * environment (MASTER_KEY) or a key file in the data directory created on first use (mode 0600).
 * The ciphertext format is `v1.<iv>.<tag>.<data>` in base64url so a key rotation can add `v2`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors/app-error.ts';

export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(ciphertext: string): string;
}

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new AppError('INTERNAL', 'master key: must be 32 bytes');
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    decrypt(ciphertext) {
      const [version, iv, tag, data] = ciphertext.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined) throw new AppError('INTERNAL', 'secret: unknown ciphertext format');
      try {
        const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
      } catch (cause) {
        // Wrong master key or tampered row; the cause carries no secret material.
        throw new AppError('INTERNAL', 'secret: cannot decrypt (wrong master key?)', { cause });
      }
    },
  };
}

/** Parses MASTER_KEY (64 hex digits or base64 of 32 bytes). */
export function parseMasterKey(value: string): Buffer {
  const v = value.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new AppError('INTERNAL', 'MASTER_KEY: must be 32 bytes as hex or base64');
  return buf;
}

/** MASTER_KEY wins; otherwise DATA_DIR/master.key, created with owner-only permissions on first use. */
export function loadMasterKey(opts: { masterKey?: string; dataDir: string }): Buffer {
  if (opts.masterKey) return parseMasterKey(opts.masterKey);
  const file = path.join(opts.dataDir, 'master.key');
  if (fs.existsSync(file)) return parseMasterKey(fs.readFileSync(file, 'utf8'));
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process of the stack created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return parseMasterKey(fs.readFileSync(file, 'utf8'));
    throw err;
  }
  return key;
}
