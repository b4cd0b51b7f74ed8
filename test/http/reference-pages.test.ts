/**
 * The reference pages of both APIs over real HTTP: `/docs` serves Scalar's page, whose script comes
 * from the API itself (no CDN), next to the OpenAPI document at `/openapi.json`; none of them needs
 * authentication or counts against a rate limit, and none appears in the document. The documents'
 * introductions carry each API's signing recipe, and their worked examples are recomputed here with
 * the server's own signing code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { signPerp, signStock } from '../../src/auth/hmac.ts';
import type { ApiKeyService } from '../../src/auth/api-key-service.ts';
import { createMemoryNonceStore, type NonceStore } from '../../src/auth/nonce-store.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { buildStockApi } from '../../src/stock/stock-api.ts';
import type { StockApiDeps } from '../../src/stock/stock-deps.ts';
import { perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface Served {
  baseUrl: string;
  stop(): Promise<void>;
}

/** The stock API with inert dependencies (as its OpenAPI test builds it), behind `prefix`. */
async function startStock(prefix: string): Promise<Served> {
  const deps = new Proxy({ chainId: 0, product: 'STOCK', prefix } as StockApiDeps, {
    get: (target, prop) => (prop in target ? target[prop as keyof StockApiDeps] : () => undefined),
  });
  const nonces: NonceStore = createMemoryNonceStore();
  const app: FastifyInstance = await buildStockApi({ deps, keys: {} as ApiKeyService, nonces, logger: createLogger({ level: 'silent' }), bodyLimitBytes: 65_536 });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseUrl,
    async stop() {
      await app.close();
      await nonces.close();
    },
  };
}

