/**
 * The console as a trading terminal (docs/console.md), in headless Chromium against the real
 * embedded stack: the layout at 1,400 px and at a phone's width; stock trading through One Click
 * (a limit sell whose shares come from the wallet in the same transaction, shown locked and
 * cancelled from its row; a market buy by notional with the deposit flow, filled); the chart of both
 * venues with its interval choice and live candles; the perp book's spread and mid; the form's own
 * checks before the server's and the server's reason when it refuses; the operator page (roles,
 * halts, corporate actions with a retry, keys with a revoke, proof of reserves, metrics) and who
 * may open it; and axe-core over both pages. Screenshots go to artifacts/console/.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAppDatabase, openKeyService } from '../../src/app/storage-wiring.ts';
import { formatAmount, formatCash, formatShares, formatStockPrice } from '../../src/console/browser/amount-format.ts';
import { insertCorporateAction, markActionFailed, getCorporateAction } from '../../src/stock/corporate-actions/corporate-action-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { ARTIFACTS, SLOW } from '../support/console-page.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

describe.skipIf(!fs.existsSync(CHROMIUM))('web console: the trading terminal and the operator page', () => {
  let t: TestStack;
  let browser: Browser;
  let stockOrigin: string;
  let db: Db;

  beforeAll(async () => {
    t = await startTestStack();
    stockOrigin = new URL(t.stack.stockBaseUrl!).origin;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    db = await openAppDatabase(t.config);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await browser?.close();
    await t?.stop();
  });

  async function open(url: string, viewport = { width: 1400, height: 1000 }): Promise<{ context: BrowserContext; page: Page; pageErrors: string[]; requests: string[] }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    const requests: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r) => requests.push(`${r.method()} ${r.url()}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    await page.goto(url);
    return { context, page, pageErrors, requests };
  }

  /** axe-core in the page (evaluated over the DevTools protocol: the page's CSP allows no inline script). */
  async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: number; help: string }>> {
    await page.evaluate(AXE);
    const result = await page.evaluate(async () => {
      const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help }));
    });
    fs.writeFileSync(path.join(ARTIFACTS, `axe-${new URL(page.url()).pathname.replace(/\W+/g, '-')}.json`), JSON.stringify(result, null, 2));
    return result;
  }

  const cells = (page: Page, table: string, filter: { hasText?: string | RegExp; has?: ReturnType<Page['locator']> }) =>
    page.getByRole('table', { name: table, exact: true }).getByRole('row').filter(filter).first().getByRole('cell').allTextContents();

  it('trades the stock venue through One Click: a limit sell from the wallet shown locked and cancelled, a market buy by notional with the deposit flow', async () => {
    const { context, page, pageErrors } = await open(`${stockOrigin}/console`);
    try {
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'One Click:' }).textContent(), SLOW).toMatch(/^One Click: not enabled/);
      await page.getByRole('button', { name: 'Enable One Click' }).click();
      const oneClick = async () => `${await page.locator('#oneclick-status').textContent()} [${await page.locator('#stock-status').textContent()}]`;
      await expect.poll(oneClick, SLOW).toMatch(/^One Click: enabled \(relayer 0x[0-9a-fA-F]{40}\)\. \[One Click enabled: stock orders are sent by the relayer\.\]$/);
      expect(await t.writable.getOneClickStatus()).toMatchObject({ status: 'enable', delegationStatus: 'enabled' });

      // A limit sell of 2 TSLA well above the market: the exchange holds no TSLA, the wallet does.
      const tsla = await t.writable.getPrice('TSLA');
      const price = formatStockPrice(String(Math.ceil(Number(tsla.last) * 2)));
      await page.getByLabel('Stock', { exact: true }).selectOption('TSLA');
      await page.getByLabel('Stock side', { exact: true }).selectOption('Sell');
      await page.getByLabel('Stock order type', { exact: true }).selectOption('Limit');
      await page.getByLabel('Quantity', { exact: true }).fill('2');
      await page.getByLabel('Limit price', { exact: true }).fill(price);
      await page.getByRole('button', { name: 'Place stock order' }).click();
      const status = page.locator('#stock-status');
      await expect.poll(() => status.textContent(), { timeout: 60_000 }).toMatch(/^Stock order \d+ open: Sell 2\.000000 TSLA at .* \(limit, DAY\), with 2\.000000 TSLA deposited from the wallet\.$/);
      const orderId = /^Stock order (\d+)/.exec((await status.textContent())!)![1];
      const row = page.getByRole('table', { name: 'Stock orders' }).locator(`tr[data-order-id="${orderId}"]`);
      await row.waitFor(SLOW);
      expect((await row.getByRole('cell').allTextContents()).slice(0, -1)).toEqual([orderId, 'TSLA', 'Sell', 'Limit', '2.000000', price, '0.000000', '2.000000 TSLA', 'OPEN']);
      // The API agrees, and the 2 shares show as locked on the exchange (not `TSLA 0 0`).
      const placed = await t.writable.getOrder(orderId);
      expect(placed).toMatchObject({ state: 'open', side: 'Sell', type: 'Limit', symbol: 'TSLA' });
      expect(formatShares(placed.openOrder!.lockedAmount)).toBe('2.000000');
      await expect.poll(() => cells(page, 'Balances', { hasText: /^Stock exchangeTSLA/ }), SLOW).toEqual(['Stock exchange', 'TSLA', '2.000000', '0.000000', '2.000000']);
      await page.screenshot({ path: path.join(ARTIFACTS, 'stock-limit-sell-open.png'), fullPage: true });

      await row.getByRole('button', { name: 'Cancel' }).click();
      await row.waitFor({ state: 'detached', timeout: 60_000 });
      await expect.poll(() => status.textContent(), SLOW).toBe(`Stock order ${orderId} canceled.`);
      expect(await t.writable.getOrder(orderId)).toMatchObject({ state: 'history', history: { status: 'CANCELED' } });
      const done = page.getByRole('table', { name: 'History' }).locator(`tr[data-order-id="${orderId}"][data-venue="Stock"]`);
      await done.waitFor(SLOW);
      expect((await done.getByRole('cell').allTextContents()).slice(1)).toEqual(['Stock', orderId, 'TSLA', 'Sell', 'Limit', '2.000000 shares', '—', 'CANCELED']);
      await expect.poll(() => cells(page, 'Balances', { hasText: /^Stock exchangeTSLA/ }), SLOW).toEqual(['Stock exchange', 'TSLA', '2.000000', '2.000000', '0.000000']);

      // A market buy by notional: no mUSD on the exchange yet, so the wallet's USDC goes with it.
      const before = await t.writable.getBalance(t.demo.wallets[0].address);
      expect(BigInt(before.mUsdDetail.available.split('.')[0])).toBeLessThan(50n);
      await page.getByLabel('Stock', { exact: true }).selectOption('AAPL');
      await page.getByLabel('Stock side', { exact: true }).selectOption('Buy');
      await page.getByLabel('Stock order type', { exact: true }).selectOption('Market');
      expect(await page.getByLabel('Quantity', { exact: true }).isHidden()).toBe(true);
      await page.getByLabel('Notional (mUSD)', { exact: true }).fill('50');
      await page.getByRole('button', { name: 'Place stock order' }).click();
      await expect.poll(() => status.textContent(), { timeout: 60_000 }).toMatch(/^Stock order \d+ (open|FILLED): Buy 50\.00 mUSD of AAPL at market, with 50\.00 USDC deposited from the wallet\.$/);
      const buyId = /^Stock order (\d+)/.exec((await status.textContent())!)![1];
      await expect.poll(async () => (await t.writable.getOrder(buyId)).state, { timeout: 60_000 }).toBe('history');
      const bought = await t.writable.getOrder(buyId);
      expect(bought.history).toMatchObject({ status: 'FILLED' });
      const filled = page.getByRole('table', { name: 'History' }).locator(`tr[data-order-id="${buyId}"][data-venue="Stock"]`);
      await filled.waitFor(SLOW);
      expect((await filled.getByRole('cell').allTextContents()).slice(1)).toEqual(['Stock', buyId, 'AAPL', 'Buy', 'Market', '50.00 mUSD', formatStockPrice(bought.history!.averagePrice), 'FILLED']);
      // The shares bought, at 4 places, truncated.
      const after = await t.writable.getBalance(t.demo.wallets[0].address);
      const aapl = after.tokenBalances.find((b) => b.symbol === 'AAPL')!;
      await expect.poll(() => cells(page, 'Balances', { hasText: /^Stock exchangeAAPL/ }), SLOW).toEqual(['Stock exchange', 'AAPL', formatShares(aapl.exchangeBalance), formatShares(aapl.exchangeBalance), '0.000000']);
      await expect.poll(() => cells(page, 'Balances', { hasText: /^Stock exchangemUSD/ }), SLOW).toEqual(['Stock exchange', 'mUSD', formatCash(after.mUsdDetail.total), formatCash(after.mUsdDetail.available), formatCash(after.mUsdDetail.locked)]);
      await page.screenshot({ path: path.join(ARTIFACTS, 'stock-market-buy.png'), fullPage: true });
      expect(await page.getByRole('alert').textContent()).toBe('');
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('charts both venues with an interval choice and live candles; the perp book shows its spread, mid and depth', async () => {
    const { context, page, pageErrors } = await open(`${stockOrigin}/console`);
    try {
      const chart = page.getByRole('img', { name: /^K-line chart of / });
      await expect.poll(() => chart.getAttribute('aria-label'), SLOW).toMatch(/^K-line chart of AAPL, \d+ one-minute candles$/);
      // lightweight-charts draws in canvases of its own inside the chart's box.
      expect(await page.locator('#chart canvas').count()).toBeGreaterThan(0);
      expect(await page.getByLabel('Interval', { exact: true }).locator('option').allTextContents()).toEqual(['1m', '5m', '15m', '1h', '4h', '1d']);
      await page.getByLabel('Interval', { exact: true }).selectOption('1h');
      await expect.poll(() => chart.getAttribute('aria-label'), SLOW).toMatch(/^K-line chart of AAPL, [1-9]\d* one-hour candles$/);
      const hourly = await t.writable.getPriceHistory?.('AAPL', { interval: '1h', endTime: Math.floor(Date.now() / 1000), limit: 200 }).catch(() => undefined);
      if (hourly) expect(Number(/, (\d+) one-hour/.exec((await chart.getAttribute('aria-label'))!)![1])).toBe(hourly.candles.length);

      // The perpetual market: chosen from the list, charted from its trades, the candle live.
      await page.getByRole('table', { name: 'Perpetual markets' }).getByRole('button', { name: 'BTC-USD', exact: true }).click();
      await expect.poll(() => chart.getAttribute('aria-label'), SLOW).toMatch(/^K-line chart of BTC-USD, \d+ one-hour candles$/);
      await page.getByLabel('Interval', { exact: true }).selectOption('1m');
      await expect.poll(() => chart.getAttribute('aria-label'), SLOW).toMatch(/^K-line chart of BTC-USD, \d+ one-minute candles$/);
      const last = page.locator('#chart-last');
      const wallet = privateKeyToAccount(t.demo.wallets[0].privateKey);
      const trade = await t.perpTrader!.placeOrder<{ status: string; fills: Array<{ price: string }> }>(wallet, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.001' });
      expect(trade.status).toBe('FILLED');
      // The klines:1m stream's candle after the trade closes at the trade's price.
      await expect.poll(() => last.textContent(), SLOW).toMatch(new RegExp(`^BTC-USD last candle: open [\\d.]+, high [\\d.]+, low [\\d.]+, close ${formatAmount(trade.fills.at(-1)!.price, 1).replace('.', '\\.')}, volume `));
      await t.perpTrader!.closePosition(wallet, { symbol: 'BTC-USD' });

      // The book: asks above, the spread and mid between, bids below, each with a depth bar.
      const book = page.getByRole('table', { name: 'Order book' });
      await expect.poll(() => book.locator('tr.level.bid').count(), SLOW).toBeGreaterThanOrEqual(2);
      const rows = await book.locator('tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({ cls: tr.className, text: Array.from(tr.children).map((c) => c.textContent ?? ''), depth: (tr as HTMLElement).style.getPropertyValue('--depth') })),
      );
      const spreadAt = rows.findIndex((r) => r.cls === 'spread');
      expect(rows.slice(0, spreadAt).every((r) => r.cls === 'level ask')).toBe(true);
      expect(rows.slice(spreadAt + 1).every((r) => r.cls === 'level bid')).toBe(true);
      const bestAsk = rows[spreadAt - 1].text[1];
      const bestBid = rows[spreadAt + 1].text[1];
      const m = /^Spread (\d+\.\d) \((\d+\.\d{2}) bps\) · mid (\d+\.\d{2})$/.exec(rows[spreadAt].text[0]);
      expect(m, rows[spreadAt].text[0]).not.toBeNull();
      // Exact, in tenths: the spread is ask − bid, the mid their mean (a book moving meanwhile re-renders both).
      const tenths = (s: string) => BigInt(s.replace('.', ''));
      expect(tenths(m![1])).toBe(tenths(bestAsk) - tenths(bestBid));
      expect(BigInt(m![3].replace('.', ''))).toBe(((tenths(bestAsk) + tenths(bestBid)) * 10n) / 2n);
      // The outermost levels carry the largest cumulative size: a full bar on the larger side.
      expect(rows.filter((r) => r.cls !== 'spread').every((r) => /^\d+(\.\d+)?%$/.test(r.depth))).toBe(true);
      expect(Math.max(...rows.filter((r) => r.cls !== 'spread').map((r) => parseFloat(r.depth)))).toBe(100);
      await page.screenshot({ path: path.join(ARTIFACTS, 'perp-chart-book.png'), fullPage: true });
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('checks the forms before the server does, and shows the server\'s reason when it refuses', async () => {
    const { context, page, pageErrors, requests } = await open(`${stockOrigin}/console`);
    try {
      await page.getByRole('button', { name: 'Place order' }).waitFor(SLOW);
      await expect.poll(() => page.getByLabel('Symbol', { exact: true }).locator('option').count(), SLOW).toBeGreaterThan(0);
      const orderStatus = page.locator('#order-status');
      await page.getByLabel('Type', { exact: true }).selectOption('LIMIT');
      await page.getByLabel('Size', { exact: true }).fill('-1');
      await page.getByLabel('Price', { exact: true }).fill('90000');
      await page.getByRole('button', { name: 'Place order' }).click();
      await expect.poll(() => orderStatus.textContent()).toBe('Not sent: Size must be a positive number (digits and a point, e.g. 0.001), not -1.');
      await page.getByLabel('Stock order type', { exact: true }).selectOption('Market');
      await page.getByLabel('Stock side', { exact: true }).selectOption('Buy');
      await page.getByLabel('Notional (mUSD)', { exact: true }).fill('-5');
      await page.getByRole('button', { name: 'Place stock order' }).click();
      await expect.poll(() => page.locator('#stock-status').textContent()).toBe('Not sent: Notional must be a positive number (digits and a point, e.g. 2.5), not -5.');
      expect(requests.filter((r) => /orders\/build|orders\/send|with-deposit/.test(r))).toEqual([]);

      // Off BTC-USD's 0.1 tick: the page sends it, the API refuses it and the page says why.
      await page.getByLabel('Size', { exact: true }).fill('0.001');
      await page.getByLabel('Price', { exact: true }).fill('90000.05');
      await page.getByRole('button', { name: 'Place order' }).click();
      await expect.poll(() => orderStatus.textContent(), SLOW).toMatch(/^Order refused: perp POST orders\/build: \d+ .*price/);
      expect(requests.filter((r) => r.includes('orders/build')).length).toBe(1);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('lays out as a terminal at 1,400 px and stacks on a narrow window, with no serious or critical axe violation', async () => {
    for (const [name, viewport] of [['1400', { width: 1400, height: 1100 }], ['narrow', { width: 390, height: 844 }]] as const) {
      const { context, page, pageErrors } = await open(`${stockOrigin}/console`, viewport);
      try {
        await expect.poll(() => page.locator('#feed-status').textContent(), SLOW).toBe('Live data: streaming.');
        await expect.poll(() => page.getByRole('table', { name: 'Balances' }).getByRole('row').count(), SLOW).toBeGreaterThan(3);
        const box = async (sel: string) => (await page.locator(sel).boundingBox())!;
        const [markets, chart, book, entry, account] = await Promise.all(['.markets', '.chart-panel', '.book-panel', '#entry', '#wallet'].map(box));
        if (name === '1400') {
          // Markets, chart, book and order entry side by side; the account below them, across.
          expect(markets.x).toBeLessThan(chart.x);
          expect(chart.x).toBeLessThan(book.x);
          expect(book.x).toBeLessThan(entry.x);
          expect(Math.abs(markets.y - entry.y)).toBeLessThan(2);
          expect(account.y).toBeGreaterThan(chart.y + chart.height);
          expect(account.width).toBeGreaterThan(1300);
          expect(chart.width).toBeGreaterThan(450);
        } else {
          // One column, nothing wider than the window.
          for (const b of [markets, chart, book, entry, account]) expect(b.width).toBeLessThanOrEqual(390);
          const wide = await page.evaluate(() =>
            Array.from(document.querySelectorAll('body *'))
              .filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('.panel'))
              .map((e) => `${e.tagName}#${e.id}.${e.className}`),
          );
          expect(await page.evaluate(() => document.documentElement.scrollWidth), wide.join(' ')).toBeLessThanOrEqual(390);
          expect(chart.y).toBeLessThan(markets.y);
        }
        await page.screenshot({ path: path.join(ARTIFACTS, `console-${name}.png`), fullPage: true });
        const bad = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(bad).toEqual([]);
        expect(pageErrors).toEqual([]);
      } finally {
        await context.close();
      }
    }
  }, 120_000);

  it('the operator page: roles and readiness, halts, a failed corporate action retried, a key revoked, proof of reserves, metrics; loopback only', async () => {
    // A dividend that failed (far in the future, so the scheduler leaves it once retried), and a key to revoke.
    const exDate = '2099-01-05';
    await insertCorporateAction(db, { symbol: 'MSFT', type: 'DIVIDEND', exDate, amount: '0.83', currency: 'USD', source: 'cli' }, Date.now());
    await markActionFailed(db, 'MSFT-2099-01-05', 'test: the paying wallet is short of USDC', Date.now());
    const keys = openKeyService(t.config, db);
    const { key, apiSecret } = await keys.create({ permission: 'READ_ONLY', label: 'ops page test', ipWhitelist: ['127.0.0.1'], chainId: t.demo.chainId, product: t.demo.stock.product, userAddress: t.demo.wallets[1].address });
    const victim = t.client(key.apiKey, apiSecret);
    expect((await victim.getPrice('AAPL')).symbol).toBe('AAPL');

    const { context, page, pageErrors } = await open(`${stockOrigin}/console/ops`);
    try {
      page.on('dialog', (d) => void d.accept());
      await expect.poll(() => page.locator('#ops-summary').textContent(), SLOW).toBe('All roles fresh: both APIs ready.');
      const roles = page.getByRole('table', { name: 'Roles and readiness' });
      expect(await roles.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.role))).toEqual(['marketdata', 'indexer', 'perp-indexer', 'executor', 'relayer', 'perp-engine', 'projector']);
      expect(await cells(page, 'Roles and readiness', { hasText: /^perp-engine/ }).then((c) => c.slice(1, 2).concat(c.slice(3, 4)))).toEqual(['fresh', 'held']);
      expect(await page.locator('#apis').textContent()).toBe('stock API: ready · perp API: ready');
      expect(await page.locator('#halted-note').textContent()).toBe('No symbol halted: every quote is fresh.');
      expect((await cells(page, 'Halted symbols', { hasText: /^AAPL/ })).slice(0, 2)).toEqual(['AAPL', 'trading']);

      const action = page.getByRole('table', { name: 'Corporate actions' }).locator('tr[data-action-id="MSFT-2099-01-05"]');
      await action.waitFor(SLOW);
      expect((await action.getByRole('cell').allTextContents()).slice(0, 8)).toEqual(['MSFT-2099-01-05', 'MSFT', 'DIVIDEND', exDate, '0.83 USD', 'failed', 'test: the paying wallet is short of USDC', String(t.demo.chainId)]);
      await action.getByRole('button', { name: 'Retry' }).click();
      await expect.poll(() => page.locator('#ops-action').textContent(), SLOW).toBe(`MSFT-2099-01-05 scheduled again on chain ${t.demo.chainId}.`);
      await expect.poll(async () => (await action.getByRole('cell').allTextContents())[5], SLOW).toBe('scheduled');
      expect((await getCorporateAction(db, 'MSFT-2099-01-05'))?.status).toBe('scheduled');

      const keyRow = page.getByRole('table', { name: 'API keys' }).locator(`tr[data-api-key="${key.apiKey}"]`);
      await keyRow.waitFor(SLOW);
      expect((await keyRow.getByRole('cell').allTextContents()).slice(0, 7)).toEqual([key.apiKey, 'stock', `${t.demo.chainId}:${t.demo.stock.product}:READ_ONLY`, 'active', t.demo.wallets[1].address.toLowerCase(), '127.0.0.1', 'ops page test']);
      expect(await page.content()).not.toContain(apiSecret);
      await keyRow.getByRole('button', { name: 'Revoke' }).click();
      await expect.poll(() => page.locator('#ops-action').textContent(), SLOW).toBe(`Key ${key.apiKey} revoked.`);
      await expect.poll(async () => (await keyRow.getByRole('cell').allTextContents())[3], SLOW).toBe('revoked');
      await expect(victim.getPrice('AAPL')).rejects.toThrow();

      const reserves = page.getByRole('table', { name: 'Proof of reserves' });
      await expect.poll(async () => (await reserves.getByRole('row').filter({ hasText: /^State/ }).getByRole('cell').allTextContents())[0], SLOW).toMatch(/^(BUILT|POSTED)$/);
      const metrics = page.getByRole('table', { name: 'Metrics' });
      const answered = Number((await metrics.getByRole('row').filter({ hasText: /^requests answered\d/ }).getByRole('cell').allTextContents())[1]);
      expect(answered).toBeGreaterThan(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'ops.png'), fullPage: true });
      const bad = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad).toEqual([]);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }

    // Only the host itself, by a loopback name; writes only with the page's header.
    const app = t.stack.stockApi!;
    const from = (remoteAddress: string, host: string, method: 'GET' | 'POST' = 'GET', url = '/console/ops/state', headers: Record<string, string> = {}) =>
      app.inject({ method, url, remoteAddress, headers: { host, ...headers }, ...(method === 'POST' ? { payload: {} } : {}) });
    expect((await from('127.0.0.1', '127.0.0.1:8080')).statusCode).toBe(200);
    expect((await from('192.0.2.7', '127.0.0.1:8080', 'GET', '/console/ops/state', { 'x-forwarded-for': '127.0.0.1' })).statusCode).toBe(404);
    expect((await from('127.0.0.1', 'tokex.example.com:8080')).statusCode).toBe(404);
    expect((await from('192.0.2.7', '127.0.0.1:8080', 'GET', '/console/ops')).statusCode).toBe(404);
    const revoke = `/console/ops/keys/${encodeURIComponent(t.demo.stock.keys.readOnly.apiKey)}/revoke`;
    expect((await from('127.0.0.1', '127.0.0.1:8080', 'POST', revoke)).statusCode).toBe(404);
    expect((await from('127.0.0.1', '127.0.0.1:8080', 'POST', revoke, { 'x-tokex-ops': '1', origin: 'https://evil.example' })).statusCode).toBe(404);
    expect((await keys.list()).find((k) => k.apiKey === t.demo.stock.keys.readOnly.apiKey)?.active).toBe(true);
  }, 120_000);
});
