/**
 * What a person checks on the web console, shared by the console's Chromium suites: live markets,
 * and a perpetual order placed and cancelled from the page (checked through the perp REST API too).
 * Screenshots go to artifacts/console.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { PerpClient } from '@tokex/sdk';
import { expect } from 'vitest';

export const ARTIFACTS = path.resolve('artifacts/console');
export const SLOW = { timeout: 30_000 };

interface OpenOrder {
  orderId: string;
  symbol: string;
  side: string;
  price: string;
  size: string;
  status: string;
}

/** What a person checks first: a price that moves, a chart, a two-sided perp book. */
export async function expectLiveMarkets(page: Page, shot: string): Promise<void> {
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Tokex console');
  const markets = page.getByRole('table', { name: 'Stock markets' });
  const aapl = markets.getByRole('row').filter({ has: page.getByRole('button', { name: 'AAPL', exact: true }) });
  const last = aapl.getByRole('cell').first();
  await expect.poll(() => last.textContent(), SLOW).toMatch(/^\d+\.\d{2}$/);
  const first = await last.textContent();
  await expect.poll(() => last.textContent(), SLOW).not.toBe(first);

  await expect.poll(() => page.getByRole('img', { name: /K-line chart of AAPL, \d+ one-minute candles/ }).count(), SLOW).toBe(1);
  await expect.poll(() => page.locator('#chart-last').textContent(), SLOW).toMatch(/^AAPL last candle: open \d/);

  const book = page.getByRole('table', { name: 'Order book' });
  await expect.poll(() => book.getByRole('row').filter({ hasText: /^bid/ }).count(), SLOW).toBeGreaterThanOrEqual(2);
  await expect.poll(() => book.getByRole('row').filter({ hasText: /^ask/ }).count(), SLOW).toBeGreaterThanOrEqual(2);
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-markets.png`), fullPage: true });
}

/** Fills the form by label, places a resting BUY, sees it in Open orders and the API, cancels it. */
export async function placeAndCancel(page: Page, trader: PerpClient, fraction: bigint, shot: string): Promise<void> {
  const depth = await trader.get<{ bids: string[][] }>('depth', { symbol: 'BTC-USD', limit: 1 });
  // Far below the best bid, on the tick: the order rests.
  const price = String((BigInt(depth.bids[0][0].split('.')[0]) * fraction) / 100n);
  await page.getByRole('button', { name: 'Place order' }).waitFor(SLOW);
  await expect.poll(() => page.getByLabel('Symbol', { exact: true }).locator('option').count(), SLOW).toBeGreaterThan(0);
  await page.getByLabel('Symbol', { exact: true }).selectOption('BTC-USD');
  await page.getByLabel('Side', { exact: true }).selectOption('BUY');
  await page.getByLabel('Size', { exact: true }).fill('0.001');
  await page.getByLabel('Price', { exact: true }).fill(price);
  await page.getByRole('button', { name: 'Place order' }).click();

  const table = page.getByRole('table', { name: 'Open orders' });
  const row = table.getByRole('row').filter({ hasText: price });
  await row.waitFor(SLOW);
  const orderId = await row.getAttribute('data-order-id');
  expect(orderId).toMatch(/^\d+$/);
  await expect(row.getByRole('cell').allTextContents()).resolves.toEqual([orderId, 'BTC-USD', 'BUY', price, '0.001', '0', 'NEW', 'Cancel']);
  const open = await trader.get<{ rows: OpenOrder[] }>('orders/open', { symbol: 'BTC-USD', limit: 100 });
  expect(open.rows.find((o) => String(o.orderId) === orderId)).toMatchObject({ symbol: 'BTC-USD', side: 'BUY', price, size: '0.001', status: 'NEW' });
  await expect.poll(() => page.getByRole('status').filter({ hasText: `Order ${orderId}` }).textContent()).toBe(`Order ${orderId} NEW: BUY 0.001 BTC-USD at ${price}.`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-order-open.png`), fullPage: true });

  await row.getByRole('button', { name: 'Cancel' }).click();
  await row.waitFor({ state: 'detached', ...SLOW });
  await expect.poll(() => page.getByRole('status').filter({ hasText: `Order ${orderId}` }).textContent()).toBe(`Order ${orderId} canceled.`);
  const after = await trader.get<{ rows: OpenOrder[] }>('orders/open', { symbol: 'BTC-USD', limit: 100 });
  expect(after.rows.map((o) => String(o.orderId))).not.toContain(orderId);
  const history = await trader.get<{ rows: OpenOrder[] }>('orders/history', { symbol: 'BTC-USD', limit: 100 });
  expect(history.rows.find((o) => String(o.orderId) === orderId)?.status).toBe('CANCELED');
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-order-canceled.png`), fullPage: true });
}
