/** The committed interface snapshot must equal what the routes declare; `npm run openapi` refreshes it. */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import type { ApiKeyService } from '../../src/auth/api-key-service.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { buildStockApi } from '../../src/stock/stock-api.ts';
import type { StockApiDeps } from '../../src/stock/stock-deps.ts';
import { generateStockOpenApi } from '../../src/stock/stock-openapi.ts';

/** The stock API's endpoints as the spec lists them (seed §4A), in OpenAPI's path notation. */
const STOCK_ENDPOINTS = [
  'GET /api/v1/config',
  'GET /api/v1/symbols',
  'GET /api/v1/prices/{symbol}',
  'GET /api/v1/prices/{symbol}/history',
  'GET /api/v1/underlying/{symbol}/price',
  'GET /api/v1/corporate-action',
  'GET /api/v1/users/{userId}',
  'GET /api/v1/users/{userId}/balance',
  'GET /api/v1/users/{userId}/positions',
  'POST /api/v1/orders/calldata',
  'POST /api/v1/orders/with-deposit/calldata',
  'POST /api/v1/orders/tx',
  'GET /api/v1/orders',
  'GET /api/v1/orders/tx/{txHash}',
  'GET /api/v1/orders/{orderId}',
  'DELETE /api/v1/orders/{orderId}/calldata',
  'POST /api/v1/orders/send',
  'POST /api/v1/orders/with-deposit/send',
  'DELETE /api/v1/orders/{orderId}/send',
  'GET /api/v1/1ct/status',
  'POST /api/v1/1ct/prepare',
  'POST /api/v1/1ct/enable',
  'POST /api/v1/1ct/disable',
  ...['cash', 'stock'].flatMap((group) =>
    ['deposits', 'withdrawals'].flatMap((kind) => [
      `POST /api/v1/${group}/${kind}/calldata`,
      `POST /api/v1/${group}/${kind}/send`,
      `POST /api/v1/${group}/${kind}/tx`,
      `GET /api/v1/${group}/${kind}`,
      `GET /api/v1/${group}/${kind}/{operationId}`,
    ]),
  ),
].sort();

/** Every route the application registers, as `METHOD /path` with `{param}` placeholders. */
async function registeredRoutes(): Promise<string[]> {
  const routes: string[] = [];
  const deps = new Proxy({ chainId: 0, product: 'STOCK', prefix: '' } as StockApiDeps, {
    get: (target, prop) => (prop in target ? target[prop as keyof StockApiDeps] : () => undefined),
  });
  const nonces = createMemoryNonceStore();
  const app: FastifyInstance = await buildStockApi({
    deps,
    keys: {} as ApiKeyService,
    nonces,
    logger: createLogger({ level: 'silent' }),
    bodyLimitBytes: 65_536,
    extraRoutes: [],
  });
  // Routes were registered inside buildStockApi, before a test could add an onRoute hook: read them
  // back from the router's tree, where each line holds a segment below its parent's path.
  await app.ready();
  const parents: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const at = line.indexOf('── ');
    if (at === -1) continue;
    const depth = (at - 1) / 4;
    const m = /^(\S+)(?: \(([^)]*)\))?/.exec(line.slice(at + 3))!;
    const path = (depth > 0 ? parents[depth - 1] : '') + m[1];
    parents[depth] = path;
    parents.length = depth + 1;
    for (const method of (m[2] ?? '').split(', ').filter((x) => x && x !== 'HEAD')) routes.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
  }
  await app.close();
  await nonces.close();
  return routes.sort();
}

describe('stock API OpenAPI snapshot', () => {
  it('matches openapi/stock-api.json', async () => {
    const generated = JSON.parse(JSON.stringify(await generateStockOpenApi()));
    const committed = JSON.parse(fs.readFileSync('openapi/stock-api.json', 'utf8'));
    expect(generated).toEqual(committed);
  });

  it('documents every registered route, and the registered routes are the 43 stock endpoints', async () => {
    const doc = (await generateStockOpenApi()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(STOCK_ENDPOINTS).toHaveLength(43);
    expect(documented).toEqual(STOCK_ENDPOINTS);
    // The scope's own root only answers not found (after authentication); it is no endpoint.
    const api = (await registeredRoutes()).filter((r) => /^\S+ \/api\/v1\/./.test(r));
    expect(api).toEqual(STOCK_ENDPOINTS);
  });
});
