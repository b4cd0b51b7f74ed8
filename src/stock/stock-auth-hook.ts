/**
 * Authentication of the stock API (seed §5A, contract.md §A): API key state, the key's scope for
 * the request's chain and product and its access, IP whitelist, timestamp window, HMAC over the
 * five-line payload, and nonce replay. Registered as a
 * preValidation hook so it sees the raw body and runs before any schema error could reveal a
 * route's shape to an unauthenticated caller. Every failure is the same opaque UnauthorizedError;
 * the reason goes to the log under the request's uuid. A route with `config: { auth: false }` is
 * public and passes untouched (src/auth/route-auth.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors/app-error.ts';
import type { ApiKeyService, AuthKey } from '../auth/api-key-service.ts';
import { findStockScope, unencodedCanonicalQuery } from '@tokex/contract';
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
  /**
   * The other chains the API serves (docs/stock-api.md, "Several chains"), the product being the
   * same: a request's `x-api-chain-id` picks among `chainId` and these, and the key must hold a scope
   * for the chain picked; a stream `auth` names its chain in the frame (`chainId`) or takes its
   * connection's.
   */
  otherChainIds?: readonly number[];
  /**
   * Chains configured whose node has not answered since the start (among `otherChainIds` when their
   * routes are registered already): refused like an unserved chain, the log saying so. Read on every
   * request: a chain leaves it when it starts in the background.
   */
  unstartedChainIds?: readonly number[] | (() => readonly number[]);
  /** Service prefix in front of /api/v1 that is not part of the signed URI. */
  prefix: string;
  now?: () => number;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

const deny = (reason: string) => new UnauthorizedError(reason);

/** What a stock signature covers and who sent it: a request's headers, or a stream's `auth` frame. */
export interface StockSignedParts {
  apiKey: string;
  sign: string;
  ts: string;
  nonce: string;
  method: string;
  /** The signed URI (`/api/v1/...` with the canonical query). */
  uri: string;
  /** The same URI with the query unencoded, as Anchored's Node.js helper signs it, when that differs. */
  unencodedUri?: string;
  body: Uint8Array;
  /** The socket peer, read when the key is checked: undefined once the client has gone. */
  readonly peer: string | undefined;
  /** A write: the key's scope for the chain and product needs WRITABLE. */
  write: boolean;
}

export interface StockSignatureCheck {
  /**
   * Timestamp form and window, nonce form, the key (known, a stock key, active, not expired, holding
   * a scope for the service's chain and product), its IP whitelist, the scope's access (WRITABLE for
   * a write), the HMAC, and last the
   * nonce claim (so nobody can burn another key's nonces). With a cached key and the in-memory nonce
   * store it runs synchronously and answers the key; otherwise a promise of it. Every failure is
   * the same UnauthorizedError, its cause in the message for the log only.
   */
  (parts: StockSignedParts): AuthKey | Promise<AuthKey>;
}

/** The checks a request and a stream `auth` share (the hook below and stock-stream-endpoint.ts). */
export function createStockSignatureCheck(opts: Omit<StockAuthOptions, 'prefix'>): StockSignatureCheck {
  const now = opts.now ?? Date.now;

  function verify(p: StockSignedParts, key: AuthKey | undefined, t: number, tsMs: number): boolean | Promise<boolean> {
    if (!key) throw deny('unknown api key');
    if (key.api !== 'stock') throw deny('not a stock api key');
    if (!key.active) throw deny('api key revoked');
    if (key.expiresAt !== null && key.expiresAt <= t) throw deny('api key expired');
    // The request's chain and product are the service's (the hook refused any other before this;
    // a stream names none): the key must hold a scope for them. Its scopes for chains or products
    // served elsewhere never match here (docs/api-keys-secrets.md "Stock key scopes").
    const scope = findStockScope(key.scopes, opts.chainId, opts.product);
    if (scope === undefined) throw deny('api key has no scope for this chain and product');
    if (!ipAllowed(p.peer, key.ipWhitelist)) throw deny(p.peer === undefined ? 'peer address unknown (disconnected)' : `peer ${p.peer} not in whitelist`);
    if (p.write && scope.access !== 'WRITABLE') throw deny('READ_ONLY scope on a write method');
    // Either recipe of the query (docs/stock-api.md "Signing"): encoded as URLSearchParams does, or
    // unencoded as Anchored's Node.js helper does; they differ only for values with other characters,
    // and the second is looked at only when the first does not match.
    if (!signedOver(key, p, p.uri)) {
      const unencoded = p.unencodedUri;
      if (unencoded === undefined || !signedOver(key, p, unencoded)) throw deny('signature mismatch or malformed');
    }
    const ttl = Math.max(TS_WINDOW_MS, tsMs + TS_WINDOW_MS - t) + 1_000;
    return opts.nonces.claim(key.apiKey, p.nonce, ttl, tsMs);
  }

  // Not async, and no closure on the synchronous path (see the hook's note below).
  return function check(p: StockSignedParts): AuthKey | Promise<AuthKey> {
    if (!isMillisText(p.ts)) throw deny('timestamp is not milliseconds');
    const t = now();
    const tsMs = Number(p.ts);
    if (Math.abs(t - tsMs) > TS_WINDOW_MS) throw deny('timestamp outside the 45 s window');
    if (!isNonceText(p.nonce)) throw deny('nonce malformed');
    const cached = opts.keys.cachedForAuth(p.apiKey);
    if (cached) {
      const claimed = verify(p, cached.key, t, tsMs);
      if (typeof claimed === 'boolean') {
        if (!claimed) throw deny('nonce reused');
        // verify() threw for an unknown key.
        return cached.key!;
      }
      return claimedKey(claimed, cached.key!);
    }
    return opts.keys.lookupForAuth(p.apiKey).then((key) => claimedKey(verify(p, key, t, tsMs), key as AuthKey));
  };
}

