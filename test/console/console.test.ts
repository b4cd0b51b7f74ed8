/**
 * The web console in headless Chromium against the real embedded stack: live stock prices and a
 * K-line chart, the perp book, and perpetual orders from the page (checked through the perp REST API
 * too): a limit order placed and cancelled, a stop that waits UNTRIGGERED, an order amended, a
 * take-profit that closes the position and goes with it; once over the live streams and once with
 * every stream refused (the page polls REST). Also the read-only view, the demo-credential rule over real sockets
 * (a non-loopback peer is refused, whatever its headers say), and the perp API's CORS answer. Every
 * request the page makes goes to the stack's own two origins.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleRoutes } from '../../src/console/console-routes.ts';
import { createHttpServer } from '../../src/http/create-http-server.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { stockEnvelope } from '../../src/stock/stock-envelope.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { ARTIFACTS, SLOW, expectLiveMarkets } from '../support/console-page.ts';
import { placeAndAmend, placeAndCancel, placeClosingTakeProfit, placeStop, px } from './console-orders.ts';
import { formatAmount, formatCash } from '../../src/console/browser/amount-format.ts';
import type { Position } from '@tokex/contract';
import { DEFAULT_INSTRUMENTS } from '../../src/perp/engine/instruments.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';


/** The first IPv4 address of this machine that is not loopback, if it has one. */
function externalIPv4(): string | undefined {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

describe.skipIf(!fs.existsSync(CHROMIUM))('web console', () => {
  let t: TestStack;
  let browser: Browser;
  let stockOrigin: string;
  let perpOrigin: string;

  beforeAll(async () => {
    // The perp API's default rate limit (120 a minute per key): the page must live within it.
    t = await startTestStack();
    stockOrigin = new URL(t.stack.stockBaseUrl!).origin;
    perpOrigin = new URL(t.perpBaseUrl!).origin;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** A fresh page recording where it sent requests and what went wrong in it. */
  async function openConsole(setup?: (context: BrowserContext) => Promise<void>) {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1500 } });
    await setup?.(context);
    const page = await context.newPage();
    const requested: string[] = [];
    const pageErrors: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('websocket', (ws) => requested.push(ws.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // Every position the page was answered, over REST or its stream (tradeAndClose matches rows to them).
    const heard: Position[] = [];
    const hear = (p: unknown) => {
      for (const row of Array.isArray(p) ? p : p === undefined || p === null ? [] : [p]) heard.push(row as Position);
    };
    page.on('response', (res) => {
      if (/\/v4\/public\/trader\/positions\b/.test(res.url())) void res.json().then((b: { data?: { rows?: unknown } }) => hear(b?.data?.rows), () => undefined);
    });
    page.on('websocket', (ws) =>
      ws.on('framereceived', ({ payload }) => {
        try {
          const f = JSON.parse(String(payload)) as { channel?: string; data?: unknown };
          if (f.channel === 'positions') hear(f.data);
        } catch {
          // Not JSON: nothing the positions table shows.
        }
      }),
    );
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    await page.goto(`${stockOrigin}/console`);
    const origins = () => new Set(requested.map((u) => new URL(u.replace(/^ws/, 'http')).origin));
    return { context, page, pageErrors, origins, heard };
  }

  /**
   * Another client of the same wallet trades: the tape and the Positions table follow; a take-profit
   * closing the position is placed from the page; the close takes the position and the take-profit.
   */
  async function tradeAndClose(page: Page, heard: readonly Position[], shot: string): Promise<void> {
    const trader = t.perpTrader!;
    const wallet = privateKeyToAccount(t.demo.wallets[0].privateKey);
    const bought = await trader.placeOrder<{ status: string; fills: Array<{ tradeId: string; price: string }> }>(wallet, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.001' });
    expect(bought.status).toBe('FILLED');
    const tape = page.getByRole('table', { name: 'Trades' });
    const trade = tape.locator(`tr[data-trade-id="${bought.fills[0].tradeId}"]`);
    await trade.waitFor(SLOW);
    expect((await trade.getByRole('cell').allTextContents()).slice(1)).toEqual(['BUY', px(bought.fills[0].price), '0.001']);
    const positions = page.getByRole('table', { name: 'Positions' });
    const long = positions.getByRole('row').filter({ hasText: 'BTC-USD' });
    await expect.poll(async () => (await long.getByRole('cell').allTextContents()).slice(0, 3), SLOW).toEqual(['BTC-USD', 'LONG', '0.001']);
    // Entry, mark, unrealised PnL, leverage and liquidation price: the API's own figures for the
    // position at the page's precision (a liquidation price of null, far below zero, is `—`). The mark moves, so the page's row must equal the API's
    // position as read at one of the recent samples (the page shows nothing the API did not answer).
    const asShown = (p: Position) => ['BTC-USD', 'LONG', '0.001', px(p.entryPrice!), px(p.markPrice!), formatCash(p.unrealisedPnl), `${formatAmount(String(p.leverage), 2)}×`, formatAmount(p.liquidationPrice, 1)];
    const seen = new Set<string>();
    await expect
      .poll(async () => {
        const [api] = (await trader.getPositions({ symbol: 'BTC-USD' })).rows;
        expect(api).toMatchObject({ side: 'LONG', size: '0.001', leverage: expect.any(Number) });
        expect(px(api.entryPrice!)).toBe(px(bought.fills[0].price));
        seen.add(JSON.stringify(asShown(api)));
        // What the page itself was answered counts too: polling reads positions every 6 s while the
        // mark moves each second, so the test's own reads may never land on the page's last mark.
        for (const p of heard) if (p.symbol === 'BTC-USD' && p.size === '0.001' && p.entryPrice && p.markPrice) seen.add(JSON.stringify(asShown(p)));
        return seen.has(JSON.stringify(await long.getByRole('cell').allTextContents()));
      }, SLOW)
      .toBe(true);
    const tp = await placeClosingTakeProfit(page, trader);
    await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-position.png`), fullPage: true });
    await trader.closePosition(wallet, { symbol: 'BTC-USD' });
    await long.waitFor({ state: 'detached', ...SLOW });
    // One-cancels-the-other: the closed position takes its closePosition trigger with it.
    await page.getByRole('table', { name: 'Open orders' }).locator(`tr[data-order-id="${tp}"]`).waitFor({ state: 'detached', ...SLOW });
    expect(await trader.getOrder(tp)).toMatchObject({ status: 'CANCELED', reason: 'POSITION_CLOSED' });
  }

  it('serves its config and, to a loopback peer of the embedded anvil, the demo credentials; hidden from OpenAPI; the perp API answers its preflight', async () => {
    const config = (await (await fetch(`${stockOrigin}/console/config`)).json()) as { code: number; data: any };
    expect(config.code).toBe(200);
    expect(config.data).toEqual({
      chainId: t.demo.chainId,
      stock: { baseUrl: t.stack.stockBaseUrl, wsUrl: t.demo.stock.wsUrl, product: t.demo.stock.product, symbols: ['AAPL', 'TSLA', 'NVDA', 'MSFT', 'SPY'], staleAfterMs: 30_000, chains: [t.demo.chainId] },
      perp: {
        baseUrl: t.perpBaseUrl, wsUrl: t.demo.perp!.wsUrl, symbols: expect.arrayContaining(['BTC-USD']), staleAfterMs: 30_000,
        instruments: DEFAULT_INSTRUMENTS.map(({ symbol, tickSize, lotSize }) => ({ symbol, tickSize, lotSize })),
      },
    });
    const res = await fetch(`${stockOrigin}/console/demo`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const demo = (await res.json()) as { code: number; data: any };
    expect(demo.code).toBe(200);
    const { stockRouter, cashToken, stocks } = t.demo.stock.contracts;
    expect(demo.data).toEqual({
      wallet: t.demo.wallets[0],
      rpcUrl: t.demo.rpcUrl,
      stock: { ...t.demo.stock.keys.writable, contracts: { stockRouter, cashToken, stocks } },
      // One chain: its node and contracts (test/console/console-chains.test.ts has two).
      chains: [{ chainId: t.demo.chainId, rpcUrl: t.demo.rpcUrl, contracts: { stockRouter, cashToken, stocks } }],
      perp: t.demo.perp!.keys.trader,
    });

    // The browser is told to load and call nothing but the stack's own origins.
    const html = await fetch(`${stockOrigin}/console`);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = Object.fromEntries(html.headers.get('content-security-policy')!.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['script-src']).toEqual(["'self'"]);
    // And the embedded anvil, for the demo wallet's own approvals: only on the page handed the wallet.
    expect(csp['connect-src']).toEqual(["'self'", t.demo.stock.wsUrl, perpOrigin, t.demo.perp!.wsUrl, new URL(t.demo.rpcUrl).origin]);

    const spec = (await (await fetch(`${stockOrigin}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths).length).toBeGreaterThan(10);
    expect(Object.keys(spec.paths).filter((p) => p.includes('console'))).toEqual([]);

    const preflight = (origin: string) =>
      fetch(`${t.perpBaseUrl}/v4/public/trader/orders/build`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key,x-api-sign,x-api-ts,x-chain-id' },
      });
    const ok = await preflight(stockOrigin);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(stockOrigin);
    expect(ok.headers.get('access-control-allow-headers')?.split(', ')).toEqual(expect.arrayContaining(['content-type', 'x-api-key', 'x-api-sign', 'x-api-ts', 'x-chain-id']));
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses the demo credentials with the stock envelope\'s 404 to a non-loopback peer, whatever X-Forwarded-For says', async () => {
    // The stack's own app, with the peer a non-loopback address.
    const injected = await t.stack.stockApi!.inject({ method: 'GET', url: '/console/demo', remoteAddress: '192.0.2.7', headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(injected.statusCode).toBe(404);
    expect(injected.json()).toEqual({ code: 404, errMsg: 'route: not found', uuid: expect.any(String), t: expect.any(Number) });
    expect(injected.body).not.toContain(t.demo.perp!.keys.trader.apiSecret);

    // And over a real socket from this machine's non-loopback address, behind a "trusted" proxy
    // range that makes req.ip the header's 127.0.0.1: the socket's peer decides.
    const ip = externalIPv4();
    if (!ip) return;
    const app = createHttpServer({ logger: createLogger({ level: 'silent' }), envelope: stockEnvelope, bodyLimitBytes: 1 << 20, trustedProxies: [`${ip}/32`] });
    await app.register(consoleRoutes, { ctx: { config: t.config, endpoints: {}, symbols: [] } });
    const address = await app.listen({ host: ip, port: 0 });
    try {
      const real = await fetch(`${address}/console/demo`, { headers: { 'x-forwarded-for': '127.0.0.1' } });
      expect(real.status).toBe(404);
      expect(await real.json()).toEqual({ code: 404, errMsg: 'route: not found', uuid: expect.any(String), t: expect.any(Number) });
      // The same routes do answer a loopback peer: only the peer made the difference.
      const control = await app.inject({ method: 'GET', url: '/console/demo', remoteAddress: '127.0.0.1' });
      expect(control.json().data.perp).toEqual(t.demo.perp!.keys.trader);
    } finally {
      await app.close();
    }
  });

  it('shows live prices, the perp book, and places and cancels a perpetual limit order over the streams', async () => {
    const { context, page, pageErrors, origins, heard } = await openConsole();
    try {
      await expect.poll(() => page.locator('#mode').textContent(), SLOW).toBe(`Demo wallet ${t.demo.wallets[0].address}: trading enabled.`);
      // One chain: no chain to choose.
      expect(await page.locator('#chain-choice').isHidden()).toBe(true);
      await expectLiveMarkets(page, 'streams');
      await expect.poll(() => page.locator('#feed-status').textContent(), SLOW).toBe('Live data: streaming.');
      // The demo deposit is credited before the engine admits an order.
      const balances = page.getByRole('table', { name: 'Balances' });
      await expect.poll(() => balances.getByRole('row').filter({ hasText: 'Perp margin' }).getByRole('cell').nth(2).textContent(), SLOW).toMatch(/^[1-9]/);
      // The stock wallet's mUSD from tokex's mUsdDetail, and USDC once: tokenBalances also lists the cash
      // tokens (isStock false), which the page shows from cashTokenBalances only.
      const stockBalance = await t.writable.getBalance(t.demo.wallets[0].address);
      await expect
        .poll(() => balances.getByRole('row').filter({ hasText: 'mUSD' }).getByRole('cell').allTextContents(), SLOW)
        .toEqual(['Stock exchange', 'mUSD', formatCash(stockBalance.mUsdDetail.total), formatCash(stockBalance.mUsdDetail.available), formatCash(stockBalance.mUsdDetail.locked)]);
      expect(await balances.getByRole('row').filter({ hasText: 'USDC' }).filter({ hasText: 'Stock wallet' }).count()).toBe(1);
      await placeAndCancel(page, t.perpTrader!, 80n, 'streams');
      await placeStop(page, t.perpTrader!, 'streams');
      await placeAndAmend(page, t.perpTrader!, 'streams');
      await tradeAndClose(page, heard, 'streams');
      expect(await page.locator('#feed-status').textContent()).toBe('Live data: streaming.');
      expect(await page.getByRole('alert').textContent()).toBe('');
      expect(pageErrors).toEqual([]);
      expect([...origins()].sort()).toEqual([stockOrigin, perpOrigin].sort());
      // No credential reached the log.
      const secrets = [t.demo.perp!.keys.trader.apiSecret, t.demo.stock.keys.writable.apiSecret, t.demo.wallets[0].privateKey.slice(2)];
      expect(t.logs.filter((l) => secrets.some((s) => l.includes(s)))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('says stale, not streaming, while a quote stands still on an open stream, and streaming once it moves', async () => {
    /** While set, every AAPL quote frame carries this one quote: the stream delivers, the price does not move. */
    let frozen: unknown;
    let freeze = false;
    /** While set, every MSFT quote frame says this session (as the us-sessions calendar would). */
    let session: string | undefined;
    const { context, page, pageErrors } = await openConsole(async (ctx) => {
      // A short age, so that the test need not wait 30 s: the page takes it from its configuration.
      await ctx.route('**/console/config', async (route) => {
        const res = await route.fetch();
        const body = await res.json();
        body.data.stock.staleAfterMs = 3_000;
        await route.fulfill({ response: res, json: body });
      });
      await ctx.routeWebSocket(/\/api\/v1\/ws$/, (ws) => {
        const server = ws.connectToServer();
        ws.onMessage((m) => server.send(m));
        server.onMessage((m) => {
          const f = JSON.parse(String(m)) as { channel?: string; symbol?: string; data?: unknown };
          if (f.channel === 'quotes' && f.symbol === 'AAPL' && f.data) {
            if (!freeze) frozen = f.data;
            else if (frozen !== undefined) return ws.send(JSON.stringify({ ...f, data: frozen }));
          }
          if (f.channel === 'quotes' && f.symbol === 'MSFT' && f.data && session !== undefined) {
            return ws.send(JSON.stringify({ ...f, data: { ...(f.data as object), session } }));
          }
          ws.send(m);
        });
      });
    });
    const status = () => page.locator('#feed-status').textContent();
    const marketStatus = (symbol: string) =>
      page.getByRole('table', { name: 'Stock markets' }).getByRole('row').filter({ has: page.getByRole('button', { name: symbol, exact: true }) }).getByRole('cell').nth(3).textContent();
    try {
      await expect.poll(status, SLOW).toBe('Live data: streaming.');
      await expect.poll(() => marketStatus('AAPL'), SLOW).toBe('open');
      freeze = true;
      await expect.poll(status, SLOW).toBe('Live data: stale, no new price for AAPL in over 3 s.');
      expect(await marketStatus('AAPL')).toBe('open · stale');
      expect(await marketStatus('MSFT')).toBe('open');
      await page.screenshot({ path: path.join(ARTIFACTS, 'stale-quote.png'), fullPage: true });
      freeze = false;
      await expect.poll(status, SLOW).toBe('Live data: streaming.');
      expect(await marketStatus('AAPL')).toBe('open');
      // An extended session is named beside the market status; regular hours say nothing more.
      session = 'pre-market';
      await expect.poll(() => marketStatus('MSFT'), SLOW).toBe('open · pre-market');
      session = 'regular';
      await expect.poll(() => marketStatus('MSFT'), SLOW).toBe('open');
      // The perp market's mark and index, fresh.
      await expect.poll(() => page.locator('#perp-prices').textContent(), SLOW).toMatch(/^Mark \d+(\.\d+)? · index \d+(\.\d+)?$/);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('falls back to polling REST when the streams cannot connect or refuse the subscriptions', async () => {
    const { context, page, pageErrors, origins, heard } = await openConsole(async (ctx) => {
      // The stock stream never connects; the perp stream connects and refuses every message.
      await ctx.routeWebSocket(/\/api\/v1\/ws$/, (ws) => ws.close({ code: 1011, reason: 'test: streams down' }));
      await ctx.routeWebSocket(/\/v4\/public\/ws$/, (ws) =>
        ws.onMessage((m) => {
          const frame = JSON.parse(String(m)) as { id?: string };
          ws.send(JSON.stringify({ type: 'error', id: frame.id, code: 40001, msg: 'test: refused' }));
        }),
      );
    });
    try {
      await expect.poll(() => page.locator('#feed-status').textContent(), SLOW).toMatch(/^Live data: streams unavailable, polling the REST APIs instead for /);
      await expectLiveMarkets(page, 'polling');
      await placeAndCancel(page, t.perpTrader!, 79n, 'polling');
      await placeStop(page, t.perpTrader!, 'polling');
      await placeAndAmend(page, t.perpTrader!, 'polling');
      await tradeAndClose(page, heard, 'polling');
      expect(await page.locator('#feed-status').textContent()).toMatch(/^Live data: streams unavailable, polling/);
      expect(await page.getByRole('alert').textContent()).toBe('');
      expect(pageErrors).toEqual([]);
      expect([...origins()].sort()).toEqual([stockOrigin, perpOrigin].sort());
    } finally {
      await context.close();
    }
  }, 120_000);

  it('is read-only, from the public streams, when the demo credentials are refused', async () => {
    const { context, page, pageErrors, origins } = await openConsole(async (ctx) => {
      // What a non-loopback browser gets (the refusal itself is tested above over real sockets).
      await ctx.route('**/console/demo', (r) => r.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ code: 404, errMsg: 'route: not found', uuid: 'x' }) }));
    });
    try {
      await expect.poll(() => page.locator('#mode').textContent(), SLOW).toMatch(/^Read-only view: public market data from the streams only\./);
      const last = page.getByRole('table', { name: 'Stock markets' }).getByRole('row').filter({ hasText: 'TSLA' }).getByRole('cell').first();
      await expect.poll(() => last.textContent(), SLOW).toMatch(/^\d+\.\d{2}$/);
      const first = await last.textContent();
      await expect.poll(() => last.textContent(), SLOW).not.toBe(first);
      const book = page.getByRole('table', { name: 'Order book' });
      await expect.poll(() => book.getByRole('row').filter({ hasText: /^bid/ }).count(), SLOW).toBeGreaterThanOrEqual(2);
      expect(await page.getByRole('button', { name: 'Place order' }).count()).toBe(0);
      expect(await page.getByRole('table', { name: 'Open orders' }).count()).toBe(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'read-only.png'), fullPage: true });
      expect(await page.getByRole('alert').textContent()).toBe('');
      expect(pageErrors).toEqual([]);
      expect([...origins()].every((o) => o === stockOrigin || o === perpOrigin)).toBe(true);
    } finally {
      await context.close();
    }
  }, 60_000);
});
