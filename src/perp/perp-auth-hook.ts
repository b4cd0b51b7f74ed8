/**
 * Authentication, permission and rate limit of the perpetual API (contract.md §B, docs/perp-api.md),
 * as one preValidation hook so that it sees the raw body and runs before any schema error could
 * reveal a route's shape to an unauthenticated caller.
 *
 * Checks, in order, each failure with its own documented code (unlike the stock API, this one says
 * which check failed, as exchanges do; never more than the error table says):
 * headers present, each once, and well-formed (20001), X-Chain-Id the service's (20008), X-Api-Ts
 * within 45 s (20005), the key known, active and a perp key (20002), not expired (20003), of this
 * chain (20008), the peer in its IP whitelist when it has one (20004), the signature (20006), not a
 * replay (20007), then the route's permission (403 30001).
 *
 * Rate limit: an authenticated request counts against its key, with its weight (a batch weighs more
 * than one order, {@link perpRequestWeight}); a public route's request, and a request that failed
 * authentication, one unit against the client's address (so a stranger with bad signatures can
 * neither spend a key's budget nor probe without limit). Every answer of the scope carries the
 * X-RateLimit headers of the bucket it counted against. The stream endpoint's order entry counts its
 * messages against the same key buckets with the same weights (src/perp/streams/perp-stream-endpoint.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_BATCH_CANCEL, MAX_BATCH_ORDERS, requestWeight, sortedTopLevelJson } from '@tokex/contract';
import { ForbiddenError, UnauthorizedError, type AuthFailure } from '../errors/app-error.ts';
import { hasPermission, type PerpPermission } from '../auth/api-key-model.ts';
import type { ApiKeyService, AuthKey } from '../auth/api-key-service.ts';
import { canonicalQuery, decodeBase64Digest, signedUri, verifyPerp } from '../auth/hmac.ts';
import { ipAllowed } from '../auth/ip-match.ts';
import { repeatedHeader } from '../auth/repeated-header.ts';
import type { NonceStore } from '../auth/nonce-store.ts';
import { authRequired } from '../auth/route-auth.ts';
import { addressBucket, rateLimitedError, rateLimitHeaders, type RateLimitCheck, type RateLimitState } from '../http/rate-limiter.ts';
import { peekJsonBody } from '../http/request-decoder.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: AuthKey;
  }
  interface FastifyContextConfig {
    /**
     * The perp permission a route needs: `READ` for GET by default, `TRADE` for any other method
     * unless the route says otherwise (`TRANSFER` for withdrawals).
     */
    permission?: PerpPermission;
  }
}

export const PERP_TS_WINDOW_MS = 45_000;

/** The path the perp signature covers starts here (contract.md §B). */
const SIGNED_PATH_ROOT = '/v4/';
/** The authenticated scope's root (PERP_API_ROOT): routes are named by the path after it. */
const TRADER_ROOT = '/v4/public/trader/';

/** How many of `list` a body carries, at most `max` (a longer list is refused by its schema anyway). */
function itemsOf(body: unknown, list: string, max: number): number {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 0;
  const items = (body as Record<string, unknown>)[list];
  return Array.isArray(items) ? Math.min(items.length, max) : 0;
}

/**
 * The requests that weigh more than one unit (docs/perp-api.md "Rate limits"), by method and path
 * after `/v4/public/trader/`: requestWeight(n) = 1 + ⌊n / 10⌋ of the orders or ids they carry.
 */
const WEIGHTED: Readonly<Record<string, (body: unknown) => number>> = {
  'POST orders/batch': (body) => requestWeight(itemsOf(body, 'orders', MAX_BATCH_ORDERS)),
  'POST orders/batch-cancel': (body) => requestWeight(itemsOf(body, 'orderIds', MAX_BATCH_CANCEL)),
};

/**
 * Rate-limit units of a request (`route`: `"POST orders/batch"`, the method and the path after
 * `/v4/public/trader/`) carrying `body` (the decoded JSON, before any validation): 1 for every
 * request but the batches. A body too malformed to count in weighs 1 (its schema refuses it); a list
 * longer than its schema allows weighs as the longest allowed. REST and the stream's order entry
 * both weigh with it.
 */