/** Checks `/docs` (or `${path}`) and its script; answers the page's HTML. */
async function expectReferencePage(baseUrl: string, title: string, path = '/docs'): Promise<string> {
  const moved = await fetch(`${baseUrl}${path}`, { redirect: 'manual' });
  expect(moved.status).toBe(301);
  expect(moved.headers.get('location')).toBe(`${path}/`);
  const page = await fetch(`${baseUrl}${path}`);
  expect(page.status).toBe(200);
  expect(page.url).toBe(`${baseUrl}${path}/`);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const html = await page.text();
  expect(html).toContain(`<title>${title}</title>`);
  // Nothing from another origin: no absolute URL at all, fonts off.
  expect(html).not.toMatch(/https?:\/\//);
  expect(html).toContain('"withDefaultFonts": false');
  expect(html).toContain('"proxyUrl": ""');
  expect(html).toContain('"showDeveloperTools": "never"');
  const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
  expect(scripts).toEqual(['js/scalar.js']);
  const scriptUrl = new URL(scripts[0], page.url).href;
  expect(scriptUrl).toBe(`${baseUrl}${path}/js/scalar.js`);
  const script = await fetch(scriptUrl);
  expect(script.status).toBe(200);
  expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
  const js = await script.text();
  expect(js.length).toBeGreaterThan(1_000_000);
  expect(js).toContain('createApiReference');
  // The page reads the document from beside it.
  const doc = await fetch(new URL('./openapi.json', page.url));
  expect(doc.status).toBe(200);
  expect(((await doc.json()) as { openapi: string }).openapi).toBe('3.1.0');
  return html;
}

interface Doc {
  openapi: string;
  info: { description: string };
  paths: Record<string, unknown>;
}

async function document(url: string): Promise<Doc> {
  const r = await fetch(url);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  return (await r.json()) as Doc;
}

function expectNoReferenceRoutes(doc: Doc): void {
  expect(Object.keys(doc.paths).filter((p) => /docs|openapi|healthz/.test(p))).toEqual([]);
}

describe('perp API reference page', () => {
  let h: PerpHarness;
  beforeAll(async () => {
    // A limit of one request a minute: the page, its script and the document must not count.
    h = await perpHarnessVariants()[0].start({ limit: 1 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('serves /docs with the script from the API, unauthenticated and outside the rate limit', async () => {
    await expectReferencePage(h.baseUrl, 'Perpetual futures API reference');
    await expectReferencePage(h.baseUrl, 'Perpetual futures API reference');
    const r = await fetch(`${h.baseUrl}/docs/js/scalar.js`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    await r.arrayBuffer();
  });

  it('serves /openapi.json, without the reference routes, its introduction the signing recipe with a worked example that holds', async () => {
    const doc = await document(`${h.baseUrl}/openapi.json`);
    expect(doc.openapi).toBe('3.1.0');
    expectNoReferenceRoutes(doc);
    expect(doc.paths['/v4/public/trader/market-trades']).toBeDefined();
    const d = doc.info.description;
    expect(d).toContain('Base64 (standard, padded) of HMAC-SHA256(key = the API secret, message = `ts + METHOD + request_path + body`)');
    for (const header of ['X-Api-Key', 'X-Api-Ts', 'X-Api-Sign', 'X-Chain-Id']) expect(d).toContain(`\`${header}\``);
    expect(d).toContain('docs/streams.md');
    expect(d).toContain('/v4/public/ws');
    const message = /message {4}= (\S+)/.exec(d)![1];
    const sign = /X-Api-Sign = (\S+)/.exec(d)![1];
    expect(message).toBe('1700000000000GET/v4/public/trader/market-trades?limit=2&symbol=BTC-USD');
    expect(signPerp('demo-secret', { ts: '1700000000000', method: 'GET', requestPath: '/v4/public/trader/market-trades?limit=2&symbol=BTC-USD', body: '' })).toBe(sign);
  });
});

/**
 * Loads the page in Chromium: it renders the document, and every request it makes (the favicon
 * aside, which the browser asks for on its own) goes to the API itself.
 */
async function expectRendersOffline(browser: Browser, pageUrl: string, heading: string): Promise<void> {
  const page = await browser.newPage();
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(pageUrl, { waitUntil: 'networkidle' });
  await page.getByRole('heading', { name: heading }).first().waitFor({ timeout: 10_000 });
  await page.getByRole('heading', { name: 'Signing a request' }).first().waitFor();
  expect(await page.getByText('Generate MCP').count()).toBe(0);
  const origin = new URL(pageUrl).origin;
  expect(requested.filter((u) => new URL(u).origin !== origin)).toEqual([]);
  const path = new URL(pageUrl).pathname;
  expect(new Set(requested.map((u) => new URL(u).pathname))).toEqual(new Set([path, `${path}js/scalar.js`, `${path}openapi.json`]));
  await page.close();
}

describe('reference pages in a browser', () => {
  let stock: Served;
  let browser: Browser;
  beforeAll(async () => {
    [stock, browser] = await Promise.all([startStock('/stock'), chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })]);
  });
  afterAll(async () => {
    await browser?.close();
    await stock?.stop();
  });

  it('render from the API alone: no request leaves the machine', async () => {
    // Behind the service prefix: the page's script and document come by relative URLs from beside it.
    await expectRendersOffline(browser, `${stock.baseUrl}/stock/docs/`, 'Tokenized-stock trading API');
  }, 30_000);
});

describe('stock API reference page', () => {
  let plain: Served;
  let prefixed: Served;
  beforeAll(async () => {
    [plain, prefixed] = await Promise.all([startStock(''), startStock('/stock')]);
  });
  afterAll(async () => {
    await plain?.stop();
    await prefixed?.stop();
  });

  it('serves /docs with the script from the API, unauthenticated, and under the service prefix too', async () => {
    await expectReferencePage(plain.baseUrl, 'Tokenized-stock API reference');
    await expectReferencePage(prefixed.baseUrl, 'Tokenized-stock API reference');
    await expectReferencePage(prefixed.baseUrl, 'Tokenized-stock API reference', '/stock/docs');
    expect((await fetch(`${plain.baseUrl}/stock/docs/`)).status).toBe(404);
  });

  it('serves /openapi.json at the root and under the service prefix, without the reference routes', async () => {
    const root = await document(`${prefixed.baseUrl}/openapi.json`);
    expect(await document(`${prefixed.baseUrl}/stock/openapi.json`)).toEqual(root);
    expect(root.openapi).toBe('3.1.0');
    expect(Object.keys(root.paths).every((p) => p.startsWith('/stock/api/v1/'))).toBe(true);
    const doc = await document(`${plain.baseUrl}/openapi.json`);
    expectNoReferenceRoutes(doc);
    expect(Object.keys(doc.paths)).toHaveLength(Object.keys(root.paths).length);
  });

  it('its introduction is the signing recipe, with a worked example that holds', async () => {
    const d = (await document(`${plain.baseUrl}/openapi.json`)).info.description;
    expect(d).toContain('hex HMAC-SHA256');
    for (const header of ['x-api-key', 'x-api-sign', 'x-api-ts', 'x-api-nonce', 'x-api-chain-id', 'x-api-p']) expect(d).toContain(`\`${header}\``);
    expect(d).toContain('docs/streams.md');
    expect(d).toContain('/api/v1/ws');
    const lines = /```\n([\s\S]*?)```/.exec(d)![1].split('\n');
    // Five lines, the body (the fifth) empty, and the fence closing right after.
    expect(lines).toEqual(['GET', '/api/v1/orders?limit=2&page=1', '1700000000000', '5f0c3a1e-1b2d-4c3e-9f00-0123456789ab', '', '']);
    const sign = /`x-api-sign` = `([0-9a-f]{64})`/.exec(d)![1];
    expect(signStock('demo-secret', { method: lines[0], uri: lines[1], ts: lines[2], nonce: lines[3], body: lines[4] })).toBe(sign);
  });
});
