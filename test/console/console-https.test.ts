/**
 * The web console over HTTPS in headless Chromium: the stack serves both APIs with a throwaway
 * certificate (TLS_CERT_FILE/TLS_KEY_FILE), Chromium trusts exactly that certificate's key and
 * nothing else (verification stays on: a page from another key would fail), and the page shows live
 * prices and the perp book over HTTPS and WSS only, then places and cancels an order.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { PerpClient } from '@tokex/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { fetchWithCa, makeCertificates } from '../support/test-certificates.ts';
import { ARTIFACTS, expectLiveMarkets } from '../support/console-page.ts';
import { placeAndCancel } from './console-orders.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** base64(SHA-256(SubjectPublicKeyInfo)): what Chromium's SPKI allow-list names a key by. */
function spkiHash(certFile: string): string {
  const der = execFileSync('openssl', ['x509', '-in', certFile, '-pubkey', '-noout'], { encoding: 'utf8' });
  const spki = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: der });
  return execFileSync('openssl', ['dgst', '-sha256', '-binary'], { input: spki }).toString('base64');
}

describe.skipIf(!fs.existsSync(CHROMIUM))('web console over HTTPS', () => {
  let dir: string;
  let t: TestStack;
  let browser: Browser;
  let trader: PerpClient;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-console-tls-'));
    const certs = makeCertificates(dir);
    t = await startTestStack({ TLS_CERT_FILE: certs.first.cert, TLS_KEY_FILE: certs.first.key });
    const key = t.demo.perp!.keys!.trader;
    trader = new PerpClient({ baseUrl: t.perpBaseUrl!, apiKey: key.apiKey, apiSecret: key.apiSecret, chainId: t.demo.chainId, fetch: fetchWithCa(fs.readFileSync(certs.ca, 'utf8')) });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', `--ignore-certificate-errors-spki-list=${spkiHash(certs.first.cert)}`],
    });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is refused by a browser that does not trust the key: verification stays on', async () => {
    const plain = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    try {
      const page = await plain.newPage();
      await expect(page.goto(`${t.stack.stockBaseUrl}/console`)).rejects.toThrow(/ERR_CERT_AUTHORITY_INVALID/);
    } finally {
      await plain.close();
    }
  });

  it('serves the page, its prices, the perp book and an order round trip over HTTPS and WSS only', async () => {
    expect(t.stack.stockBaseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(t.demo.perp!.wsUrl).toMatch(/^wss:\/\//);
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 1500 } })).newPage();
    const requested: string[] = [];
    const pageErrors: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('websocket', (ws) => requested.push(ws.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    const res = await page.goto(`${t.stack.stockBaseUrl}/console`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['strict-transport-security']).toBe('max-age=31536000');

    await expectLiveMarkets(page, 'https');
    await placeAndCancel(page, trader, 96n, 'https');

    // Nothing went over plain HTTP or WS, and nothing broke in the page.
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !/^(https|wss):\/\/127\.0\.0\.1:\d+\//.test(u) && !u.startsWith('data:'))).toEqual([]);
    expect(requested.some((u) => u.startsWith('wss://'))).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
