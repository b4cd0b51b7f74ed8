/**
 * The stream client in a real browser (Chromium through playwright-core): bundled by esbuild for the
 * browser (no `node:` import may creep in), served from 127.0.0.1 (a secure context, so WebCrypto is
 * there), it uses the browser's own WebSocket and signs `auth` with WebCrypto; the scripted server
 * checks the signature with node:crypto, drops the connection, and sees the re-auth and the resume.
 */
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerConnection, type Frame } from './stream-test-server.ts';

const SECRET = 'browser-stream-secret-5b1e';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Chromium ships with this project's dev image; elsewhere set CHROMIUM_PATH.
describe.skipIf(!existsSync(CHROMIUM))('stream client in a browser', () => {
  let http: Server;
  let wss: WebSocketServer;
  let browser: Browser;
  let page: Page;
  let bundle: string;
  let origin: string;
  const connections: ServerConnection[] = [];
  const waiters = new Set<() => void>();
  const connection = (n: number) =>
    new Promise<ServerConnection>((resolve) => {
      const check = () => {
        if (connections.length > n) {
          waiters.delete(check);
          resolve(connections[n]);
        }
      };
      waiters.add(check);
      check();
    });

  beforeAll(async () => {
    const out = await build({
      entryPoints: [new URL('../../packages/sdk/src/stream-client.ts', import.meta.url).pathname],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    bundle = out.outputFiles[0].text;
    http = createServer((req, res) => {
      if (req.url === '/sdk.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(bundle);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>sdk</title>');
    });
    wss = new WebSocketServer({ server: http, path: '/v4/public/ws' });
    wss.on('connection', (ws) => {
      connections.push(new ServerConnection(ws));
      for (const w of [...waiters]) w();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    await page.goto(origin);
    // A module script of the page's own (vitest would rewrite an import() inside page.evaluate).
    await page.addScriptTag({ type: 'module', content: "import * as sdk from '/sdk.js'; window.sdk = sdk;" });
    await page.waitForFunction(() => 'sdk' in globalThis);
  });
  afterAll(async () => {
    await browser?.close();
    for (const c of connections) c.drop();
    wss?.close();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  });

  it('bundles without node: imports; signs auth with WebCrypto, reconnects and resumes on the browser WebSocket', async () => {
    expect(bundle).not.toMatch(/from\s*["']node:|import\(\s*["']node:|require\(\s*["']node:/);
    expect(await page.evaluate(() => (globalThis as unknown as { isSecureContext: boolean }).isSecureContext && typeof crypto.subtle === 'object')).toBe(true);

    const OFFSET = -30_000;
    const t0 = Date.now();
    await page.evaluate(
      async ({ url, secret, offset }) => {
        const w = globalThis as unknown as { events: unknown[]; client: unknown; sdk: { PerpStreamClient: any } };
        const { PerpStreamClient } = w.sdk;
        w.events = [];
        const client = new PerpStreamClient({ url, apiKey: 'browser-key', apiSecret: secret, clockOffsetMs: offset, reconnect: { baseMs: 20 } });
        w.client = client;
        client.subscribe('orders', {}, {
          onSnapshot: (data: unknown, seq: number, info: unknown) => w.events.push({ kind: 'snapshot', data, seq, info }),
          onUpdate: (data: unknown, seq: number) => w.events.push({ kind: 'update', data, seq }),
          onResume: (seq: number) => w.events.push({ kind: 'resume', seq }),
        });
      },
      { url: `${origin.replace('http', 'ws')}/v4/public/ws`, secret: SECRET, offset: OFFSET },
    );

    const check = (auth: Frame, from: number) => {
      expect(Object.keys(auth).sort()).toEqual(['apiKey', 'id', 'op', 'sign', 'ts']);
      expect(auth.apiKey).toBe('browser-key');
      expect(auth.ts).toBeGreaterThanOrEqual(from + OFFSET);
      expect(auth.ts).toBeLessThanOrEqual(Date.now() + OFFSET);
      expect(auth.sign).toBe(createHmac('sha256', SECRET).update(`${auth.ts}GET/v4/public/ws`).digest('base64'));
    };
    const c0 = await connection(0);
    const a0 = await c0.takeOp('auth');
    check(a0, t0);
    c0.send({ type: 'authenticated', id: a0.id, account: '0xabc' });
    const s0 = await c0.takeOp('subscribe');
    expect(s0).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders' });
    c0.send({ type: 'subscribed', id: s0.id, channel: 'orders', seq: 7, data: [] });
    c0.send({ type: 'update', channel: 'orders', seq: 8, data: { orderId: '1' } });
    await page.waitForFunction(() => (globalThis as unknown as { events: unknown[] }).events.length === 2);

    const tDrop = Date.now();
    c0.drop();
    const c1 = await connection(1);
    const a1 = await c1.takeOp('auth');
    check(a1, tDrop);
    c1.send({ type: 'authenticated', id: a1.id, account: '0xabc' });
    const s1 = await c1.takeOp('subscribe');
    expect(s1).toEqual({ op: 'subscribe', id: expect.any(String), channel: 'orders', since: 8 });
    c1.send({ type: 'subscribed', id: s1.id, channel: 'orders', seq: 8, resumed: true });
    c1.send({ type: 'update', channel: 'orders', seq: 8, data: { orderId: '1', again: true } });
    c1.send({ type: 'update', channel: 'orders', seq: 9, data: { orderId: '2' } });
    await page.waitForFunction(() => (globalThis as unknown as { events: unknown[] }).events.length === 4);

    expect(await page.evaluate(() => (globalThis as unknown as { events: unknown[] }).events)).toEqual([
      { kind: 'snapshot', seq: 7, data: [], info: { reason: 'initial', continuityLost: false } },
      { kind: 'update', seq: 8, data: { orderId: '1' } },
      { kind: 'resume', seq: 8 },
      { kind: 'update', seq: 9, data: { orderId: '2' } },
    ]);
    await page.evaluate(() => (globalThis as unknown as { client: { close(): Promise<void> } }).client.close());
    expect((await c1.closed).code).toBe(1000);
  });
});
