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
 *   else stays text and the schema answers `page: must be integer`;
 * - hands on a JSON number given for a decimal field of the body as the number's own text, never
 *   through a float (`decimalNumberTexts`). A decimal field is a top-level property of the route's
 *   body schema that takes a string or a number (`anyOf` with a `string` and a `number` branch: the
 *   stock API's amounts, which Anchored types "string / number"). The text then meets the same
 *   rules as a decimal string (its schema pattern, then parseDecimal), so `1e3` and `-5` are refused
 *   naming the field. No perpetual-API schema has such a field: its bodies decode as before.
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
  // What clients send (the SDKs the first): answered without splitting and lower-casing.
  if (contentType === 'application/json' || contentType === 'application/json; charset=utf-8') return true;
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
  return parseJsonText(bytes).value;
}

/** parseJsonBytes, also answering the decoded text (what decimalNumberTexts reads). */
/**
 * Bodies parsed before the decoder ran (an auth hook that weighs a batch by its length), by their
 * bytes: the decoder then takes that parse instead of parsing the same bytes again.
 */
const parsedEarly = new WeakMap<Uint8Array, { text: string; value: unknown }>();

/**
 * The request's JSON body for a hook that runs before the decoder (`undefined` when there is none
 * or it is not valid JSON: the decoder refuses it next, with its reason). The value is the one the
 * decoder hands the route: read it, never change it.
 */
export function peekJsonBody(request: FastifyRequest): unknown {
  const bytes = request.rawBody;
  if (bytes === undefined || bytes === null || bytes.length === 0) return undefined;
  try {
    const parsed = parseJsonText(bytes);
    parsedEarly.set(bytes, parsed);
    return parsed.value;
  } catch {
    return undefined;
  }
}

function parseJsonText(bytes: Uint8Array): { text: string; value: unknown } {
  const early = parsedEarly.get(bytes);
  if (early !== undefined) return early;
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
  return { text, value };
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
// JSON's number grammar, anchored at the scan position.
const NUMBER_TOKEN = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string token that opens at `i` (a `"`). */
function skipString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* backslash: skip the escaped character */) i++;
    else if (c === 0x22 /* " */) return i + 1;
  }
  return i;
}

/** Index just past the value that starts at `i`. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return skipString(text, i);
  if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
    let depth = 0;
    for (; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x22) i = skipString(text, i) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return i;
  }
  // A number or a literal (true, false, null): up to the next delimiter.
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 0x2c /* , */ || d === 0x7d || d === 0x5d || WS.has(d)) break;
    i++;
  }
  return i;
}

/**
 * The source text of every JSON number that is the value of a top-level member named in `keys`,
 * by key, in a text JSON.parse accepted (so the scan trusts its grammar). A repeated key's last
 * member wins, as JSON.parse takes it. Nested values are skipped: the stock bodies' amounts are
 * all top-level. This is the one place a JSON number's text is read; what the text means as an
 * amount is parseDecimal's to say (src/lib/decimal.ts), as for a decimal string.
 */
export function decimalNumberTexts(text: string, keys: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return out;
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) === 0x7d) return out;
  for (;;) {
    const keyEnd = skipString(text, i);
    const rawKey = text.slice(i, keyEnd);
    const key = rawKey.includes('\\') ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1);
    i = skipWs(text, keyEnd);
    i = skipWs(text, i + 1); // past ':'
    const c = text.charCodeAt(i);
    let end: number;
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      NUMBER_TOKEN.lastIndex = i;
      NUMBER_TOKEN.test(text);
      end = NUMBER_TOKEN.lastIndex;
      if (keys.has(key)) out.set(key, text.slice(i, end));
    } else {
      end = skipValue(text, i);
      out.delete(key);
    }
    i = skipWs(text, end);
    if (text.charCodeAt(i) !== 0x2c) return out;
    i = skipWs(text, i + 1);
  }
}

type RouteSchema = FastifyRequest['routeOptions']['schema'];

interface BodySchema {
  properties?: Record<string, { anyOf?: Array<{ type?: unknown }> } | undefined>;
}

/** The decimal fields of each body schema (see the module comment), found once per schema object. */
const decimalFields = new WeakMap<object, ReadonlySet<string>>();

export function decimalFieldsOf(schema: BodySchema): ReadonlySet<string> {
  let names = decimalFields.get(schema);
  if (names === undefined) {
    const found = new Set<string>();
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const types = (prop?.anyOf ?? []).map((branch) => branch?.type);
      if (types.includes('string') && types.includes('number')) found.add(name);
    }
    names = found;
    decimalFields.set(schema, names);
  }
  return names;
}

/** The body with each JSON number of a decimal field replaced by its text (see the module comment). */
function withDecimalTexts(schema: BodySchema | undefined, text: string, value: unknown): unknown {
  if (schema === undefined || schema === null || typeof schema !== 'object') return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const fields = decimalFieldsOf(schema);
  if (fields.size === 0) return value;
  const body = value as Record<string, unknown>;
  let numbers = false;
  for (const name of fields) if (typeof body[name] === 'number') numbers = true;
  if (!numbers) return value;
  for (const [name, digits] of decimalNumberTexts(text, fields)) if (typeof body[name] === 'number') body[name] = digits;
  return body;
}

function decodeBody(request: FastifyRequest, schema: RouteSchema | undefined): void {
  const method = request.method;
  if (method === 'GET' || method === 'HEAD') {
    if (announcesBody(request)) throw new ValidationError('body', `not allowed on ${method}`);
    return;
  }
  const bytes = request.rawBody;
  if (bytes === undefined || bytes === null || bytes.length === 0) return;
  const type = request.bodyContentType;
  if (type === null || !isJsonUtf8(type)) throw new ValidationError('content-type', 'must be application/json (charset utf-8)');
  const { text, value } = parseJsonText(bytes);
  request.body = withDecimalTexts(schema?.body as BodySchema | undefined, text, value);
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

function decodeQuery(request: FastifyRequest, routeSchema: RouteSchema | undefined): void {
  const schema = routeSchema?.querystring as QuerySchema | undefined;
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
    // Read once: each read of routeOptions builds a new object of a dozen fields.
    const schema = request.routeOptions.schema;
    decodeBody(request, schema);
    decodeQuery(request, schema);
  } catch (err) {
    return done(err as Error);
  }
  done();
}
