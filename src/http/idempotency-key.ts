/**
 * The `Idempotency-Key` request header both APIs accept on state-changing calls: parsed and checked
 * here once, with the schema fragment the routes declare and the fingerprint that tells a retry
 * (same request) from a reuse of the key for another request.
 */
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_PATTERN, MAX_IDEMPOTENCY_KEY } from '@tokex/contract';
import { ValidationError } from '../errors/app-error.ts';

const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);
/** Field name of a malformed key in a refusal (the name schema validation gives it too). */
const FIELD = 'idempotency-key';

/**
 * The request's `Idempotency-Key`, or undefined when it sent none. A malformed one (empty, longer
 * than 64, anything but visible ASCII, or the header repeated, which Node joins with ", ") is a
 * ValidationError naming `idempotency-key`.
 */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers[FIELD];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !KEY.test(raw)) {
    throw new ValidationError(FIELD, `must be 1 to ${MAX_IDEMPOTENCY_KEY} visible ASCII characters, sent once`);
  }
  return raw;
}

export { IDEMPOTENCY_HEADER, IdempotencyHeaders as idempotencyHeadersSchema, isIdempotencyKey, MAX_IDEMPOTENCY_KEY } from '@tokex/contract';

/** JSON text with every object's keys sorted: equal for equal values, whatever order they were built in. */
export function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) out[k] = sorted((v as Record<string, unknown>)[k]);
    return out;
  };
  return JSON.stringify(sorted(value));
}

/** sha256 of the method, the path and the body's canonical JSON: equal for a retry of the same request. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}
