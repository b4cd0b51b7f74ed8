/** The committed interface snapshot must equal what the routes declare; `npm run openapi` refreshes it. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateStockOpenApi } from '../../src/stock/stock-openapi.ts';

describe('stock API OpenAPI snapshot', () => {
  it('matches openapi/stock-api.json', async () => {
    const generated = JSON.parse(JSON.stringify(await generateStockOpenApi()));
    const committed = JSON.parse(fs.readFileSync('openapi/stock-api.json', 'utf8'));
    expect(generated).toEqual(committed);
  });

  it('documents every market-data and portfolio endpoint with an OpenAPI 3.1 header', async () => {
    const doc = (await generateStockOpenApi()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    for (const path of [
      '/api/v1/config',
      '/api/v1/symbols',
      '/api/v1/prices/{symbol}',
      '/api/v1/prices/{symbol}/history',
      '/api/v1/underlying/{symbol}/price',
      '/api/v1/corporate-action',
      '/api/v1/users/{userId}',
      '/api/v1/users/{userId}/balance',
      '/api/v1/users/{userId}/positions',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
  });
});
