/**
 * The console on a deployment of two embedded chains (docs/console.md, "Several chains"), in headless
 * Chromium against the real stack:
 *
 * - the "Stock chain" selector lists both chains; choosing the second loads the page on it: every
 *   stock REST request carries `x-api-chain-id: 31338`, and the demo wallet's stock balance shown is
 *   chain 31338's (made to differ from 31337's by a transfer on 31338 only);
 * - the operator page shows a corporate action once per chain with each chain's state, and Retry on
 *   the second chain's failed row reschedules it there only; a key's every scope is shown.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createPublicClient, erc20Abi, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCash } from '../../src/console/browser/amount-format.ts';
import { getCorporateAction, insertCorporateAction, markActionFailed } from '../../src/stock/corporate-actions/corporate-action-store.ts';
import { ARTIFACTS, SLOW } from '../support/console-page.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const A = 31337;
const B = 31338;

describe.skipIf(!fs.existsSync(CHROMIUM))('web console on two chains', () => {
  let t: TestStack;
  let dataDir: string;
  let browser: Browser;
  let stockOrigin: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-console-chains-'));
    t = await startTestStack({ EMBEDDED_CHAIN_IDS: `${A},${B}` }, { dataDir });
    stockOrigin = new URL(t.stack.stockBaseUrl!).origin;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function open(url: string): Promise<{ context: BrowserContext; page: Page; pageErrors: string[]; stockRequests: Array<{ url: string; chainId: string | undefined }> }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    const stockRequests: Array<{ url: string; chainId: string | undefined }> = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/v1/')) stockRequests.push({ url: r.url(), chainId: r.headers()['x-api-chain-id'] });
    });
    await page.goto(url);
    return { context, page, pageErrors, stockRequests };
  }

  it('offers both chains; on the second, every stock request carries its id and the stock balance shown is that chain\'s', async () => {
    // The demo wallet sends 1234.56 USDC away on the second chain only: its wallet cash differs there.
    const wallet = t.demo.wallets[0];
    const second = t.demo.stock.chains.find((c) => c.chainId === B)!;
    const chain = { id: B, name: 'anvil-b', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [second.rpcUrl] } } };
    const pub = createPublicClient({ chain, transport: http(second.rpcUrl) });
    const sender = testWallet(wallet.privateKey, chain, second.rpcUrl);
    const hash = await sender.writeContract({ address: second.contracts.cashToken as Address, abi: erc20Abi, functionName: 'transfer', args: ['0x000000000000000000000000000000000000dEaD', parseUnits('1234.56', 6)] });
    expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('success');
    const k = t.demo.stock.keys.writable;
    const usdcOf = async (chainId: number) => {
      const b = await t.client(k.apiKey, k.apiSecret, { chainId }).getBalance(wallet.address);
      return formatCash((b.cashTokenBalances as Array<{ symbol: string; walletBalance: string }>).find((c) => c.symbol === 'USDC')!.walletBalance);
    };
    const [onA, onB] = [await usdcOf(A), await usdcOf(B)];
    expect(onB).not.toBe(onA);

    const config = (await (await fetch(`${stockOrigin}/console/config`)).json()) as { data: any };
    expect(config.data.stock.chains).toEqual([A, B]);

    const { context, page, pageErrors, stockRequests } = await open(`${stockOrigin}/console`);
    try {
      const usdcRow = () => page.getByRole('table', { name: 'Balances' }).getByRole('row').filter({ hasText: 'USDC' }).filter({ hasText: 'Stock wallet' }).getByRole('cell').allTextContents();
      // First chain by default.
      await expect.poll(() => page.locator('#mode').textContent(), SLOW).toBe(`Demo wallet ${wallet.address}: trading enabled on chain ${A}.`);
      const select = page.getByLabel('Stock chain');
      expect(await select.isVisible()).toBe(true);
      expect(await select.locator('option').allTextContents()).toEqual([`${A} (first)`, `${B}`]);
      await expect.poll(async () => (await usdcRow())[2], SLOW).toBe(onA);

      await select.selectOption(String(B));
      await page.waitForURL(`${stockOrigin}/console?chain=${B}`);
      const since = stockRequests.length;
      await expect.poll(() => page.locator('#mode').textContent(), SLOW).toBe(`Demo wallet ${wallet.address}: trading enabled on chain ${B}.`);
      expect(await page.getByLabel('Stock chain').inputValue()).toBe(String(B));
      await expect.poll(async () => (await usdcRow())[2], SLOW).toBe(onB);
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-chain-2.png'), fullPage: true });
      // Balances and open orders read on the second chain's venue (its private streams are the first chain's): polled.
      await expect.poll(() => page.locator('#feed-status').textContent(), SLOW).toMatch(/polling the REST APIs instead for stock balances, stock orders/);
      expect(await usdcRow()).toEqual(['Stock wallet', 'USDC', onB, onB, '0.00']);
      const after = stockRequests.slice(since);
      expect(after.length).toBeGreaterThan(3);
      expect(after.filter((r) => r.chainId !== String(B))).toEqual([]);
      expect(after.some((r) => new URL(r.url).pathname.toLowerCase() === `/api/v1/users/${wallet.address.toLowerCase()}/balance`)).toBe(true);
      expect(pageErrors).toEqual([]);
      expect(await page.getByRole('alert').textContent()).toBe('');
    } finally {
      await context.close();
    }
  }, 180_000);

  it('the operator page: a corporate action once per chain with each chain\'s state, Retry on one chain, every scope of a key', async () => {
    const [first, second] = t.stack.chains;
    const exDate = '2099-02-02';
    const id = `NVDA-${exDate}`;
    // Added on the first chain, taken up by the second, failed there only (far in the future: the schedulers leave it).
    await insertCorporateAction(first.db, { symbol: 'NVDA', type: 'DIVIDEND', exDate, amount: '0.5', currency: 'USD', source: 'cli' }, Date.now());
    const copied = await (async () => {
      for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
        const c = await getCorporateAction(second.db, id);
        if (c) return c;
      }
      return undefined;
    })();
    expect(copied?.status).toBe('scheduled');
    await markActionFailed(second.db, id, 'test: the paying wallet is short of USDC on chain 31338', Date.now());

    const { context, page, pageErrors } = await open(`${stockOrigin}/console/ops`);
    try {
      const table = page.getByRole('table', { name: 'Corporate actions' });
      const rowOn = (chainId: number) => table.locator(`tr[data-action-id="${id}"][data-chain-id="${chainId}"]`);
      await rowOn(B).waitFor(SLOW);
      expect(await table.locator(`tr[data-action-id="${id}"]`).count()).toBe(2);
      expect((await rowOn(A).getByRole('cell').allTextContents()).slice(0, 8)).toEqual([id, 'NVDA', 'DIVIDEND', exDate, '0.5 USD', 'scheduled', '', String(A)]);
      expect((await rowOn(B).getByRole('cell').allTextContents()).slice(0, 8)).toEqual([id, 'NVDA', 'DIVIDEND', exDate, '0.5 USD', 'failed', 'test: the paying wallet is short of USDC on chain 31338', String(B)]);
      expect(await rowOn(A).getByRole('button', { name: 'Retry' }).count()).toBe(0);
      const retry = rowOn(B).getByRole('button', { name: 'Retry' });
      expect(await retry.getAttribute('aria-description')).toBe(`Retry corporate action ${id} on chain ${B}`);
      await retry.click();
      await expect.poll(() => page.locator('#ops-action').textContent(), SLOW).toBe(`${id} scheduled again on chain ${B}.`);
      await expect.poll(async () => (await rowOn(B).getByRole('cell').allTextContents())[5], SLOW).toBe('scheduled');
      expect((await getCorporateAction(second.db, id))?.status).toBe('scheduled');

      // The demo read-only key has a scope on each chain: both are shown.
      const product = t.demo.stock.product;
      const keyRow = page.getByRole('table', { name: 'API keys' }).locator(`tr[data-api-key="${t.demo.stock.keys.readOnly.apiKey}"]`);
      await keyRow.waitFor(SLOW);
      expect((await keyRow.getByRole('cell').allTextContents())[2]).toBe(`${A}:${product}:READ_ONLY, ${B}:${product}:READ_ONLY`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'ops-chains.png'), fullPage: true });
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
