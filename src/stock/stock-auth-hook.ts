/**
 * Authentication of the stock API (seed §5A, contract.md §A): API key state, scope, IP whitelist,
 * permission, timestamp window, HMAC over the five-line payload, and nonce replay. Registered as a
 * preValidation hook so it sees the raw body and runs before any schema error could reveal a
 * route's shape to an unauthenticated caller. Every failure is the same opaque UnauthorizedError;
 * the reason goes to the log under the request's uuid. A route with `config: { auth: false }` is
 * public and passes untouched (src/auth/route-auth.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors/app-error.ts';
import { hasPermission } from '../auth/api-key-model.ts';
import type { ApiKeyService, AuthKey } from '../auth/api-key-service.ts';
import { canonicalQuery, signedUri, verifyStock } from '../auth/hmac.ts';
import { ipAllowed } from '../auth/ip-match.ts';
import { repeatedHeader } from '../auth/repeated-header.ts';
import type { NonceStore } from '../auth/nonce-store.ts';
import { authRequired } from '../auth/route-auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: AuthKey;
  }
}

export const TS_WINDOW_MS = 45_000;

/** The authentication headers, each of which may be sent once only. */
const AUTH_HEADERS = ['x-api-key', 'x-api-sign', 'x-api-ts', 'x-api-nonce', 'x-api-chain-id', 'x-api-p'];

/** 1 to 16 decimal digits (milliseconds). */
function isMillisText(s: string): boolean {
  if (s.length === 0 || s.length > 16) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** 8 to 64 of A-Z, a-z, 0-9, `_` and `-`. */
function isNonceText(s: string): boolean {
  if (s.length < 8 || s.length > 64) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const lower = c | 0x20;
    if (!((lower >= 0x61 && lower <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d)) return false;
  }
  return true;
}

export interface StockAuthOptions {
  keys: ApiKeyService;
  nonces: NonceStore;
  chainId: number;
  product: string;
  /** Service prefix in front of /api/v1 that is not part of the signed URI. */
  prefix: string;
  now?: () => number;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

export function createStockAuthHook(opts: StockAuthOptions) {
  const now = opts.now ?? Date.now;
  const chainId = String(opts.chainId);
  const deny = (reason: string) => new UnauthorizedError(reason);

  /** Checks everything but the key; returns what the key checks need. */
  function readHeaders(request: FastifyRequest) {
    // Checked on the raw list, so that the log names the cause: Node joins a repeated header's values
    // with ", ", which would otherwise be refused later as an unknown key or another chain.
    const repeated = repeatedHeader(request.raw.rawHeaders, AUTH_HEADERS);
    if (repeated !== undefined) throw deny(`${repeated} repeated`);
    const apiKey = header(request, 'x-api-key');
    const sign = header(request, 'x-api-sign');
    const ts = header(request, 'x-api-ts');
    const nonce = header(request, 'x-api-nonce');
    const reqChain = header(request, 'x-api-chain-id');
    const product = header(request, 'x-api-p');
    if (!apiKey || !sign || !ts || !nonce) throw deny('missing authentication header');
    if (reqChain === undefined) throw deny('missing x-api-chain-id');
    if (product === undefined) throw deny('missing x-api-p');
    if (reqChain !== chainId) throw deny('x-api-chain-id does not match the service');
    if (product !== opts.product) throw deny('x-api-p does not match the service (case-sensitive)');
    if (!isMillisText(ts)) throw deny('x-api-ts is not milliseconds');
    const t = now();
    const tsMs = Number(ts);
    if (Math.abs(t - tsMs) > TS_WINDOW_MS) throw deny('x-api-ts outside the 45 s window');
    if (!isNonceText(nonce)) throw deny('x-api-nonce malformed');
    return { apiKey, sign, ts, tsMs, nonce, product, reqChain, t };
  }

  /** Key state, scope, whitelist, permission and signature; then the nonce claim (sync in memory). */
  function verify(request: FastifyRequest, h: ReturnType<typeof readHeaders>, key: AuthKey | undefined): boolean | Promise<boolean> {
    if (!key) throw deny('unknown api key');
    if (key.api !== 'stock') throw deny('not a stock api key');
    if (!key.active) throw deny('api key revoked');
    if (key.expiresAt !== null && key.expiresAt <= h.t) throw deny('api key expired');
    // The request's chain id already equals the service's (readHeaders).
    if (key.chainId !== opts.chainId || key.product !== h.product) throw deny('api key scope mismatch');
    // request.ip is undefined once the client has gone (a disconnect during an uncached lookup).
    const peer = request.ip as string | undefined;
    if (!ipAllowed(peer, key.ipWhitelist)) throw deny(peer === undefined ? 'peer address unknown (disconnected)' : `peer ${peer} not in whitelist`);
    if (request.method !== 'GET' && request.method !== 'HEAD' && !hasPermission(key, 'WRITABLE')) {
      throw deny('READ_ONLY key on a write method');
    }

    const rawUrl = request.raw.url ?? '/';
    const q = rawUrl.indexOf('?');
    let path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    if (opts.prefix && path.startsWith(opts.prefix)) path = path.slice(opts.prefix.length);
    const uri = signedUri(path, q === -1 ? '' : canonicalQuery(rawUrl.slice(q + 1)));
    // The bytes exactly as received, whatever the content type (decoded as JSON only after this).
    const body: Uint8Array = request.rawBody;
    // Constant-time over the 32 digest bytes; the header is hex of either case, anything else never matches.
    if (!verifyStock(key.hmacKey, { method: request.method, uri, ts: h.ts, nonce: h.nonce, body }, h.sign)) {
      throw deny('signature mismatch or malformed');
    }

    // Claimed only after the signature holds, so nobody can burn another key's nonces.
    request.apiKey = key;
    const ttl = Math.max(TS_WINDOW_MS, h.tsMs + TS_WINDOW_MS - h.t) + 1_000;
    return opts.nonces.claim(key.apiKey, h.nonce, ttl);
  }

  const claimed = (ok: boolean) => {
    if (!ok) throw deny('nonce reused');
  };

  /** The slow path: key not cached, or a nonce store that answers asynchronously (Redis). */
  function finishLater(request: FastifyRequest, pending: Promise<boolean>, done: (err?: Error) => void): void {
    pending.then(claimed).then(
      () => done(),
      (err: Error) => {
        request.apiKey = undefined;
        done(err);
      },
    );
  }

  // Callback style rather than async: with a cached key and the in-memory nonce store the whole
  // check runs synchronously, without a promise and a microtask hop per request. No closure is
  // created on that path either (tsx's keepNames makes each one cost a defineProperty).
  return function stockAuth(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    if (!authRequired(request)) return done();
    let pending: Promise<boolean> | undefined;
    try {
      const h = readHeaders(request);
      const cached = opts.keys.cachedForAuth(h.apiKey);
      const result = cached
        ? verify(request, h, cached.key)
        : opts.keys.lookupForAuth(h.apiKey).then((key) => verify(request, h, key));
      if (typeof result === 'boolean') claimed(result);
      else pending = result;
    } catch (err) {
      request.apiKey = undefined;
      return done(err as Error);
    }
    // done() runs the rest of the request, so it is called outside the try: an error thrown further
    // down must never come back here and be answered a second time.
    if (pending) finishLater(request, pending, done);
    else done();
  };
}
