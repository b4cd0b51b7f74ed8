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
