/**
 * What a person does with perpetual orders on the web console, shared by the console's Chromium
 * suites: a limit order placed and cancelled, a stop order that waits UNTRIGGERED, an order amended,
 * and a take-profit that closes the position. The form's fields are found by their labels, the
 * outcome checked on the page and through the perp REST API. Screenshots go to artifacts/console.
 */
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { PerpClient } from '@tokex/sdk';
import { expect } from 'vitest';
import { ARTIFACTS, SLOW } from '../support/console-page.ts';
import { formatAmount } from '../../src/console/browser/amount-format.ts';

const SYMBOL = 'BTC-USD';
/** A BTC-USD price as the page shows it: at the instrument's tick (0.1), truncated. */
export const px = (price: string) => formatAmount(price, 1);

const openOrders = (page: Page) => page.getByRole('table', { name: 'Open orders' });
const orderRow = (page: Page, orderId: string) => openOrders(page).locator(`tr[data-order-id="${orderId}"]`);
/** A row's cells but the last (its buttons), and the names of its buttons. */
const cellsOf = async (row: Locator) => (await row.getByRole('cell').allTextContents()).slice(0, -1);
const buttonsOf = async (row: Locator) => row.getByRole('button').allTextContents();
const statusLine = (page: Page, orderId: string) => page.getByRole('status').filter({ hasText: `Order ${orderId}` }).textContent();

/**
 * Waits for an order's row; when it does not come, the error says what the page said instead (its
 * alert, its status lines and the open orders' rows), which a timeout alone does not.
 */
async function rowAppears(page: Page, row: Locator, what: string): Promise<void> {
  try {
    await row.waitFor(SLOW);
  } catch (err) {
    const said = {
      alert: await page.getByRole('alert').allTextContents(),
      status: await page.getByRole('status').allTextContents(),
      openOrders: await openOrders(page).getByRole('row').allTextContents(),
    };
    throw new Error(`${what}: no row after ${SLOW.timeout} ms; the page said ${JSON.stringify(said)}`, { cause: err });
  }
}

async function markOf(trader: PerpClient): Promise<number> {
  const [ticker] = await trader.getTickers({ symbol: SYMBOL });
  return Number(ticker.markPrice);
}

/** Fills the order form by label: type first (it decides which fields show), then the rest. */
async function fillOrder(page: Page, o: { type: string; side: string; size?: string; price?: string; triggerPrice?: string; triggerBy?: string; closePosition?: boolean }) {
  await page.getByRole('button', { name: 'Place order' }).waitFor(SLOW);
  await expect.poll(() => page.getByLabel('Symbol', { exact: true }).locator('option').count(), SLOW).toBeGreaterThan(0);
  await page.getByLabel('Symbol', { exact: true }).selectOption(SYMBOL);
  await page.getByLabel('Type', { exact: true }).selectOption(o.type);
  await page.getByLabel('Side', { exact: true }).selectOption(o.side);
  if (o.closePosition !== undefined) await page.getByLabel('Close position', { exact: true }).setChecked(o.closePosition);
  if (o.size !== undefined) await page.getByLabel('Size', { exact: true }).fill(o.size);
  if (o.price !== undefined) await page.getByLabel('Price', { exact: true }).fill(o.price);
  if (o.triggerPrice !== undefined) await page.getByLabel('Trigger price', { exact: true }).fill(o.triggerPrice);
  if (o.triggerBy !== undefined) await page.getByLabel('Trigger by', { exact: true }).selectOption(o.triggerBy);
}

/** Cancels the order from its row and sees it go, from the page and from the API. */
async function cancelFromRow(page: Page, trader: PerpClient, orderId: string): Promise<void> {
  const row = orderRow(page, orderId);
  await row.getByRole('button', { name: 'Cancel' }).click();
  // The API's answer first: a refused or failed cancel says why on this line (and its row stays).
  await expect.poll(() => statusLine(page, orderId), SLOW).toBe(`Order ${orderId} canceled.`);
  await row.waitFor({ state: 'detached', ...SLOW });
  expect((await trader.getOrder(orderId)).status).toBe('CANCELED');
}

/** Places a resting BUY from the form, sees it in Open orders and the API, cancels it. */
export async function placeAndCancel(page: Page, trader: PerpClient, fraction: bigint, shot: string): Promise<void> {
  const depth = await trader.getDepth({ symbol: SYMBOL, limit: 1 });
  // Far below the best bid, on the tick: the order rests.
  const price = String((BigInt(depth.bids[0][0].split('.')[0]) * fraction) / 100n);
  await fillOrder(page, { type: 'LIMIT', side: 'BUY', size: '0.001', price });
  await page.getByRole('button', { name: 'Place order' }).click();

  const row = openOrders(page).getByRole('row').filter({ hasText: px(price) });
  await rowAppears(page, row, 'the limit order');
  const orderId = (await row.getAttribute('data-order-id'))!;
  expect(orderId).toMatch(/^\d+$/);
  expect(await cellsOf(row)).toEqual([orderId, SYMBOL, 'BUY', 'LIMIT', px(price), '', '0.001', '0', 'NEW']);
  expect(await buttonsOf(row)).toEqual(['Amend', 'Cancel']);
  const open = await trader.getOpenOrders({ symbol: SYMBOL, limit: 100 });
  expect(open.rows.find((o) => String(o.orderId) === orderId)).toMatchObject({ symbol: SYMBOL, side: 'BUY', price, size: '0.001', status: 'NEW' });
  await expect.poll(() => statusLine(page, orderId)).toBe(`Order ${orderId} NEW: BUY 0.001 ${SYMBOL} at ${price}.`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-order-open.png`), fullPage: true });

  await cancelFromRow(page, trader, orderId);
  const history = await trader.listOrderHistory({ symbol: SYMBOL, limit: 100 });
  expect(history.rows.find((o) => String(o.orderId) === orderId)?.status).toBe('CANCELED');
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-order-canceled.png`), fullPage: true });
}

