/**
 * The tokenized-stock API as a Fastify application, assembled as both venues are
 * (src/http/venue-api.ts): the stock envelope, signing headers and document, and the authenticated
 * /api/v1 scope (behind the service prefix when there is one) holding one route module per group.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import type { NonceStore } from '../auth/nonce-store.ts';
import type { ApiTransport } from '../http/tls-options.ts';
import { buildVenueApi } from '../http/venue-api.ts';
import type { RequestFaultSource } from '../http/request-faults.ts';
import type { ReadinessProbe } from '../observability/readiness.ts';
import { createStockAuthHook } from './stock-auth-hook.ts';
import type { StockApiDeps } from './stock-deps.ts';
import { stockEnvelope, stockProbeEnvelope } from './stock-envelope.ts';
import { marketRoutes } from './routes/market-routes.ts';
import { portfolioRoutes } from './routes/portfolio-routes.ts';
import { ordersRoutes } from './routes/orders-routes.ts';
import { cashRoutes } from './routes/cash-routes.ts';
import { stockTransferRoutes } from './routes/stock-transfer-routes.ts';
import { oneClickRoutes } from './routes/one-click-routes.ts';
import { createOneClickService } from './one-click/one-click-service.ts';
import { named } from '../http/named-plugin.ts';

export interface StockApiOptions {
  /** HTTPS or plain HTTP, and whether requests must arrive as HTTPS (src/http/tls-options.ts). Default: plain HTTP. */
  transport?: ApiTransport;
  deps: StockApiDeps;
  /**
   * The venues of the other chains served (docs/stock-api.md, "Several chains"), their product and
   * prefix `deps`'s: each request is answered by the venue of its `x-api-chain-id`.
   */
  otherChains?: readonly StockApiDeps[];
  /**
   * Chains configured whose node has not answered yet: refused (opaquely) with the reason logged.
   * One may be among `otherChains` with late-bound dependencies: its routes exist from the start and
   * answer once it leaves this list (read on every request).
   */
  unstartedChainIds?: readonly number[] | (() => readonly number[]);
  keys: ApiKeyService;
  nonces: NonceStore;
  logger: Logger;
  bodyLimitBytes: number;
  trustedProxies?: string[];
  /** Extra route modules registered inside the authenticated scope (later issues add orders, cash, ...). */
  extraRoutes?: Array<(api: FastifyInstance) => Promise<void>>;
  /** `/readyz`'s judge (docs/operations.md); without it the API says ready. */
  readiness?: ReadinessProbe;
  /** Injected faults (the sandbox's, docs/sandbox.md); none without. */
  faults?: RequestFaultSource;
}

export const STOCK_API_VERSION = '1.0.0';

/**
 * The reference page's introduction (markdown): how to sign (contract.md §A) with a worked example
 * the reference-pages test recomputes, and where the streams are.
 */
export const STOCK_API_DESCRIPTION = [
  'Tokenized stocks: market data, portfolio, orders, cash and stock deposits and withdrawals, and One Click delegation. Guide: docs/stock-api.md.',
  '',
  '## Signing a request',
  '',
  'Every `/api/v1` request carries six headers: `x-api-key`, `x-api-sign`, `x-api-ts` (milliseconds, within 45 s of the server clock), ' +
    '`x-api-nonce` (a UUID, never reused by the key), `x-api-chain-id` and `x-api-p` (`STOCK`, exact case). ' +
    '`x-api-sign` is the hex HMAC-SHA256 (key = the API secret, UTF-8) of a five-line payload joined by `\\n`, without a trailing newline:',
  '',
  '1. the HTTP method in upper case',
  '2. the path from `/api/v1/` (no scheme, host or service prefix) and, when there is a query, `?` and its parameters sorted by name, ' +
    'encoded as `URLSearchParams` encodes them (send the query in that order)',
  '3. the `x-api-ts` value as sent',
  '4. the `x-api-nonce` value as sent',
  '5. the raw body exactly as sent (JSON, UTF-8), or the empty string',
  '',
  'Every authentication failure answers HTTP 400 `{"code":401,"errMsg":"Unauthorized","uuid":"…","t":…}`; the server logs the cause under that uuid. ' +
    'Every answer ends with `t`, the server clock in ms.',
  '',
  'Worked example: secret `demo-secret`, `x-api-ts` `1700000000000`, `x-api-nonce` `5f0c3a1e-1b2d-4c3e-9f00-0123456789ab`, ' +
    '`GET /api/v1/orders?page=1&limit=2` (no body):',
  '',
  '```',
  'GET',
  '/api/v1/orders?limit=2&page=1',
  '1700000000000',
  '5f0c3a1e-1b2d-4c3e-9f00-0123456789ab',
  '',
  '```',
  '',
  '(the fifth line, the body, is empty) gives `x-api-sign` = `736c9880927f90b7f095466872cbc8e8d93044c0271213f708677a15ada1bdcc`.',
  '',
  '## Streams',
  '',
  'Pushed updates (quotes, candles; and, after `auth`, orders, operations and balances, resumable with `since`) come over the WebSocket ' +
    'at `ws://<host:port>/api/v1/ws` (behind the service prefix when there is one): see docs/streams.md.',
].join('\n');

