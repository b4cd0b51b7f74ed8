/**
 * Turns the bytes a request carried into what the route schemas validate, after authentication.
 *
 * The content-type parsers of createHttpServer only collect the body's bytes (`request.rawBody`),
 * whatever the content type, so that the signature check sees exactly what was sent and a stranger
 * learns nothing from the body before authentication decides. An API registers `decodeJsonRequest`
 * as a preValidation hook after its auth hook; it then
 * - refuses a body that is not UTF-8 JSON: another content type or charset, invalid UTF-8 (decoded
 *   strictly, never with replacement characters), invalid JSON, a `__proto__` key, or any body on
 *   a method that has none;
 * - turns the integer parameters of the route's querystring schema from text into numbers, exactly:
 *   decimal digits and nothing else (no exponent, no fraction), since Ajv does not coerce. Anything
 *   else stays text and the schema answers `page: must be integer`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../errors/app-error.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received (empty when there was none): what request signatures cover. */
    rawBody: Buffer;
    /** The request's Content-Type header; Fastify's own parser selection never sees it. */
    bodyContentType: string | null;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether a Content-Type header names JSON in UTF-8: `application/json`, optionally with
 * `charset=utf-8` (any case, optionally quoted). Any other parameter or charset is refused.
 */
export function isJsonUtf8(contentType: string): boolean {
  const parts = contentType.split(';');
  if (parts[0].trim().toLowerCase() !== 'application/json') return false;
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i].trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    if (eq === -1) return false;
    const name = p.slice(0, eq).trim().toLowerCase();
    let value = p.slice(eq + 1).trim().toLowerCase();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name !== 'charset' || (value !== 'utf-8' && value !== 'utf8')) return false;
  }
  return true;
}

/** Whether the request's headers announce a body (which Fastify does not read on GET and HEAD). */
function announcesBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

// `__proto__` as a key, also written with escapes: JSON.parse makes it an own property, which a
// later spread or merge could turn into a prototype. A cheap test first; the scan runs only on a hit.
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"/;

function hasProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return true;
  for (const v of Object.values(value as Record<string, unknown>)) if (hasProtoKey(v)) return true;
  return false;
}

/** Parses `bytes` as UTF-8 JSON; throws a ValidationError naming the body otherwise. */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (cause) {
    throw new ValidationError('body', 'is not valid UTF-8', { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ValidationError('body', 'is not valid JSON', { cause });
  }
  if (PROTO_KEY.test(text) && hasProtoKey(value)) throw new ValidationError('body', 'must not contain a __proto__ key');
  return value;
}

function decodeBody(request: FastifyRequest): void {
  const method = request.method;
  if (method === 'GET' || method === 'HEAD') {
    if (announcesBody(request)) throw new ValidationError('body', `not allowed on ${method}`);
    return;
  }
  const bytes = request.rawBody;
  if (bytes === undefined || bytes === null || bytes.length === 0) return;
  const type = request.bodyContentType;
  if (type === null || !isJsonUtf8(type)) throw new ValidationError('content-type', 'must be application/json (charset utf-8)');
  request.body = parseJsonBytes(bytes);
}

interface QuerySchema {
  properties?: Record<string, { type?: string | string[] }>;
}

/** The integer parameters of each querystring schema, found once per schema object. */
const integerParams = new WeakMap<object, string[]>();

function integerParamsOf(schema: QuerySchema): string[] {
  let names = integerParams.get(schema);
  if (names === undefined) {
    names = [];
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const t = prop?.type;
      if (t === 'integer' || (Array.isArray(t) && t.includes('integer'))) names.push(name);
    }
    integerParams.set(schema, names);
  }
  return names;
}

const INTEGER_TEXT = /^-?[0-9]+$/;

/**
 * Text to number when it is written as an integer (optional minus, decimal digits); otherwise the
 * text itself. Beyond the safe-integer range the value is clamped to it: such a value is out of
 * every documented range anyway, and clamping keeps it out of range (so `limit` falls back to its
 * default, `page` fails its maximum) instead of turning into a float no database accepts.
 */
export function integerFromText(text: string): number | string {
  if (!INTEGER_TEXT.test(text)) return text;
  const n = Number(text);
  if (Number.isSafeInteger(n)) return n;
  return n < 0 ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
}

function decodeQuery(request: FastifyRequest): void {
  const schema = request.routeOptions.schema?.querystring as QuerySchema | undefined;
  if (schema === undefined || typeof schema !== 'object') return;
  const names = integerParamsOf(schema);
  if (names.length === 0) return;
  const query = request.query as Record<string, unknown>;
  for (const name of names) {
    const v = query[name];
    if (typeof v === 'string') query[name] = integerFromText(v);
  }
}

/**
 * preValidation hook: register it after the API's authentication hook, in the same scope, so that
 * nothing about the body or the query is answered before authentication has decided.
 */
export function decodeJsonRequest(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  try {
    decodeBody(request);
    decodeQuery(request);
  } catch (err) {
    return done(err as Error);
  }
  done();
}
