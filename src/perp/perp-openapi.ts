/**
 * Generates the perpetual API's OpenAPI document from the route schemas without starting the
 * stack (src/http/venue-api.ts renderOpenApi). `npm run openapi` commits the result to
 * openapi/perp-api.json.
 */
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { createMemoryNonceStore } from '../auth/nonce-store.ts';
import { openApiBuildOptions, renderOpenApi } from '../http/venue-api.ts';
import type { Db } from '../storage/database.ts';
import { buildPerpApi } from './perp-api.ts';

export async function generatePerpOpenApi(): Promise<unknown> {
  const nonces = createMemoryNonceStore();
  const app = await buildPerpApi({ ...openApiBuildOptions(), chainId: 1, db: {} as Db, keys: {} as ApiKeyService, nonces, rateLimit: { limit: 120 } });
  return renderOpenApi(app, () => nonces.close());
}