/**
 * Whether the request's signature is the HMAC over `uri`: constant-time over the 32 digest bytes; the
 * signature is hex of either case, anything else never matches. A function of the module rather
 * than a closure in verify(): under tsx each closure created costs a defineProperty (keepNames),
 * which took about 3 µs of a signed request in the server's profile (docs/performance.md, issue 30).
 */
function signedOver(key: AuthKey, p: StockSignedParts, uri: string): boolean {
  return verifyStock(key.hmacKey, { method: p.method, uri, ts: p.ts, nonce: p.nonce, body: p.body }, p.sign);
}

async function claimedKey(claimed: boolean | Promise<boolean>, key: AuthKey): Promise<AuthKey> {
  if (!(await claimed)) throw deny('nonce reused');
  return key;
}

/** A request's signed parts; the peer is read when the key is checked (after an uncached lookup). */
class RequestParts implements StockSignedParts {
  readonly method: string;
  /** The bytes exactly as received, whatever the content type (decoded as JSON only after this). */
  readonly body: Uint8Array;
  readonly write: boolean;
  constructor(
    /** The check of the request's chain (`x-api-chain-id`). */
    readonly check: StockSignatureCheck,
    private readonly request: FastifyRequest,
    readonly apiKey: string,
    readonly sign: string,
    readonly ts: string,
    readonly nonce: string,
    readonly uri: string,
    /** The path and the raw query, when there is one: the unencoded URI is made from them if asked. */
    private readonly path?: string,
    private readonly query?: string,
  ) {
    this.method = request.method;
    this.body = request.rawBody;
    this.write = this.method !== 'GET' && this.method !== 'HEAD';
  }
  /** Only asked when the signature does not match `uri`: most requests never build it. */
  get unencodedUri(): string | undefined {
    if (this.query === undefined) return undefined;
    const unencoded = signedUri(this.path!, unencodedCanonicalQuery(this.query));
    return unencoded === this.uri ? undefined : unencoded;
  }
  /** request.ip is undefined once the client has gone (a disconnect during an uncached lookup). */
  get peer(): string | undefined {
    return this.request.ip as string | undefined;
  }
}