export function perpRequestWeight(route: string, body: unknown): number {
  const weigh = WEIGHTED[route];
  return weigh === undefined ? 1 : weigh(body);
}

/** The weight of an authenticated request: its body read only for the routes that weigh more than one. */
function weightOf(request: FastifyRequest): number {
  const url = request.routeOptions.url;
  if (url === undefined) return 1;
  const at = url.indexOf(TRADER_ROOT);
  const route = `${request.method} ${at === -1 ? url : url.slice(at + TRADER_ROOT.length)}`;
  if (WEIGHTED[route] === undefined) return 1;
  // The JSON decoder runs after this hook (venue-api.ts) and takes this parse rather than parsing
  // the body again; a body that is not JSON weighs 1 (the decoder refuses it next).
  const body = peekJsonBody(request);
  return body === undefined ? 1 : perpRequestWeight(route, body);
}

export interface PerpAuthOptions {
  keys: ApiKeyService;
  /** Replay store: each signature is claimed once per key while its timestamp is in the window. */
  nonces: NonceStore;
  /** Counts a request against a bucket (src/http/rate-limiter.ts). */
  rateLimit: RateLimitCheck;
  chainId: number;
  now?: () => number;
}

const MILLIS = /^[0-9]{1,16}$/;

/** The credential headers, each of which may be sent once only (20001 otherwise). */
const CREDENTIAL_HEADERS = ['x-api-key', 'x-api-sign', 'x-api-ts', 'x-chain-id'];

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function deny(failure: AuthFailure, reason: string): UnauthorizedError {
  return new UnauthorizedError(reason, { failure });
}

/** The rate-limit bucket of an authenticated key: REST requests and stream order messages share it. */
export function keyBucket(apiKey: string): string {
  return `key:${apiKey}`;
}

/** The permission `request`'s route needs. */
export function requiredPermission(request: FastifyRequest): PerpPermission {
  const declared = request.routeOptions.config?.permission;
  if (declared) return declared;
  return request.method === 'GET' || request.method === 'HEAD' ? 'READ' : 'TRADE';
}

/** The signed request_path: from `/v4/` (whatever prefix the URL has before it), query sorted. */
export function perpRequestPath(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  return signedUri(signedPathOf(rawUrl, q), q === -1 ? '' : canonicalQuery(rawUrl.slice(q + 1)));
}

/** The request_path with the query as sent (unsorted): what a client that forgot to sort it signed. */
export function sentPerpRequestPath(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  return signedUri(signedPathOf(rawUrl, q), q === -1 ? '' : rawUrl.slice(q + 1));
}

function signedPathOf(rawUrl: string, q: number): string {
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const at = path.indexOf(SIGNED_PATH_ROOT);
  return at > 0 ? path.slice(at) : path;
}

/** The signed text as a refusal names it (the request_path cut short: it may be long). */
const MAX_PATH_IN_MESSAGE = 200;

function signatureMismatch(parts: PerpSignedParts, sentQueryVerifies: boolean): UnauthorizedError {
  const path = parts.requestPath.length > MAX_PATH_IN_MESSAGE ? `${parts.requestPath.slice(0, MAX_PATH_IN_MESSAGE)}…` : parts.requestPath;
  const signed = `X-Api-Ts + ${parts.method} + ${path}${parts.body.length > 0 ? ' + the body as sent' : ''}`;
  const publicMessage = sentQueryVerifies
    ? `signature mismatch: it was made over the query as sent; sign the query sorted by parameter name: ${signed}`
    : `signature mismatch: expected HMAC-SHA256 with the API secret over ${signed}`;
  return new UnauthorizedError(sentQueryVerifies ? 'signature over the unsorted query' : 'signature mismatch', { failure: 'signature', publicMessage });
}

