/**
 * The tokenized-stock API as a Fastify application: generic HTTP machinery, OpenAPI generated
 * from the route schemas, and the authenticated /api/v1 scope holding one route module per group.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import type { NonceStore } from '../auth/nonce-store.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { createHttpServer } from '../http/create-http-server.ts';
import { decodeJsonRequest } from '../http/request-decoder.ts';
import { createStockAuthHook } from './stock-auth-hook.ts';
import type { StockApiDeps } from './stock-deps.ts';
import { stockEnvelope } from './stock-envelope.ts';
import { marketRoutes } from './routes/market-routes.ts';
import { portfolioRoutes } from './routes/portfolio-routes.ts';
import { ordersRoutes } from './routes/orders-routes.ts';
import { cashRoutes } from './routes/cash-routes.ts';
import { stockTransferRoutes } from './routes/stock-transfer-routes.ts';
import { oneClickRoutes } from './routes/one-click-routes.ts';
import { createOneClickService } from './one-click/one-click-service.ts';

export interface StockApiOptions {
  deps: StockApiDeps;
  keys: ApiKeyService;
  nonces: NonceStore;
  logger: Logger;
  bodyLimitBytes: number;
  trustedProxies?: string[];
  /** Extra route modules registered inside the authenticated scope (later issues add orders, cash, ...). */
  extraRoutes?: Array<(api: FastifyInstance) => Promise<void>>;
}

export const STOCK_API_VERSION = '1.0.0';

export async function buildStockApi(opts: StockApiOptions): Promise<FastifyInstance> {
  const { deps } = opts;
  const app = createHttpServer({
    logger: opts.logger,
    envelope: stockEnvelope,
    bodyLimitBytes: opts.bodyLimitBytes,
    trustedProxies: opts.trustedProxies,
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tokenized-stock trading API',
        version: STOCK_API_VERSION,
        description:
          'Market data, portfolio, orders, cash and stock operations and One Click delegation for tokenized stocks. ' +
          'Every /api/v1 request is signed: x-api-sign = hex HMAC-SHA256(secret, METHOD\\nURI\\nTS\\nNONCE\\nBODY). See docs/stock-api.md.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          signature: { type: 'apiKey', in: 'header', name: 'x-api-sign' },
          timestamp: { type: 'apiKey', in: 'header', name: 'x-api-ts' },
          nonce: { type: 'apiKey', in: 'header', name: 'x-api-nonce' },
          chainId: { type: 'apiKey', in: 'header', name: 'x-api-chain-id' },
          product: { type: 'apiKey', in: 'header', name: 'x-api-p' },
        },
      },
      security: [{ apiKey: [], signature: [], timestamp: [], nonce: [], chainId: [], product: [] }],
    },
  });

  const auth = createStockAuthHook({
    keys: opts.keys,
    nonces: opts.nonces,
    chainId: deps.chainId,
    product: deps.product,
    prefix: deps.prefix,
    now: deps.now,
  });

  await app.register(
    async (api) => {
      api.addHook('preValidation', auth);
      // Body and query are read only once authentication has decided: before that, a request learns
      // nothing but the opaque 401 (invalid JSON or a wrong content type included).
      api.addHook('preValidation', decodeJsonRequest);
      // The scope's hooks also run for its not-found handler: unknown /api/v1 routes authenticate
      // first, so a caller without a valid signature cannot probe which routes exist.
      api.setNotFoundHandler(async () => {
        throw new NotFoundError('route');
      });
      // The scope's root (`/api/v1` and `/api/v1/`) is not covered by its not-found handler: answered
      // here, after the same hooks, so that it too tells a stranger nothing but the opaque 401.
      api.all('/', { schema: { hide: true } }, async () => {
        throw new NotFoundError('route');
      });
      const oneClick = createOneClickService(deps);
      await api.register(marketRoutes, { deps });
      await api.register(portfolioRoutes, { deps });
      await api.register(ordersRoutes, { deps, oneClick });
      await api.register(cashRoutes, { deps, oneClick });
      await api.register(stockTransferRoutes, { deps, oneClick });
      await api.register(oneClickRoutes, { oneClick });
      for (const extra of opts.extraRoutes ?? []) await api.register(extra);
    },
    { prefix: `${deps.prefix}/api/v1` },
  );

  app.get(`${deps.prefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  app.get(`${deps.prefix}/healthz`, { schema: { hide: true } }, async (req) => ({ code: 200, errMsg: '', uuid: req.id, data: { status: 'ok' } }));
  return app;
}
