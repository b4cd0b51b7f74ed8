import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, loadMasterKey, parseMasterKey } from '../../src/auth/secret-box.ts';
import { ipAllowed } from '../../src/auth/ip-match.ts';

describe('secret box', () => {
  it('encrypts so the secret is not readable and decrypts it back', () => {
    const box = createSecretBox(Buffer.alloc(32, 7));
    const c1 = box.encrypt('my-api-secret');
    const c2 = box.encrypt('my-api-secret');
    expect(c1).not.toContain('my-api-secret');
    expect(c1).not.toBe(c2);
    expect(box.decrypt(c1)).toBe('my-api-secret');
  });

  it('refuses a ciphertext under another master key or tampered', () => {
    const c = createSecretBox(Buffer.alloc(32, 1)).encrypt('s');
    expect(() => createSecretBox(Buffer.alloc(32, 2)).decrypt(c)).toThrow('cannot decrypt');
    const parts = c.split('.');
    parts[3] = Buffer.from('x').toString('base64url');
    expect(() => createSecretBox(Buffer.alloc(32, 1)).decrypt(parts.join('.'))).toThrow('cannot decrypt');
  });

  it('creates an owner-only key file once and reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-mk-'));
    const a = loadMasterKey({ dataDir: dir });
    const b = loadMasterKey({ dataDir: dir });
    expect(a.equals(b)).toBe(true);
    expect(fs.statSync(path.join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(loadMasterKey({ dataDir: dir, masterKey: '11'.repeat(32) }).equals(Buffer.alloc(32, 0x11))).toBe(true);
    expect(() => parseMasterKey('abc')).toThrow('MASTER_KEY');
  });
});

describe('ip whitelist', () => {
  it('matches exact addresses, IPv4-mapped peers and canonical IPv6', () => {
    expect(ipAllowed('127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(ipAllowed('::ffff:127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(ipAllowed('::1', ['0:0:0:0:0:0:0:1'])).toBe(true);
    expect(ipAllowed('127.0.0.2', ['127.0.0.1'])).toBe(false);
    expect(ipAllowed('127.0.0.1', [])).toBe(false);
  });
});
