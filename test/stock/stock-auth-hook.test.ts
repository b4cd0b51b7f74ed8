/**
 * The stock auth hook on a small server of its own: a route opts out of authentication only
 * explicitly (`config: { auth: false }`), and a client that disconnects while its key is looked up
 * is denied, never a crash. Real SQLite key store, real HTTP.
 */
import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { StockClient } from '@tokex/sdk';
import { stockOk } from '../../src/stock/stock-envelope.ts';
import { useStockAuthApp } from '../support/stock-auth-app.ts';

const CHAIN_ID = 31337;
/** Set by a test: the next uncached lookup waits for it. */
let gate: Promise<void> | undefined;
let lookupStarted: (() => void) | undefined;

const auth = useStockAuthApp({
  chainId: CHAIN_ID,
  wrapKeys: (real) => ({
    ...real,
    async lookupForAuth(apiKey) {
      lookupStarted?.();
      if (gate) await gate;
      return real.lookupForAuth(apiKey);
    },
  }),
  routes: (api) => {
    api.get('/time', { config: { auth: false } }, async (req) => stockOk(req.id, { public: true, key: req.apiKey?.apiKey ?? null }));
    api.get('/private', async (req) => stockOk(req.id, { key: req.apiKey!.apiKey }));
    // `auth: true` is the default written out: still authenticated.
    api.get('/explicit', { config: { auth: true } }, async (req) => stockOk(req.id, { key: req.apiKey!.apiKey }));
  },
});

async function client(): Promise<StockClient> {
  const { key, apiSecret } = await auth.keys.create({ permission: 'READ_ONLY', ipWhitelist: ['127.0.0.1'], chainId: CHAIN_ID, product: 'STOCK' });
  return new StockClient({ baseUrl: auth.baseUrl, apiKey: key.apiKey, apiSecret, chainId: CHAIN_ID });
}

async function unsigned(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(auth.baseUrl + path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('routes that opt out of authentication', () => {
  it('answer an unsigned request only where the route says auth: false', async () => {
    const open = await unsigned('/api/v1/time');
    expect(open).toMatchObject({ status: 200, body: { code: 200, data: { public: true, key: null } } });
    for (const path of ['/api/v1/private', '/api/v1/explicit', '/api/v1/nowhere']) {
      const r = await unsigned(path);
      expect(r.status, path).toBe(400);
      expect(Object.keys(r.body).sort(), path).toEqual(['code', 'errMsg', 't', 'uuid']);
      expect(r.body, path).toMatchObject({ code: 401, errMsg: 'Unauthorized' });
    }
  });

  it('leave signed requests to the other routes unchanged, and ignore a signature on the public one', async () => {
    const c = await client();
    expect(await c.get('/api/v1/private')).toEqual({ key: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(await c.get('/api/v1/explicit')).toMatchObject({ key: expect.any(String) });
    expect(await c.get('/api/v1/time')).toEqual({ public: true, key: null });
  });
});

describe('a client that disconnects during an uncached key lookup', () => {
  it('is answered into the void without an error: the server logs no failure and serves the next request', async () => {
    const c = await client();
    const signed = c.sign('GET', '/api/v1/private');
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    const started = new Promise<void>((r) => (lookupStarted = r));
    // The server's end of this request's connection, to know when it has seen the client go.
    const serverSide = new Promise<Socket>((r) => auth.app.server.once('connection', r));
    const req = httpRequest(signed.url, { method: 'GET', headers: signed.headers, agent: false });
    req.on('error', () => undefined);
    req.end();
    const socket = await serverSide;
    await started;
    // The socket closes while the hook waits for the key (request.ip used to be undefined from here):
    // the gate opens once the server has closed its end, not after a guessed time.
    const closed = new Promise<void>((r) => (socket.closed ? r() : socket.once('close', () => r())));
    req.destroy();
    await closed;
    open();
    gate = undefined;
    lookupStarted = undefined;
    // The next request is answered after the first one's hook has resumed on the same key read.
    expect((await c.request('GET', '/api/v1/private')).code).toBe(200);
    expect(auth.logs.filter((l) => l.msg === 'request failed' || (typeof l.level === 'number' && l.level >= 50))).toEqual([]);
  });
});
