/**
 * The master key's text form (MASTER_KEY, MASTER_KEY_PREVIOUS, the key files): 32 bytes as 64 hex
 * digits or base64. In config, so that configuration is checked as it loads; the secret box
 * (src/auth/secret-box.ts) uses it for the key files too.
 */
import { AppError } from '../errors/app-error.ts';

/** Parses MASTER_KEY (64 hex digits or base64 of 32 bytes). `name` is what an error names; never the value. */
export function parseMasterKey(value: string, name = 'MASTER_KEY'): Buffer {
  const v = value.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new AppError('INTERNAL', `${name}: must be 32 bytes as hex or base64`);
  return buf;
}
