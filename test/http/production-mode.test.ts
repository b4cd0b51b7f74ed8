/**
 * TOKEX_ENV=production (docs/deployment.md): no plain HTTP on a host others can reach; behind
 * trusted proxies every request must have reached the proxy over HTTPS (X-Forwarded-Proto), and
 * the forwarding headers of any other peer count for nothing.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createHttpServer } from '../../src/http/create-http-server.ts';
import { apiTransportFor, isLoopbackHost, peerTrust } from '../../src/http/tls-options.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { stockEnvelope } from '../../src/stock/stock-envelope.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A plain-HTTP request from `localAddress` (127.0.0.1 is the trusted proxy, 127.0.0.2 a stranger). */
function request(port: number, urlPath: string, headers: Record<string, string>, localAddress = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers, localAddress, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) }));
    });
    req.on('error', reject);
  });
}

/** Opens a WebSocket through the "proxy"; resolves 'open', or the refusal's status and body. */
function upgrade(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, localAddress: '127.0.0.1' });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(`${res.statusCode} ${text}`));
    });
    ws.on('error', (err) => resolve(`error ${err.message}`));
  });
}

describe('production mode settings', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.10', 'example.com', '::ffff:10.0.0.1', '128.0.0.1']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses plain HTTP on a reachable host unless trusted proxies terminate TLS', () => {
    const base = { production: true, trustedProxies: [] as string[] };
    expect(() => apiTransportFor({ ...base, host: '0.0.0.0' }, 'stock API')).toThrow(
      'TOKEX_ENV=production: stock API would serve plain HTTP on HOST=0.0.0.0; set TLS_CERT_FILE and TLS_KEY_FILE, or TRUSTED_PROXIES',
    );
    expect(apiTransportFor({ ...base, host: '127.0.0.1' }, 'stock API')).toEqual({ requireHttps: false });
    expect(apiTransportFor({ ...base, host: '0.0.0.0', trustedProxies: ['10.0.0.5'] }, 'perp API')).toEqual({ requireHttps: true });
    expect(apiTransportFor({ ...base, production: false, host: '0.0.0.0' }, 'perp API')).toEqual({ requireHttps: false });
  });

  it('matches trusted proxies by address, range and name, IPv4-mapped too', () => {
    const trust = peerTrust(['10.0.0.5', '192.168.0.0/16', 'loopback']);
    expect(trust('10.0.0.5')).toBe(true);
    expect(trust('::ffff:10.0.0.5')).toBe(true);
    expect(trust('192.168.7.9')).toBe(true);
    expect(trust('::1')).toBe(true);
    expect(trust('10.0.0.6')).toBe(false);
    expect(peerTrust([])('127.0.0.1')).toBe(false);
  });

  it('refuses to start a stack serving plain HTTP on 0.0.0.0, before anything runs', async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-prod-')), 'data');
    const err = await startTestStack({ TOKEX_ENV: 'production', HOST: '0.0.0.0' }, { dataDir }).then(() => undefined, (e: Error) => e);
    expect(err?.message).toContain('TOKEX_ENV=production: stock API would serve plain HTTP on HOST=0.0.0.0');
    expect(fs.existsSync(dataDir)).toBe(false);
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  });
});

describe('forwarding headers of an untrusted peer', () => {
  it('take the client address from the socket unless the peer is a trusted proxy', async () => {
    const logger = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
    const app = createHttpServer({ logger, envelope: stockEnvelope, bodyLimitBytes: 1024, trustedProxies: ['127.0.0.1'] });
    app.get('/who', async (req) => ({ ip: req.ip, protocol: req.protocol }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (app.server.address() as AddressInfo).port;
      const forwarded = { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' };
      expect((await request(port, '/who', forwarded)).body).toEqual({ ip: '203.0.113.7', protocol: 'https' });
      expect((await request(port, '/who', forwarded, '127.0.0.2')).body).toEqual({ ip: '127.0.0.2', protocol: 'http' });
      // Not production: plain HTTP is served, and HSTS only where the proxy says HTTPS.
      expect((await request(port, '/who', forwarded)).headers['strict-transport-security']).toBe('max-age=31536000');
      expect((await request(port, '/who', forwarded, '127.0.0.2')).headers['strict-transport-security']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

describe('production behind a trusted proxy', () => {
  let t: TestStack;
  let stockPort: number;
  let perpPort: number;

  beforeAll(async () => {
    t = await startTestStack({ TOKEX_ENV: 'production', TRUSTED_PROXIES: '127.0.0.1' });
    stockPort = (t.stack.stockApi!.server.address() as AddressInfo).port;
    perpPort = (t.stack.perpApi!.server.address() as AddressInfo).port;
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    if (t) fs.rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('refuses what did not reach the proxy over HTTPS, in each API envelope', async () => {
    for (const headers of [{ 'x-forwarded-proto': 'http' }, {}] as Array<Record<string, string>>) {
      const stock = await request(stockPort, '/api/v1/prices/AAPL', headers);
      expect(stock.status).toBe(400);
      expect(stock.body).toEqual({ code: 400, errMsg: 'https required', uuid: expect.any(String), t: expect.any(Number) });
      expect(stock.headers['strict-transport-security']).toBeUndefined();
      const perp = await request(perpPort, '/v4/public/trader/time', headers);
      expect(perp.status).toBe(400);
      expect(perp.body).toMatchObject({ code: 10000, msg: 'https required' });
    }
  });

  it('serves what the trusted proxy forwarded from HTTPS, with HSTS', async () => {
    const perp = await request(perpPort, '/v4/public/trader/time', { 'x-forwarded-proto': 'https' });
    expect(perp.status).toBe(200);
    expect(perp.body.data.serverTime).toBeGreaterThan(0);
    expect(perp.headers['strict-transport-security']).toBe('max-age=31536000');
    // Past the HTTPS check, the stock API's own (signature) check answers.
    const stock = await request(stockPort, '/api/v1/prices/AAPL', { 'x-forwarded-proto': 'https' });
    expect(stock.body).toMatchObject({ code: 401, errMsg: 'Unauthorized' });
    expect(stock.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  it('ignores X-Forwarded-Proto from an untrusted peer', async () => {
    const perp = await request(perpPort, '/v4/public/trader/time', { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.7' }, '127.0.0.2');
    expect(perp.status).toBe(400);
    expect(perp.body).toMatchObject({ code: 10000, msg: 'https required' });
  });

  it('applies the same rule to WebSocket upgrades', async () => {
    expect(await upgrade(`ws://127.0.0.1:${perpPort}/v4/public/ws`, { 'x-forwarded-proto': 'http' })).toBe('400 https required');
    expect(await upgrade(`ws://127.0.0.1:${stockPort}/api/v1/ws`, {})).toBe('400 https required');
    expect(await upgrade(`ws://127.0.0.1:${perpPort}/v4/public/ws`, { 'x-forwarded-proto': 'https' })).toBe('open');
    expect(await upgrade(`ws://127.0.0.1:${stockPort}/api/v1/ws`, { 'x-forwarded-proto': 'https' })).toBe('open');
  });
});
