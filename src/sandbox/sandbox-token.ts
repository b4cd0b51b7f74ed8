/**
 * The sandbox's bearer token (docs/sandbox.md): 32 random bytes as hex, made once per data
 * directory in `DATA_DIR/sandbox.token` (mode 0600) and read from there on every later start, so
 * demo.json, scripts and a restarted stack agree. Never logged, never in an error message.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors/app-error.ts';

export const SANDBOX_TOKEN_FILE = 'sandbox.token';

const TOKEN = /^[0-9a-f]{64}$/;

export function sandboxTokenPath(dataDir: string): string {
  return path.join(dataDir, SANDBOX_TOKEN_FILE);
}

/** The data directory's token, made now when it has none. */
export function sandboxToken(dataDir: string): string {
  const file = sandboxTokenPath(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // `wx`: two processes starting on one directory at once keep the first token, never two.
    fs.writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const token = fs.readFileSync(file, 'utf8').trim();
  // The message names the file, never its content.
  if (!TOKEN.test(token)) throw new AppError('VALIDATION', `${file}: not a sandbox token (64 hex digits); delete the file to have a new one made`);
  return token;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Whether an `Authorization` header carries `Bearer <token>`. Compared as SHA-256 digests with
 * timingSafeEqual: equal lengths whatever was sent, so the time taken tells nothing of the token.
 */
export function bearerMatches(header: string | string[] | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return timingSafeEqual(digest(m ? m[1] : ''), digest(token)) && m !== null;
}