/** What a perp signature covers and who sent it: the request's parts, or a stream's `auth` frame. */
export interface PerpSignedParts {
  apiKey: string;
  sign: string;
  ts: string;
  method: string;
  requestPath: string;
  /**
   * The request_path with the query as the URL has it, when that differs from `requestPath` (an
   * unsorted query): tried only to say why a signature failed, never accepted.
   */
  sentRequestPath?: string;
  body: Uint8Array;
  peer: string | undefined;
}

/**
 * The key's own checks, without a signature: known, active, a perp key, not expired, of this chain,
 * `peer` in its IP whitelist. Part of every signature check; the stream endpoint also runs it on
 * each order message of an authenticated connection, so a key deleted, expired or narrowed since the
 * connection's `auth` stops trading at once (within the key cache's lifetime), as it would over REST.
 */
export function createPerpKeyCheck(opts: Pick<PerpAuthOptions, 'keys' | 'chainId' | 'now'>) {
  const now = opts.now ?? Date.now;
  return async function checkKey(apiKey: string, peer: string | undefined): Promise<AuthKey> {
    const t = now();
    const cached = opts.keys.cachedForAuth(apiKey);
    const key = cached ? cached.key : await opts.keys.lookupForAuth(apiKey);
    if (!key || key.api !== 'perp' || !key.active) throw deny('key', key ? (key.api !== 'perp' ? 'not a perp key' : 'api key deleted') : 'unknown api key');
    if (key.expiresAt !== null && key.expiresAt <= t) throw deny('expired', 'api key expired');
    if (key.chainId !== opts.chainId) throw deny('scope', 'api key is for another chain');
    // A perp key with no whitelist (every key a wallet creates) accepts any address; see docs.
    if (key.ipWhitelist.length > 0 && !ipAllowed(peer, key.ipWhitelist)) throw deny('ip', `peer ${peer ?? '(gone)'} not in whitelist`);
    return key;
  };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The second body form a signature may cover (docs/perp-api.md "Monday Trade clients"): the JSON
 * object received, written again with its top-level keys sorted, compact, as Monday Trade's client
 * signs it while sending the body as written. The form is computed from the body received, so a
 * key added, removed or changed after signing still fails; a body that is not a JSON object (or
 * already in that form) has no second form. Window and replay rules are the same for both forms:
 * the caller claims the signature either way.
 */
function verifiesSorted(key: AuthKey['hmacKey'], parts: PerpSignedParts): boolean {
  if (parts.body.length === 0) return false;
  let text: string;
  try {
    text = UTF8.decode(parts.body);
  } catch {
    return false;
  }
  const sorted = sortedTopLevelJson(text);
  if (sorted === undefined || sorted === text) return false;
  return verifyPerp(key, { ts: parts.ts, method: parts.method, requestPath: parts.requestPath, body: sorted }, parts.sign);
}

/**
 * The checks after the headers' form and chain: the timestamp window, the key (known, active, a perp
 * key, not expired, this chain), the IP whitelist, the signature, then the replay claim. The HTTP
 * hook and the stream endpoint's `auth` share it, so both refuse the same things with the same codes.
 */
export function createPerpSignatureCheck(opts: Pick<PerpAuthOptions, 'keys' | 'nonces' | 'chainId' | 'now'>) {
  const now = opts.now ?? Date.now;
  const checkKey = createPerpKeyCheck(opts);
  return async function check(parts: PerpSignedParts): Promise<AuthKey> {
    const { apiKey, sign, ts } = parts;
    if (apiKey.length === 0 || apiKey.length > 128) throw deny('credentials', 'api key malformed');
    if (!MILLIS.test(ts)) throw deny('credentials', 'timestamp is not milliseconds');
    if (decodeBase64Digest(sign) === undefined) throw deny('credentials', 'signature is not a Base64 SHA-256 digest');
    const t = now();
    const tsMs = Number(ts);
    if (Math.abs(t - tsMs) > PERP_TS_WINDOW_MS) throw deny('timestamp', 'timestamp outside the 45 s window');

    const key = await checkKey(apiKey, parts.peer);

    if (
      !verifyPerp(key.hmacKey, { ts, method: parts.method, requestPath: parts.requestPath, body: parts.body }, sign) &&
      !verifiesSorted(key.hmacKey, parts)
    ) {
      // A signature over the unsorted query proves the sender holds the secret: telling it what to
      // sort gives nobody else anything.
      const sent = parts.sentRequestPath;
      throw signatureMismatch(parts, sent !== undefined && verifyPerp(key.hmacKey, { ts, method: parts.method, requestPath: sent, body: parts.body }, sign));
    }
    // Claimed only after the signature holds, so nobody can burn another key's signatures.
    const ttl = Math.max(PERP_TS_WINDOW_MS, tsMs + PERP_TS_WINDOW_MS - t) + 1_000;
    if (!(await opts.nonces.claim(`perp:${key.apiKey}`, sign, ttl, tsMs))) throw deny('replay', 'signature already used');
    return key;
  };
}

export function createPerpAuthHook(opts: PerpAuthOptions) {
  const serviceChain = String(opts.chainId);
  const checkSigned = createPerpSignatureCheck(opts);

  async function authenticate(request: FastifyRequest): Promise<AuthKey> {
    // Checked on the raw list: Node joins a repeated header's values with ", ", which would otherwise
    // be refused later as an unknown key (20002) or another chain (20008).
    const repeated = repeatedHeader(request.raw.rawHeaders, CREDENTIAL_HEADERS);
    if (repeated !== undefined) throw deny('credentials', `${repeated} repeated`);
    const apiKey = header(request, 'x-api-key');
    const sign = header(request, 'x-api-sign');
    const ts = header(request, 'x-api-ts');
    const chain = header(request, 'x-chain-id');
    if (!apiKey || !sign || !ts) throw deny('credentials', 'missing X-Api-Key, X-Api-Sign or X-Api-Ts');
    if (apiKey.length > 128) throw deny('credentials', 'X-Api-Key malformed');
    if (!MILLIS.test(ts)) throw deny('credentials', 'X-Api-Ts is not milliseconds');
    if (decodeBase64Digest(sign) === undefined) throw deny('credentials', 'X-Api-Sign is not a Base64 SHA-256 digest');
    if (chain === undefined) throw deny('scope', 'missing X-Chain-Id');
    if (chain !== serviceChain) throw deny('scope', 'X-Chain-Id is not the service chain');
    // The bytes exactly as received, whatever the content type (decoded as JSON only after this).
    const url = request.raw.url ?? '/';
    const requestPath = perpRequestPath(url);
    // Only a URL with a query can have been signed over another order of it.
    const sent = url.includes('?') ? sentPerpRequestPath(url) : requestPath;
    return checkSigned({
      apiKey,
      sign,
      ts,
      method: request.method,
      requestPath,
      ...(sent !== requestPath ? { sentRequestPath: sent } : {}),
      body: request.rawBody,
      peer: request.ip as string | undefined,
    });
  }

  async function count(request: FastifyRequest, reply: FastifyReply, bucket: string, weight = 1): Promise<RateLimitState> {
    const state = await opts.rateLimit(request, bucket, weight);
    void reply.headers(rateLimitHeaders(state));
    return state;
  }

  return async function perpAuth(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const ipBucket = addressBucket(request.ip);
    if (!authRequired(request)) {
      const state = await count(request, reply, ipBucket);
      if (state.limited) throw rateLimitedError(state);
      return;
    }
    let key: AuthKey;
    try {
      key = await authenticate(request);
    } catch (err) {
      request.apiKey = undefined;
      const state = await count(request, reply, ipBucket);
      throw state.limited ? rateLimitedError(state) : err;
    }
    request.apiKey = key;
    const state = await count(request, reply, keyBucket(key.apiKey), weightOf(request));
    if (state.limited) throw rateLimitedError(state);
    const needed = requiredPermission(request);
    if (!hasPermission(key, needed)) throw new ForbiddenError(`${needed} permission required`);
  };
}
