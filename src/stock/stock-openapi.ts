/**
 * Generates the stock API's OpenAPI document from the route schemas without starting the stack
 * (src/http/venue-api.ts renderOpenApi): any dependency a route would call throws. `npm run openapi`
 * commits the result to openapi/stock-api.json.
 */
import { createMemoryNonceStore } from '../auth/nonce-store.ts';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { openApiBuildOptions, renderOpenApi } from '../http/venue-api.ts';
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
  const app = await buildStockApi({ ...openApiBuildOptions(), deps, keys: {} as ApiKeyService, nonces });
  return renderOpenApi(app, () => nonces.close());
}
