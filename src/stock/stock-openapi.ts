/**
 * Generates the stock API's OpenAPI document from the route schemas without starting the stack:
 * the routes are registered with inert dependencies (never called) and Fastify's swagger plugin
 * renders what they declare. `npm run openapi` commits the result to openapi/stock-api.json.
 */
import { createMemoryNonceStore } from '../auth/nonce-store.ts';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { createLogger } from '../lib/logger.ts';
import { buildStockApi } from './stock-api.ts';
import type { StockApiDeps } from './stock-deps.ts';

export async function generateStockOpenApi(): Promise<unknown> {
  const unused = () => {
    throw new Error('not available while generating the OpenAPI document');
  };
  const deps = new Proxy({ chainId: 0, product: 'STOCK', prefix: '' } as StockApiDeps, {
    get: (target, prop) => (prop in target ? target[prop as keyof StockApiDeps] : unused),
  });
  const nonces = createMemoryNonceStore();
  const app = await buildStockApi({
    deps,
    keys: {} as ApiKeyService,
    nonces,
    logger: createLogger({ level: 'silent' }),
    bodyLimitBytes: 65_536,
  });
  await app.ready();
  const doc = app.swagger();
  await app.close();
  await nonces.close();
  return doc;
}