/**
 * A sell stop well below the mark, from the form: the price field goes for a market-type trigger,
 * the order waits UNTRIGGERED with its trigger in the table (no Amend: a waiting trigger cannot be
 * amended), and is cancelled.
 */
export async function placeStop(page: Page, trader: PerpClient, shot: string): Promise<void> {
  const trigger = String(Math.floor((await markOf(trader)) * 0.9));
  await fillOrder(page, { type: 'STOP_MARKET', side: 'SELL', size: '0.001', triggerPrice: trigger, triggerBy: 'MARK' });
  expect(await page.getByLabel('Price', { exact: true }).isHidden()).toBe(true);
  await page.getByRole('button', { name: 'Place order' }).click();

  const row = openOrders(page).getByRole('row').filter({ hasText: `${px(trigger)} (MARK)` });
  await rowAppears(page, row, 'the stop order');
  const orderId = (await row.getAttribute('data-order-id'))!;
  expect(await cellsOf(row)).toEqual([orderId, SYMBOL, 'SELL', 'STOP_MARKET', '', `${px(trigger)} (MARK)`, '0.001', '0', 'UNTRIGGERED']);
  expect(await buttonsOf(row)).toEqual(['Cancel']);
  expect(await trader.getOrder(orderId)).toMatchObject({ type: 'STOP_MARKET', status: 'UNTRIGGERED', triggerPrice: trigger, triggerBy: 'MARK', triggeredAt: null, size: '0.001' });
  await expect.poll(() => statusLine(page, orderId)).toBe(`Order ${orderId} UNTRIGGERED: SELL 0.001 ${SYMBOL}, STOP_MARKET at market when MARK reaches ${trigger}.`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-stop-untriggered.png`), fullPage: true });
  await cancelFromRow(page, trader, orderId);
}

/** A resting BUY amended from its row's Amend: a new price and a smaller size, under the same id. */
export async function placeAndAmend(page: Page, trader: PerpClient, shot: string): Promise<void> {
  const depth = await trader.getDepth({ symbol: SYMBOL, limit: 1 });
  const bid = BigInt(depth.bids[0][0].split('.')[0]);
  const price = String((bid * 78n) / 100n);
  const lower = String((bid * 77n) / 100n);
  await fillOrder(page, { type: 'LIMIT', side: 'BUY', size: '0.002', price });
  await page.getByRole('button', { name: 'Place order' }).click();
  const placed = openOrders(page).getByRole('row').filter({ hasText: px(price) });
  await rowAppears(page, placed, 'the order to amend');
  const orderId = (await placed.getAttribute('data-order-id'))!;
  const row = orderRow(page, orderId);

  await row.getByRole('button', { name: 'Amend' }).click();
  const form = page.getByRole('form', { name: `Amend order ${orderId}` });
  await form.waitFor(SLOW);
  expect(await page.getByLabel('New price', { exact: true }).inputValue()).toBe(price);
  expect(await page.getByLabel('New size', { exact: true }).inputValue()).toBe('0.002');
  await page.getByLabel('New price', { exact: true }).fill(lower);
  await page.getByLabel('New size', { exact: true }).fill('0.001');
  await form.getByRole('button', { name: 'Amend order' }).click();

  await expect.poll(() => cellsOf(row), SLOW).toEqual([orderId, SYMBOL, 'BUY', 'LIMIT', px(lower), '', '0.001', '0', 'NEW']);
  await expect.poll(() => statusLine(page, orderId)).toBe(`Order ${orderId} amended, NEW: BUY 0.001 ${SYMBOL} at ${lower}.`);
  await form.waitFor({ state: 'hidden', ...SLOW });
  expect(await trader.getOrder(orderId)).toMatchObject({ orderId, price: lower, size: '0.001', remainingSize: '0.001', status: 'NEW' });
  await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-order-amended.png`), fullPage: true });
  await cancelFromRow(page, trader, orderId);
}

/**
 * With a long position open: a take-profit that closes it, from the form (Close position: no size).
 * Answers its order id; the caller closes the position, which cancels it (POSITION_CLOSED).
 */
export async function placeClosingTakeProfit(page: Page, trader: PerpClient): Promise<string> {
  const trigger = String(Math.floor((await markOf(trader)) * 1.2));
  await fillOrder(page, { type: 'TAKE_PROFIT_MARKET', side: 'SELL', triggerPrice: trigger, closePosition: true });
  expect(await page.getByLabel('Size', { exact: true }).isHidden()).toBe(true);
  await page.getByRole('button', { name: 'Place order' }).click();
  const row = openOrders(page).getByRole('row').filter({ hasText: `${px(trigger)} (MARK)` });
  await rowAppears(page, row, 'the closing take-profit');
  const orderId = (await row.getAttribute('data-order-id'))!;
  expect(await cellsOf(row)).toEqual([orderId, SYMBOL, 'SELL', 'TAKE_PROFIT_MARKET', '', `${px(trigger)} (MARK)`, 'position', '0', 'UNTRIGGERED']);
  await expect.poll(() => statusLine(page, orderId)).toBe(`Order ${orderId} UNTRIGGERED: SELL ${SYMBOL} closing the position, TAKE_PROFIT_MARKET at market when MARK reaches ${trigger}.`);
  expect(await trader.getOrder(orderId)).toMatchObject({ closePosition: true, reduceOnly: true, status: 'UNTRIGGERED' });
  return orderId;
}
