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

export interface StockApiOptions {
  /** HTTPS or plain HTTP, and whether requests must arrive as HTTPS (src/http/tls-options.ts). Default: plain HTTP. */
  transport?: ApiTransport;
  deps: StockApiDeps;
  keys: ApiKeyService;
  nonces: NonceStore;
  logger: Logger;
  bodyLimitBytes: number;
  trustedProxies?: string[];
  /** Extra route modules registered inside the authenticated scope (later issues add orders, cash, ...). */
  extraRoutes?: Array<(api: FastifyInstance) => Promise<void>>;
  /** `/readyz`'s judge (docs/operations.md); without it the API says ready. */
  readiness?: ReadinessProbe;
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

export async function buildStockApi(opts: StockApiOptions): Promise<FastifyInstance> {
  const { deps } = opts;
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
    authenticate: () =>
      createStockAuthHook({ keys: opts.keys, nonces: opts.nonces, chainId: deps.chainId, product: deps.product, prefix: deps.prefix, now: deps.now }),
    scopePrefix: `${deps.prefix}/api/v1`,
    servicePrefix: deps.prefix,
    referenceTitle: 'Tokenized-stock API reference',
    probeEnvelope: stockProbeEnvelope,
    readiness: opts.readiness,
    routes: async (api) => {
      const oneClick = createOneClickService(deps);
      await api.register(marketRoutes, { deps });
      await api.register(portfolioRoutes, { deps });
      await api.register(ordersRoutes, { deps, oneClick });
      await api.register(cashRoutes, { deps, oneClick });
      await api.register(stockTransferRoutes, { deps, oneClick });
      await api.register(oneClickRoutes, { oneClick });
    },
    extraRoutes: opts.extraRoutes,
  });
}
