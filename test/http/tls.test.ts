/**
 * Both APIs over HTTPS and WSS with a throwaway CA (docs/deployment.md): clients that trust the CA
 * (node https, ws, the SDK, the CLI and the CCXT class through NODE_EXTRA_CA_CERTS), clients that do
 * not, HSTS, a certificate reload under an open WebSocket, plain HTTP sent to the TLS port, and
 * every bad certificate file stopping the start with the file named and nothing running.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerpClient, PerpStreamClient, StockClient } from '@tokex/sdk';
import WebSocket from 'ws';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket } from '../support/ws-client.ts';
import { TlsConfigError, loadTlsMaterial } from '../../src/http/tls-options.ts';
import { fetchWithCa, makeCertificates } from '../support/test-certificates.ts';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../..');

type Certs = ReturnType<typeof makeCertificates>;

function get(url: string, opts: https.RequestOptions = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { agent: false, ...opts }, (res) => {
      const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, serial }));
    });
    req.on('error', reject);
  });
}

describe('HTTPS and WSS on both APIs', () => {
  let dir: string;
  let certs: Certs;
  let ca: string;
  let t: TestStack;
  let live: { cert: string; key: string };
  const portOf = (app: TestStack['stack']['stockApi']) => (app!.server.address() as net.AddressInfo).port;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-tls-'));
    certs = makeCertificates(dir);
    ca = fs.readFileSync(certs.ca, 'utf8');
    // The served files are copies, so a reload can swap their contents.
    live = { cert: path.join(dir, 'live.pem'), key: path.join(dir, 'live.key') };
    fs.copyFileSync(certs.first.cert, live.cert);
    fs.copyFileSync(certs.first.key, live.key);
    t = await startTestStack({ TLS_CERT_FILE: live.cert, TLS_KEY_FILE: live.key });
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    if (t) fs.rmSync(t.dataDir, { recursive: true, force: true });
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS and WSS URLs in demo.json and the handle', () => {
    expect(t.stack.stockBaseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(t.stack.perpBaseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const demo = JSON.parse(fs.readFileSync(path.join(t.dataDir, 'demo.json'), 'utf8'));
    expect(demo.stock.baseUrl).toBe(t.stack.stockBaseUrl);
    expect(demo.stock.wsUrl).toBe(`wss://127.0.0.1:${portOf(t.stack.stockApi)}/api/v1/ws`);
    expect(demo.perp.baseUrl).toBe(t.stack.perpBaseUrl);
    expect(demo.perp.wsUrl).toBe(`wss://127.0.0.1:${portOf(t.stack.perpApi)}/v4/public/ws`);
  });

  it('answers over TLS 1.2+ to a client trusting the CA, with HSTS, on both APIs', async () => {
    const perp = await get(`${t.stack.perpBaseUrl}/v4/public/trader/time`, { ca });
    expect(perp.status).toBe(200);
    expect(JSON.parse(perp.body).data.serverTime).toBeGreaterThan(0);
    expect(perp.headers['strict-transport-security']).toBe('max-age=31536000');
    expect(perp.serial).toBe(certs.first.serial);
    // An unsigned stock call is refused in the envelope, over TLS, with HSTS too.
    const stock = await get(`${t.stack.stockBaseUrl}/api/v1/prices/AAPL`, { ca });
    expect(stock.status).toBe(400);
    expect(JSON.parse(stock.body)).toMatchObject({ code: 401, errMsg: 'Unauthorized' });
    expect(stock.headers['strict-transport-security']).toBe('max-age=31536000');
    await expect(get(`${t.stack.perpBaseUrl}/v4/public/trader/time`, { ca, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' })).rejects.toThrow();
  });

  it('fails verification for a client without the CA', async () => {
    for (const base of [t.stack.stockBaseUrl!, t.stack.perpBaseUrl!]) {
      const err = await get(`${base}/v4/public/trader/time`).then(() => undefined, (e: NodeJS.ErrnoException) => e);
      expect(err?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
    }
  });

  it('serves the SDK clients through a fetch that trusts the CA', async () => {
    const f = fetchWithCa(ca);
    const stock = new StockClient({ baseUrl: t.stack.stockBaseUrl!, apiKey: t.demo.stock.keys.readOnly.apiKey, apiSecret: t.demo.stock.keys.readOnly.apiSecret, chainId: t.demo.chainId, product: t.demo.stock.product, fetch: f });
    const quote = await stock.getPrice('AAPL');
    expect(quote.symbol).toBe('AAPL');
    const perp = new PerpClient({ baseUrl: t.stack.perpBaseUrl!, apiKey: t.demo.perp!.keys.trader.apiKey, apiSecret: t.demo.perp!.keys.trader.apiSecret, chainId: t.demo.chainId, fetch: f });
    const tickers = await perp.getTickers({ symbol: 'BTC-USD' });
    expect(tickers[0]?.symbol).toBe('BTC-USD');
    // Without the CA, the SDK's default fetch refuses the certificate.
    const untrusting = new PerpClient({ baseUrl: t.stack.perpBaseUrl!, apiKey: 'k', apiSecret: 's', chainId: t.demo.chainId, retry: false } as ConstructorParameters<typeof PerpClient>[0]);
    await expect(untrusting.getServerTime()).rejects.toThrow();
  });

  it('subscribes over WSS on both APIs, with ws and with the SDK stream client', async () => {
    const stock = await openSocket(t.demo.stock.wsUrl, { ca });
    stock.send({ op: 'subscribe', id: 's1', channel: 'quotes', symbol: 'AAPL' });
    expect(await stock.next((f) => f.type === 'subscribed' && f.id === 's1')).toMatchObject({ channel: 'quotes', symbol: 'AAPL' });
    stock.close();
    const perp = await openSocket(t.demo.perp!.wsUrl, { ca });
    perp.send({ op: 'subscribe', id: 'p1', channel: 'tickers', symbol: 'BTC-USD' });
    expect(await perp.next((f) => f.type === 'subscribed' && f.id === 'p1')).toMatchObject({ channel: 'tickers', symbol: 'BTC-USD' });
    perp.close();
    await expect(openSocket(t.demo.perp!.wsUrl).then((s) => new Promise((resolve, reject) => {
      s.ws.once('open', resolve);
      s.ws.once('error', reject);
    }))).rejects.toThrow();

    // The SDK's stream client takes a WebSocket constructor: one that trusts the CA.
    class TrustingWebSocket extends WebSocket {
      constructor(url: string) {
        super(url, { ca });
      }
    }
    const client = new PerpStreamClient({ url: t.demo.perp!.wsUrl, WebSocket: TrustingWebSocket });
    try {
      const snapshot = await new Promise<unknown>((resolve, reject) => {
        client.subscribe('tickers', { symbol: 'BTC-USD' }, { onSnapshot: (data) => resolve(data), onError: reject });
        setTimeout(() => reject(new Error('no snapshot')), 10_000);
      });
      expect(snapshot).toBeTruthy();
    } finally {
      await client.close();
    }
  });

  it('closes a plain-HTTP connection to the TLS port and keeps serving', async () => {
    for (const port of [portOf(t.stack.stockApi), portOf(t.stack.perpApi)]) {
      const socket = net.connect(port, '127.0.0.1');
      socket.write('GET /v4/public/trader/time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const received = await new Promise<string>((resolve, reject) => {
        let text = '';
        socket.on('data', (d) => (text += d.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', () => resolve(text));
        setTimeout(() => reject(new Error('the TLS port kept a plain-HTTP connection open')), 5_000);
      });
      // Never an HTTP answer in the clear: at most a TLS alert before the close.
      expect(received).not.toMatch(/HTTP\/1\.1 200/);
      expect(received).not.toContain('serverTime');
    }
    expect((await get(`${t.stack.perpBaseUrl}/v4/public/trader/time`, { ca })).status).toBe(200);
  });

  it('reloads the certificate for new handshakes while an open WSS connection stays; a bad file keeps the old one', async () => {
    const open = await openSocket(t.demo.perp!.wsUrl, { ca });
    await new Promise((resolve) => (open.ws.readyState === WebSocket.OPEN ? resolve(undefined) : open.ws.once('open', resolve)));
    const openSerial = ((open.ws as unknown as { _socket: TLSSocket })._socket).getPeerCertificate().serialNumber;
    expect(openSerial).toBe(certs.first.serial);

    fs.copyFileSync(certs.second.cert, live.cert);
    fs.copyFileSync(certs.second.key, live.key);
    expect(t.stack.reloadTls()).toEqual([{ ok: true, serialNumber: certs.second.serial }, { ok: true, serialNumber: certs.second.serial }]);
    expect((await get(`${t.stack.perpBaseUrl}/v4/public/trader/time`, { ca })).serial).toBe(certs.second.serial);
    expect((await get(`${t.stack.stockBaseUrl}/api/v1/prices/AAPL`, { ca })).serial).toBe(certs.second.serial);
    // The connection made before the reload still works, on its own certificate.
    expect(open.ws.readyState).toBe(WebSocket.OPEN);
    open.send({ op: 'subscribe', id: 'after-reload', channel: 'tickers', symbol: 'BTC-USD' });
    expect(await open.next((f) => f.id === 'after-reload')).toMatchObject({ type: 'subscribed' });
    open.close();

    // An expired certificate written over the live file: refused, the second certificate stays.
    fs.copyFileSync(certs.expired.cert, live.cert);
    fs.copyFileSync(certs.expired.key, live.key);
    const refused = t.stack.reloadTls();
    expect(refused.map((r) => r.ok)).toEqual([false, false]);
    const error = (refused[0] as { error: TlsConfigError }).error;
    expect(error.problem).toBe('expired');
    expect(error.message).toContain(live.cert);
    expect(t.logs.some((l) => l.includes('TLS reload refused') && l.includes(live.cert))).toBe(true);
    expect((await get(`${t.stack.perpBaseUrl}/v4/public/trader/time`, { ca })).serial).toBe(certs.second.serial);
    fs.copyFileSync(certs.second.cert, live.cert);
    fs.copyFileSync(certs.second.key, live.key);
  });

  it('runs the CLI and the CCXT class over HTTPS with NODE_EXTRA_CA_CERTS', async () => {
    // The secret travels in the environment, not on a command line others can list.
    const env = { ...process.env, DATA_DIR: t.dataDir, NODE_EXTRA_CA_CERTS: certs.ca, TOKEX_TEST_SECRET: t.demo.perp!.keys.trader.apiSecret };
    const cliArgs = ['bin/tokex.mjs', 'stock', 'quote', 'AAPL', '--json'];
    const ccxtScript = [
      "import TokexPerp from 'ccxt-tokex';",
      `const ex = new TokexPerp({ apiKey: ${JSON.stringify(t.demo.perp!.keys.trader.apiKey)}, secret: process.env.TOKEX_TEST_SECRET, options: { baseUrl: ${JSON.stringify(t.stack.perpBaseUrl)}, chainId: ${t.demo.chainId} } });`,
      'const markets = await ex.fetchMarkets();',
      'console.log(JSON.stringify(markets.map((m) => m.symbol)));',
    ].join('\n');
    const [cli, ccxt, refused] = await Promise.all([
      run(process.execPath, cliArgs, { cwd: REPO, env, timeout: 30_000 }),
      run(process.execPath, ['--input-type=module', '-e', ccxtScript], { cwd: REPO, env, timeout: 30_000 }),
      // The same CLI without the CA: the certificate is refused, nothing is turned off.
      run(process.execPath, cliArgs, { cwd: REPO, env: { ...env, NODE_EXTRA_CA_CERTS: '' }, timeout: 30_000 }).then(
        () => undefined,
        (e: { code?: number; stderr?: string }) => e,
      ),
    ]);
    expect(JSON.stringify(JSON.parse(cli.stdout))).toContain('"AAPL"');
    expect(JSON.parse(ccxt.stdout)).toContain('BTC/USD:USD');
    expect(refused).toBeDefined();
    expect(refused?.stderr).toMatch(/certificate|UNABLE_TO_VERIFY|self[- ]signed|fetch failed/i);
    expect(refused?.code).not.toBe(0);
  }, 60_000);
});

describe('bad certificate files stop the start', () => {
  let dir: string;
  let certs: Certs;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-tls-bad-'));
    certs = makeCertificates(dir);
    fs.writeFileSync(path.join(dir, 'garbage.pem'), 'not a certificate\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const cases = (): Array<[string, Record<string, string>, string, string, string]> => [
    ['a missing certificate', { TLS_CERT_FILE: path.join(dir, 'nope.pem'), TLS_KEY_FILE: certs.first.key }, path.join(dir, 'nope.pem'), 'missing', 'file not found'],
    ['a missing key', { TLS_CERT_FILE: certs.first.cert, TLS_KEY_FILE: path.join(dir, 'nope.key') }, path.join(dir, 'nope.key'), 'missing', 'file not found'],
    // A directory cannot be read as a file, whoever runs the test (root reads any mode).
    ['an unreadable key', { TLS_CERT_FILE: certs.first.cert, TLS_KEY_FILE: dir }, dir, 'unreadable', 'cannot read the file (EISDIR)'],
    ['a file that is no certificate', { TLS_CERT_FILE: path.join(dir, 'garbage.pem'), TLS_KEY_FILE: certs.first.key }, path.join(dir, 'garbage.pem'), 'not-a-certificate', 'not a PEM certificate'],
    ['a key of another certificate', { TLS_CERT_FILE: certs.first.cert, TLS_KEY_FILE: certs.second.key }, certs.second.key, 'key-mismatch', `the private key does not match the certificate ${certs.first.cert}`],
    ['an expired certificate', { TLS_CERT_FILE: certs.expired.cert, TLS_KEY_FILE: certs.expired.key }, certs.expired.cert, 'expired', 'the certificate expired on 2020-01-02T00:00:00.000Z'],
  ];

  it('names the file and the problem, never the key, and starts nothing', async () => {
    const keyBody = fs.readFileSync(certs.second.key, 'utf8').split('\n')[1]!;
    for (const [what, env, file, problem, reason] of cases()) {
      // A data directory that does not exist yet: the stack creates it first thing, so it staying
      // absent shows that nothing (anvil, database, any role) was started.
      const dataDir = path.join(dir, `data-${problem}`);
      const err = await startTestStack(env, { dataDir }).then(() => undefined, (e: unknown) => e);
      expect(err, what).toBeInstanceOf(TlsConfigError);
      const e = err as TlsConfigError;
      expect(e.code).toBe('VALIDATION');
      expect(e.problem, what).toBe(problem);
      expect(e.file, what).toBe(file);
      expect(e.message, what).toBe(`TLS ${file}: ${reason}`);
      expect(e.message).not.toContain(keyBody);
      expect(fs.existsSync(dataDir), what).toBe(false);
    }
  });

  it('accepts a chain file appended to the served certificate, and refuses a bad one', () => {
    const m = loadTlsMaterial({ certFile: certs.first.cert, keyFile: certs.first.key, caFile: certs.ca });
    expect(m.serialNumber).toBe(certs.first.serial);
    expect(m.cert.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(() => loadTlsMaterial({ certFile: certs.first.cert, keyFile: certs.first.key, caFile: path.join(dir, 'garbage.pem') })).toThrow(
      `TLS ${path.join(dir, 'garbage.pem')}: not a PEM certificate chain`,
    );
  });
});
