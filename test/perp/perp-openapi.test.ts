/** The committed interface snapshot must equal what the routes declare; `npm run openapi` refreshes it. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generatePerpOpenApi } from '../../src/perp/perp-openapi.ts';

/** The perp endpoints served so far (contract.md §B: withdrawals and liquidity join later). */
const PERP_ENDPOINTS = [
  'GET /v4/public/trader/time',
  'GET /v4/public/trader/instruments',
  'GET /v4/public/trader/depth',
  'GET /v4/public/trader/tickers',
  'GET /v4/public/trader/klines',
  'GET /v4/public/trader/funding-rates',
  'GET /v4/public/trader/market-trades',
  'POST /v4/public/trader/orders/build',
  'POST /v4/public/trader/orders',
  'DELETE /v4/public/trader/orders/{orderId}',
  'POST /v4/public/trader/orders/amend',
  'POST /v4/public/trader/orders/amend/build',
  'POST /v4/public/trader/orders/batch',
  'POST /v4/public/trader/orders/batch-cancel',
  'POST /v4/public/trader/orders/fill',
  'POST /v4/public/trader/positions/close',
  'POST /v4/public/trader/positions/adjust',
  'POST /v4/public/trader/positions/margin',
  'GET /v4/public/trader/account',
  'GET /v4/public/trader/account/proof',
  'GET /v4/public/trader/account/assets',
  'GET /v4/public/trader/account/deposits',
  'GET /v4/public/trader/account/withdrawals',
  'POST /v4/public/trader/account/withdrawals',
  'POST /v4/public/trader/account/withdrawals/build',
  'GET /v4/public/trader/account/transactions',
  'GET /v4/public/trader/positions',
  'GET /v4/public/trader/orders/open',
  'GET /v4/public/trader/orders/{orderId}',
  'GET /v4/public/trader/orders/client/{clientOrderId}',
  'GET /v4/public/trader/orders/history',
  'GET /v4/public/trader/trades',
  'POST /v4/public/trader/approve/prepare',
  'POST /v4/public/trader/approve/submit',
  'GET /v4/public/trader/approve/{txHash}',
  'POST /v4/public/trader/deposit/prepare',
  'POST /v4/public/trader/deposit/submit',
  'GET /v4/public/trader/deposit/{txHash}',
  'POST /v4/public/trader/api-keys/prepare',
  'POST /v4/public/trader/api-keys',
  'GET /v4/public/trader/api-keys',
  'PATCH /v4/public/trader/api-keys/{apiKey}',
  'DELETE /v4/public/trader/api-keys/{apiKey}',
  'GET /v4/public/trader/one-click',
  'POST /v4/public/trader/one-click/prepare',
  'POST /v4/public/trader/one-click/enable',
  'POST /v4/public/trader/one-click/disable',
  'POST /v4/public/trader/orders/cancel-all-after',
  'POST /v4/public/trader/liquidity/add',
  'POST /v4/public/trader/liquidity/remove',
  'GET /v4/public/trader/liquidity/positions',
  'GET /v4/public/trader/liquidity/history',
  'GET /v4/public/trader/insurance-fund',
  // Monday Trade clients' shape (docs/perp-api.md "Monday Trade clients").
  'POST /v4/public/trader/api-key/create',
  'GET /v4/public/trader/market/instruments',
  'GET /v4/public/trader/market/funding/history',
  'POST /v4/public/trader/order/market',
  'POST /v4/public/trader/order/limit',
].sort();

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; responses?: Record<string, unknown> }>>;
}

describe('perp API OpenAPI snapshot', () => {
  it('matches openapi/perp-api.json', async () => {
    const generated = JSON.parse(JSON.stringify(await generatePerpOpenApi()));
    const committed = JSON.parse(fs.readFileSync('openapi/perp-api.json', 'utf8'));
    expect(generated).toEqual(committed);
  });

  it('documents the endpoints, the public ones without security, each with a 200 schema', async () => {
    const doc = (await generatePerpOpenApi()) as Doc;
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.entries(doc.paths).flatMap(([path, o]) => Object.entries(o).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op] as const));
    expect(ops.map(([name]) => name).sort()).toEqual(PERP_ENDPOINTS);
    const publicOps = ops.filter(([, op]) => Array.isArray(op.security) && op.security.length === 0).map(([name]) => name).sort();
    expect(publicOps).toEqual(['GET /v4/public/trader/insurance-fund', 'GET /v4/public/trader/time', 'POST /v4/public/trader/api-key/create', 'POST /v4/public/trader/api-keys', 'POST /v4/public/trader/api-keys/prepare']);
    for (const [, op] of ops) expect(op.responses?.['200']).toBeDefined();
  });
});