export function createStockAuthHook(opts: StockAuthOptions) {
  // One check per chain served, each judging the key's scope for its own chain: the request's
  // header picks one with a single map lookup.
  const checks = new Map<string, StockSignatureCheck>();
  for (const chainId of [opts.chainId, ...(opts.otherChainIds ?? [])]) checks.set(String(chainId), createStockSignatureCheck({ ...opts, chainId }));
  const unstartedIds = opts.unstartedChainIds ?? [];
  const isUnstarted = (chainId: string) => (typeof unstartedIds === 'function' ? unstartedIds() : unstartedIds).some((id) => String(id) === chainId);

  /** The request's signed parts and its chain's check, after the checks only a request has (its headers). */
  function partsOf(request: FastifyRequest): RequestParts {
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
    // A chain or product this deployment does not serve (x-api-p compared exactly: `anchored` is not
    // `Anchored`) fails here, before any key is read, whatever scopes the key holds.
    if (isUnstarted(reqChain)) throw deny(`chain ${reqChain} did not start (its node did not answer): served once its node answers`);
    const check = checks.get(reqChain);
    if (check === undefined) throw deny('x-api-chain-id does not match the service');
    if (product !== opts.product) throw deny('x-api-p does not match the service (case-sensitive)');

    const rawUrl = request.raw.url ?? '/';
    const q = rawUrl.indexOf('?');
    let path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    if (opts.prefix && path.startsWith(opts.prefix)) path = path.slice(opts.prefix.length);
    if (q === -1) return new RequestParts(check, request, apiKey, sign, ts, nonce, path);
    const query = rawUrl.slice(q + 1);
    return new RequestParts(check, request, apiKey, sign, ts, nonce, signedUri(path, canonicalQuery(query)), path, query);
  }

  /** The slow path: key not cached, or a nonce store that answers asynchronously (Redis). */
  function finishLater(request: FastifyRequest, pending: Promise<AuthKey>, done: (err?: Error) => void): void {
    pending.then(
      (key) => {
        request.apiKey = key;
        done();
      },
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
    let pending: Promise<AuthKey> | undefined;
    try {
      const parts = partsOf(request);
      const result = parts.check(parts);
      if (result instanceof Promise) pending = result;
      else request.apiKey = result;
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

/** A chain id as `x-api-chain-id` carries it: 1 to 16 digits without a leading zero. */
const CHAIN_ID_TEXT = /^[1-9][0-9]{0,15}$/;

/** A stream `auth` naming a chain its connection cannot move to (docs/streams.md "Several chains"). */
export class StockStreamChainFixed extends Error {}

export interface StockStreamAuthFrame {
  apiKey?: unknown;
  ts?: unknown;
  nonce?: unknown;
  sign?: unknown;
  /** The request's `x-api-chain-id`: a positive integer, or its decimal text. Absent: the connection's chain. */
  chainId?: unknown;
  /** The request's `x-api-p`, exact case. Absent: the service's product. */
  product?: unknown;
}

/**
 * The stream endpoint's `auth` (docs/streams.md "Several chains"): the request rules through the
 * same check, with the signed parts from the frame (method GET, URI `/api/v1/ws`, empty body) and the
 * chain and product the frame names as a request's headers name them (the signature covers neither,
 * as a request's covers neither header; the key's nonces are one set across chains, so a frame seen
 * on one chain cannot be replayed for another). A frame naming no chain takes its connection's (the
 * URL's `chainId`, else the first chain), naming no product the service's. A chain not served, another
 * product, or a key without a scope for the chain and product is the opaque refusal, as for REST. A
 * read: a READ_ONLY scope may authenticate. Answers the key and the chain it authenticated on.
 */
export function createStockStreamAuth(opts: Omit<StockAuthOptions, 'prefix'>) {
  const checks = new Map<number, StockSignatureCheck>();
  for (const chainId of [opts.chainId, ...(opts.otherChainIds ?? [])]) checks.set(chainId, createStockSignatureCheck({ ...opts, chainId }));
  const unstartedIds = opts.unstartedChainIds ?? [];
  const isUnstarted = (chainId: number) => (typeof unstartedIds === 'function' ? unstartedIds() : unstartedIds).includes(chainId);
  const EMPTY = new Uint8Array(0);

  /** The chain id the frame names, undefined when none; a malformed one is no served chain. */
  function namedChain(v: unknown): number | undefined {
    if (v === undefined) return undefined;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
    if (typeof v === 'string' && CHAIN_ID_TEXT.test(v) && Number.isSafeInteger(Number(v))) return Number(v);
    throw deny('auth chainId malformed');
  }

  async function authenticate(
    frame: StockStreamAuthFrame,
    peer: string | undefined,
    /** The connection's chain, and whether it is fixed (its URL named it, or it subscribed). */
    connection: { chainId: number; fixed: boolean } = { chainId: opts.chainId, fixed: false },
  ): Promise<{ key: AuthKey; chainId: number }> {
    const ts = typeof frame.ts === 'number' ? String(frame.ts) : frame.ts;
    const { apiKey, nonce, sign } = frame;
    if (typeof apiKey !== 'string' || typeof ts !== 'string' || typeof nonce !== 'string' || typeof sign !== 'string' || apiKey.length === 0) {
      throw deny('auth: apiKey, ts, nonce and sign are required');
    }
    // As the headers are judged: a chain or product this deployment does not serve fails before any key is read.
    const named = namedChain(frame.chainId);
    const chainId = named ?? connection.chainId;
    const check = checks.get(chainId);
    if (check === undefined) {
      throw deny(isUnstarted(chainId) ? `chain ${chainId} did not start (its node did not answer): its streams are served once its node answers` : 'auth chainId does not match the service');
    }
    if (frame.product !== undefined && frame.product !== opts.product) throw deny('auth product does not match the service (case-sensitive)');
    // Before the key's check, so that no nonce is spent on a frame that cannot be served.
    if (connection.fixed && chainId !== connection.chainId) {
      throw new StockStreamChainFixed(`chainId: this connection is on chain ${connection.chainId} (named by its URL, or subscribed on): connect with ?chainId=${chainId} for chain ${chainId}`);
    }
    const key = await check({ apiKey, sign, ts, nonce, method: 'GET', uri: '/api/v1/ws', body: EMPTY, peer, write: false });
    return { key, chainId };
  }
  return Object.assign(authenticate, {
    /** A chain that started after the endpoint (its node answered late): authenticated from now on. */
    addChain(chainId: number): void {
      if (!checks.has(chainId)) checks.set(chainId, createStockSignatureCheck({ ...opts, chainId }));
    },
  });
}
