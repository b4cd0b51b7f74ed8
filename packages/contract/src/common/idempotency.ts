/**
 * The `Idempotency-Key` request header both APIs accept on state-changing calls: a retry with the
 * same key is answered as the first request and applied at most once.
 */
import { Type } from './schema-kit.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const MAX_IDEMPOTENCY_KEY = 64;
export const IDEMPOTENCY_KEY_PATTERN = '^[!-~]{1,64}$';

/** Whether `key` is a well-formed key: 1 to 64 visible ASCII characters. */
export function isIdempotencyKey(key: string): boolean {
  return /^[!-~]{1,64}$/.test(key);
}

/** The headers schema of a route taking the key; `description` says what a reuse answers in that API. */
export function IdempotencyHeaders(description: string) {
  // Node hands header names over lower-case.
  return Type.Object({
    'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY, pattern: '^[!-~]+$', description })),
  });
}
