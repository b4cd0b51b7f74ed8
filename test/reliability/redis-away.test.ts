/**
 * Redis away, with a real redis-server of the test's own that it kills and restarts empty: both
 * APIs refuse signed requests with their retryable 503 while it is gone (never a 500, never a
 * request let through unchecked, the process up), serve again once it is back, and a request signed
 * and answered before the loss is refused when replayed afterwards, although Redis forgot its nonce.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signPerpRequest, signStockRequest } from '@tokex/sdk';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

let t: TestStack;
let redis: ChildProcess | undefined;
let port = 0;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/** A redis-server without persistence: killed, it comes back empty, as a crashed cache does. */
async function startRedis(): Promise<void> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += String(d);
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out.slice(-500)}`)));
  });
  redis = child;
}

async function killRedis(): Promise<void> {
  const child = redis!;
  redis = undefined;
  await new Promise((r) => {
    child.once('exit', r);
    child.kill('SIGKILL');
  });
}

interface Answer {
  status: number;
  body: any;
}

/** A signed perp GET whose headers can be sent again as they are (a captured request). */
function perpRequest(path: string): () => Promise<Answer> {
  const key = t.demo.perp!.keys!.trader;
  const ts = String(Date.now());
  const requestPath = `/v4/public/trader/${path}`;
  const headers = {
    'X-Api-Key': key.apiKey,
    'X-Api-Ts': ts,
    'X-Api-Sign': signPerpRequest(key.apiSecret, { ts, method: 'GET', requestPath, body: '' }),
    'X-Chain-Id': String(t.demo.chainId),
  };
  return async () => {
    const res = await fetch(t.perpBaseUrl + requestPath, { headers });
    return { status: res.status, body: await res.json() };
  };
}

function stockRequest(uri: string): () => Promise<Answer> {
  const key = t.demo.stock.keys.readOnly;
  const ts = String(Date.now());
  const nonce = randomUUID();
  const headers = {
    'x-api-key': key.apiKey,
    'x-api-ts': ts,
    'x-api-nonce': nonce,
    'x-api-sign': signStockRequest(key.apiSecret, { method: 'GET', uri, ts, nonce, body: '' }),
    'x-api-chain-id': String(t.demo.chainId),
    'x-api-p': t.demo.stock.product,
  };
  return async () => {
    const res = await fetch(t.demo.stock.baseUrl + uri, { headers });
    return { status: res.status, body: await res.json() };
  };
}

beforeAll(async () => {
  port = await freePort();
  await startRedis();
  t = await startTestStack({ REDIS_URL: `redis://127.0.0.1:${port}` });
  await until(() => perpRequest('account')(), (a) => a.body.data?.balance === '10000', 60_000);
}, 180_000);

afterAll(async () => {
  await t?.stop();
  if (redis) await killRedis();
});

describe('Redis away', () => {
  it('refuses with 503 while Redis is gone, serves again when it is back, and a replay of a pre-loss request stays refused', async () => {
    // Answered before the loss; the captured headers are replayed after Redis comes back empty.
    const capturedPerp = perpRequest('account');
    const capturedStock = stockRequest('/api/v1/prices/AAPL');
    expect((await capturedPerp()).body).toMatchObject({ code: 0 });
    expect((await capturedStock()).body).toMatchObject({ code: 200 });

    const consoleErrors = vi.spyOn(console, 'error');
    await killRedis();
    // The clients notice as they try to reconnect; each says so once, through the logger.
    const awayMsg = '"msg":"redis: unavailable; requests that need it are refused until it is back"';
    await until(async () => t.logs.filter((l) => l.includes(awayMsg)).length, (n) => n > 0, 30_000);
    const perp = await perpRequest('account')();
    expect(perp.status).toBe(503);
    expect(perp.body).toMatchObject({ code: 50002, requestId: expect.any(String) });
    const stock = await stockRequest('/api/v1/prices/AAPL')();
    expect(stock.status).toBe(503);
    expect(stock.body).toMatchObject({ code: 503, uuid: expect.any(String) });
    // Public reads are counted by the shared rate limiter too, which fails closed: the same clean
    // 503 in the envelope, from a process that is up.
    const time = await fetch(`${t.perpBaseUrl}/v4/public/trader/time`);
    expect(time.status).toBe(503);
    expect(await time.json()).toMatchObject({ code: 50002 });

    await startRedis();
    // ioredis reconnects by itself; fresh requests are served again.
    await until(() => perpRequest('account')(), (a) => a.status === 200, 30_000);
    await until(() => stockRequest('/api/v1/prices/AAPL')(), (a) => a.status === 200, 30_000);

    // Redis forgot both nonces, yet the replays are refused: they were signed before the new fence.
    const replayedPerp = await capturedPerp();
    expect(replayedPerp.status).toBe(401);
    expect(replayedPerp.body).toMatchObject({ code: 20007 });
    const replayedStock = await capturedStock();
    expect(replayedStock.body).toMatchObject({ code: 401 });

    // No answer of the whole episode was a 500, and nothing crashed.
    expect(t.logs.filter((l) => /"statusCode":500\b/.test(l))).toEqual([]);
    // The outage was reported through the logger, once per client that owns a connection, and
    // never as ioredis's own "Unhandled error event" lines (a connection without a listener).
    const purposes = t.logs.filter((l) => l.includes(awayMsg)).map((l) => JSON.parse(l).purpose as string);
    expect(new Set(purposes).size).toBe(purposes.length);
    expect(consoleErrors.mock.calls.filter((c) => String(c[0]).includes('Unhandled error event'))).toEqual([]);
    consoleErrors.mockRestore();
  });
});