/** The find-my-way constraint that routes a request to its chain's venue. */
const CHAIN_CONSTRAINT = 'stockChain';

/**
 * Routes each `/api/v1` request to the route set of the chain its `x-api-chain-id` names: one
 * header read and one set lookup per request. A chain not served derives the first chain, whose
 * route answers nothing but the auth hook's refusal (the hook, run first, knows no such chain), so
 * an unserved chain is the same opaque 401 as any other authentication failure.
 */
type ConstraintStrategy = Parameters<FastifyInstance['addConstraintStrategy']>[0];
type RouteHandler = NonNullable<ReturnType<ReturnType<ConstraintStrategy['storage']>['get']>>;

function chainConstraint(served: readonly number[]): ConstraintStrategy {
  const ids = new Set(served.map(String));
  const first = String(served[0]);
  return {
    name: CHAIN_CONSTRAINT,
    mustMatchWhenDerived: false,
    storage() {
      const handlers = new Map<unknown, RouteHandler>();
      return { get: (v) => handlers.get(v) ?? null, set: (v, h) => void handlers.set(v, h) };
    },
    deriveConstraint(req: { headers: Record<string, string | string[] | undefined> }) {
      const h = req.headers['x-api-chain-id'];
      return typeof h === 'string' && ids.has(h) ? h : first;
    },
  };
}

/**
 * The route modules of one chain's venue. With several chains each set is registered under the
 * chain's constraint, and only the first chain's appears in the OpenAPI document (the others are the
 * same operations).
 */
function venueRoutes(deps: StockApiDeps, constrained: { first: boolean } | undefined) {
  return async (api: FastifyInstance) => {
    if (constrained) {
      const chainId = String(deps.chainId);
      api.addHook('onRoute', (route) => {
        route.constraints = { ...route.constraints, [CHAIN_CONSTRAINT]: chainId };
        if (!constrained.first) route.schema = { ...route.schema, hide: true };
      });
    }
    const oneClick = createOneClickService(deps);
    await api.register(named(marketRoutes), { deps });
    await api.register(named(portfolioRoutes), { deps });
    await api.register(named(ordersRoutes), { deps, oneClick });
    await api.register(named(cashRoutes), { deps, oneClick });
    await api.register(named(stockTransferRoutes), { deps, oneClick });
    await api.register(named(oneClickRoutes), { oneClick });
  };
}

export async function buildStockApi(opts: StockApiOptions): Promise<FastifyInstance> {
  const { deps } = opts;
  const others = opts.otherChains ?? [];
  for (const other of others) {
    if (other.product !== deps.product || other.prefix !== deps.prefix) throw new Error('every chain of the stock API serves the same product behind the same prefix');
  }
  const venues = [deps, ...others];
  return buildVenueApi({
    logger: opts.logger,
    envelope: stockEnvelope,
    api: 'stock',
    bodyLimitBytes: opts.bodyLimitBytes,
    trustedProxies: opts.trustedProxies,
    transport: opts.transport,
    info: { title: 'Tokenized-stock trading API', version: STOCK_API_VERSION, description: STOCK_API_DESCRIPTION },
    securityHeaders: {
      apiKey: 'x-api-key',
      signature: 'x-api-sign',
      timestamp: 'x-api-ts',
      nonce: 'x-api-nonce',
      chainId: 'x-api-chain-id',
      product: 'x-api-p',
    },
    authenticate: (app) => {
      // Single chain: no constraint at all, the routes as they always were.
      if (others.length > 0) app.addConstraintStrategy(chainConstraint(venues.map((v) => v.chainId)));
      return createStockAuthHook({ keys: opts.keys, nonces: opts.nonces, chainId: deps.chainId, otherChainIds: others.map((o) => o.chainId), unstartedChainIds: opts.unstartedChainIds, product: deps.product, prefix: deps.prefix, now: deps.now });
    },
    scopePrefix: `${deps.prefix}/api/v1`,
    servicePrefix: deps.prefix,
    referenceTitle: 'Tokenized-stock API reference',
    probeEnvelope: stockProbeEnvelope,
    readiness: opts.readiness,
    routes: async (api) => {
      if (others.length === 0) return venueRoutes(deps, undefined)(api);
      for (const [i, venue] of venues.entries()) await api.register(named(venueRoutes(venue, { first: i === 0 }), 'venue routes'));
    },
    extraRoutes: opts.extraRoutes,
    // The stock API has no rate limit of its own (docs/stock-api.md): a 429 fault carries Retry-After only.
    ...(opts.faults ? { faults: { source: opts.faults } } : {}),
  });
}
