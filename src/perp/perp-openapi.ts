/**
 * Generates the perpetual API's OpenAPI document from the route schemas without starting the
 * stack: the routes are registered with inert dependencies (never called) and Fastify's swagger
 * plugin renders what they declare. `npm run openapi` commits the result to openapi/perp-api.json.
 */
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { createMemoryNonceStore } from '../auth/nonce-store.ts';
import { createLogger } from '../lib/logger.ts';
import type { Db } from '../storage/database.ts';
import { buildPerpApi } from './perp-api.ts';

export async function generatePerpOpenApi(): Promise<unknown> {
  const nonces = createMemoryNonceStore();
  const app = await buildPerpApi({
    chainId: 1,
    db: {} as Db,
    keys: {} as ApiKeyService,
    nonces,
    rateLimit: { limit: 120 },
    logger: createLogger({ level: 'silent' }),
    bodyLimitBytes: 65_536,
  });
  await app.ready();
  const doc = app.swagger();
  await app.close();
  await nonces.close();
  return doc;
}
