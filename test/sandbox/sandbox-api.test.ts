/**
 * The sandbox control API (docs/sandbox.md) on the real embedded stack over HTTP: bearer auth,
 * prices pinned and shown by both venues before the answer, tokens minted to a fresh wallet and
 * read back on chain, and every fault as a client sees it (rate limits of both APIs, outages by
 * path, the executor paused, the chain stalled). One stack for the file; a second, lighter start
 * on the same data directory shows that with SANDBOX=0 the routes do not exist.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, parseEther, parseUnits, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../../src/config/app-config.ts';
import { createFaultRegistry } from '../../src/sandbox/fault-registry.ts';
import { createSandboxService } from '../../src/sandbox/sandbox-service.ts';
import { bearerMatches, sandboxToken } from '../../src/sandbox/sandbox-token.ts';
import { chainClients, oneClickUsers } from '../support/one-click-users.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

describe('sandbox configuration and token (no stack)', () => {
  it('is on by default on the embedded stack only, SANDBOX overrides, and production with it on refuses to start', () => {
    expect(loadConfig({}).sandbox).toBe(true);
    expect(loadConfig({ RPC_URL: 'http://127.0.0.1:8545' }).sandbox).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgres://u@localhost/db' }).sandbox).toBe(false);
    expect(loadConfig({ RPC_URL: 'http://127.0.0.1:8545', SANDBOX: '1' }).sandbox).toBe(true);
    expect(loadConfig({ SANDBOX: '0' }).sandbox).toBe(false);
    // Production is never a sandbox by default, even on the embedded chain.
    expect(loadConfig({ TOKEX_ENV: 'production' }).sandbox).toBe(false);
    expect(() => loadConfig({ TOKEX_ENV: 'production', SANDBOX: '1' })).toThrow(
      'SANDBOX: not with TOKEX_ENV=production (its routes move prices, mint tokens and inject faults); unset SANDBOX or set SANDBOX=0',
    );
    expect(() => loadConfig({ SANDBOX: 'maybe' })).toThrow('SANDBOX: must be true or false');
  });

  it('makes the token once per data directory, 64 hex digits in a file only its owner reads', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-sandbox-token-'));
    try {
      const token = sandboxToken(dir);
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(sandboxToken(dir)).toBe(token);
      expect(fs.statSync(path.join(dir, 'sandbox.token')).mode & 0o777).toBe(0o600);
      expect(sandboxToken(fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-sandbox-token-')))).not.toBe(token);
      expect([bearerMatches(`Bearer ${token}`, token), bearerMatches(`bearer ${token}`, token)]).toEqual([true, true]);
      expect([bearerMatches(undefined, token), bearerMatches(token, token), bearerMatches(`Bearer ${token}x`, token), bearerMatches('Bearer ', token)]).toEqual([false, false, false, false]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses faults in a process that does not run every role (409), after checking the body (400)', async () => {
    const state = { token: 'x', faults: createFaultRegistry({ exemptPrefixes: ['/sandbox/v1'] }), allInOne: false, path: '/sandbox/v1' };
    const service = createSandboxService({ state, db: undefined as never, quotes: async () => ({ getQuote: () => undefined }), perpEngine: () => undefined, publicClient: undefined as never, logger: { info() {}, warn() {} } });
    await expect(service.addFault({ kind: 'executor-paused' })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('use the all-in-one stack (npm start, or tokex start --role all)') });
    await expect(service.addFault({ kind: 'rate-limit', count: 1 })).rejects.toMatchObject({ code: 'VALIDATION', message: 'apiKey: required for kind rate-limit' });
    expect(state.faults.list()).toEqual([]);
  });
});

describe('sandbox control API on the embedded stack', () => {
  let t: TestStack;
  let base: string;
  let token: string;

  /** `auth` null: no Authorization header. */
  const call = async (method: string, route: string, body?: unknown, auth: string | null = `Bearer ${token}`) => {
    const headers: Record<string, string> = {};
    if (auth !== null) headers.authorization = auth;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${route}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };
  const ok = async (method: string, route: string, body?: unknown) => {
    const r = await call(method, route, body);
    if (r.status !== 200) throw new Error(`${method} ${route}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json.data;
  };
  /** The 400's errMsg, checking the envelope around it. */
  const refusal = async (method: string, route: string, body?: unknown) => {
    const r = await call(method, route, body);
    expect([r.status, r.json.code]).toEqual([400, 400]);
    return r.json.errMsg as string;
  };

  beforeAll(async () => {
    t = await startTestStack({ EXECUTOR_TICK_MS: '200' });
    base = t.demo.sandbox!.baseUrl;
    token = t.demo.sandbox!.token;
  }, 180_000);

  let stopped = false;
  afterAll(async () => {
    if (!stopped) await t?.stop();
  });

  it('writes sandbox.baseUrl and the data directory\'s token to demo.json', () => {
    expect(t.demo.sandbox).toEqual({ baseUrl: `${t.stack.stockBaseUrl}/sandbox/v1`, token: fs.readFileSync(path.join(t.dataDir, 'sandbox.token'), 'utf8').trim() });
    expect(t.stack.sandboxUrl).toBe(base);
    // The token never reaches the log.
    expect(t.logs.filter((l) => l.includes(token))).toEqual([]);
  });

  it('answers 401 in the envelope without the bearer token or with a wrong one, on known and unknown paths', async () => {
    for (const auth of [null, `Bearer ${'0'.repeat(64)}`, `Basic ${token}`, token]) {
      for (const route of ['/clock', '/faults', '/nowhere']) {
        const r = await call('GET', route, undefined, auth);
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Bearer realm="tokex-sandbox"');
        expect({ ...r.json, uuid: typeof r.json.uuid, t: typeof r.json.t }).toEqual({ code: 401, errMsg: 'Unauthorized', uuid: 'string', t: 'number' });
      }
    }
    const unknown = await call('GET', '/nowhere');
    expect([unknown.status, unknown.json.code, unknown.json.errMsg]).toEqual([404, 404, 'route: not found']);
  });

  it('GET /clock answers the stack\'s clock, not frozen', async () => {
    const before = Date.now();
    const clock = await ok('GET', '/clock');
    expect(clock.frozen).toBe(false);
    expect(clock.now).toBeGreaterThanOrEqual(before);
    expect(clock.now).toBeLessThanOrEqual(Date.now());
  });

  it('POST /prices pins an underlying, answered once the stock quote and the perpetual index show it; release hands it back', async () => {
    const aapl = await ok('POST', '/prices', { symbol: 'AAPL', price: '123.45' });
    expect(aapl).toMatchObject({ symbol: 'AAPL', pinned: true, price: '123.45', quote: { last: '123.45' }, perp: [{ symbol: 'AAPL-USD' }] });
    // Right after the answer, with no wait: the signed API's quote and the perpetual ticker.
    const quote = await t.readOnly.getPrice('AAPL');
    expect(quote.last).toBe('123.45');
    expect(quote.timestamp).toBeGreaterThanOrEqual(aapl.setAt);
    const ticker = await t.perpTrader!.getTickers({ symbol: 'AAPL-USD' });
    expect(ticker[0].indexPrice).toBe(aapl.perp[0].indexPrice);

    // A perpetual's name pins its underlying.
    const btc = await ok('POST', '/prices', { symbol: 'BTC-USD', price: '70000' });
    expect(btc).toMatchObject({ symbol: 'BTC', pinned: true, price: '70000.00', quote: { last: '70000.00' }, perp: [{ symbol: 'BTC-USD' }] });
    const btcTicker = await t.perpTrader!.getTickers({ symbol: 'BTC-USD' });
    expect(btcTicker[0].indexPrice).toBe(btc.perp[0].indexPrice);

    const released = await ok('POST', '/prices', { symbol: 'AAPL', release: true });
    expect(released).toMatchObject({ symbol: 'AAPL', pinned: false, released: true, price: '123.45' });
    expect(released.quote.timestamp).toBeGreaterThan(aapl.setAt);
    const again = await ok('POST', '/prices', { symbol: 'AAPL', release: true });
    expect(again).toMatchObject({ symbol: 'AAPL', pinned: false, released: false, price: null });
    await ok('POST', '/prices', { symbol: 'BTC', release: true });
  });

  it('POST /fund mints USDC and a stock to a fresh wallet, exactly, read back on chain', async () => {
    const { pub } = chainClients(t);
    const fresh = privateKeyToAccount(generatePrivateKey()).address;
    const c = t.demo.stock.contracts;
    const usdc = await ok('POST', '/fund', { address: fresh.toLowerCase(), asset: 'USDC', amount: '1000.000001' });
    expect(usdc).toMatchObject({ address: fresh, asset: 'USDC', amount: '1000.000001', balance: '1000.000001' });
    expect(usdc.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await pub.readContract({ address: c.cashToken, abi: erc20Abi, functionName: 'balanceOf', args: [fresh] })).toBe(1_000_000_001n);
    const receipt = await pub.getTransactionReceipt({ hash: usdc.txHash as Hex });
    expect(receipt.status).toBe('success');

    // A Stock's owner is the venue's timelock: minted as it, with its ether put back.
    const timelockEther = await pub.getBalance({ address: t.stack.deployment.timelock!.address as Address });
    const aapl = await ok('POST', '/fund', { address: fresh, asset: 'aapl', amount: '2.5' });
    expect(aapl).toMatchObject({ address: fresh, asset: 'AAPL', amount: '2.5', balance: '2.5' });
    expect(await pub.readContract({ address: c.stocks.AAPL, abi: erc20Abi, functionName: 'balanceOf', args: [fresh] })).toBe(parseUnits('2.5', 18));
    expect(await pub.getBalance({ address: t.stack.deployment.timelock!.address as Address })).toBe(timelockEther);
    // A second fund adds to the first.
    expect(await ok('POST', '/fund', { address: fresh, asset: 'USDC', amount: '0.5' })).toMatchObject({ amount: '0.5', balance: '1000.500001' });
  });

  it('a rate-limit fault answers the key\'s next N requests on the stock API 429 as its table says, then lets the next through', async () => {
    const key = t.demo.stock.keys.readOnly.apiKey;
    const set = await ok('POST', '/faults', { kind: 'rate-limit', apiKey: key, count: 2, retryAfterSeconds: 7 });
    expect(set).toMatchObject({ kind: 'rate-limit', apiKey: key, count: 2, remaining: 2, retryAfterSeconds: 7 });
    const send = async () => {
      const req = t.readOnly.sign('GET', '/api/v1/prices/AAPL');
      const res = await fetch(req.url, { method: req.method, headers: req.headers });
      return { status: res.status, headers: res.headers, json: (await res.json()) as any };
    };
    // Another key is not touched.
    expect((await t.writable.request('GET', '/api/v1/prices/AAPL')).code).toBe(200);
    for (let i = 0; i < 2; i++) {
      const r = await send();
      expect(r.status).toBe(429);
      expect({ ...r.json, uuid: typeof r.json.uuid, t: typeof r.json.t }).toEqual({ code: 429, errMsg: 'Too many requests', uuid: 'string', t: 'number' });
      expect(r.headers.get('retry-after')).toBe('7');
      // The stock API has no rate limit of its own and so no X-RateLimit headers (docs/stock-api.md).
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const after = await send();
    expect([after.status, after.json.code, after.json.data.symbol]).toEqual([200, 200, 'AAPL']);
    expect(await ok('GET', '/faults')).toEqual({ faults: [] });
  });

  it('a rate-limit fault on a perp key answers 429 42900 with the real limiter\'s headers, then the real budget counts again', async () => {
    const key = t.demo.perp!.keys.trader.apiKey;
    await ok('POST', '/faults', { kind: 'rate-limit', apiKey: key, count: 1 });
    const send = async () => {
      const req = t.perpTrader!.sign('GET', 'instruments');
      const res = await fetch(req.url, { method: req.method, headers: req.headers });
      return { status: res.status, headers: res.headers, json: (await res.json()) as any };
    };
    const r = await send();
    expect(r.status).toBe(429);
    expect({ ...r.json, requestId: typeof r.json.requestId }).toEqual({ code: 42900, msg: 'Too many requests', data: {}, requestId: 'string' });
    expect([r.headers.get('retry-after'), r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-remaining'), r.headers.get('x-ratelimit-reset')]).toEqual(['1', '120', '0', '1']);
    const next = await send();
    expect([next.status, next.json.code]).toEqual([200, 0]);
    // The fault spent none of the key's real budget: the limiter counts this request as one of its 120.
    expect(Number(next.headers.get('x-ratelimit-remaining'))).toBeLessThan(120);
    expect(next.headers.get('x-ratelimit-limit')).toBe('120');
  });

  it('an http-503 fault answers the next N requests under a path as each API\'s outage does; the sandbox itself stays reachable', async () => {
    await ok('POST', '/faults', { kind: 'http-503', path: '/api/v1/prices', count: 1 });
    await ok('POST', '/faults', { kind: 'http-503', path: '/v4/public/trader/instruments', count: 1, cause: 'chain' });
    const stock = await t.readOnly.request('GET', '/api/v1/prices/AAPL');
    expect([stock.httpStatus, stock.code, stock.errMsg]).toEqual([503, 503, 'storage: unavailable, try again later']);
    // Not under the path: served.
    expect((await t.readOnly.request('GET', '/api/v1/symbols')).code).toBe(200);
    expect((await t.readOnly.request('GET', '/api/v1/prices/AAPL')).code).toBe(200);
    const req = t.perpTrader!.sign('GET', 'instruments');
    const res = await fetch(req.url, { method: req.method, headers: req.headers });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 50001, msg: 'chain: RPC unavailable, try again later', data: {} });
    const again = t.perpTrader!.sign('GET', 'instruments');
    expect((await fetch(again.url, { method: again.method, headers: again.headers })).status).toBe(200);

    // A fault on every path leaves the sandbox's own routes out, so it can be listed and cleared.
    const everything = await ok('POST', '/faults', { kind: 'http-503', path: '/', count: 5 });
    expect((await fetch(`${t.stack.stockBaseUrl}/healthz`)).status).toBe(503);
    expect(await ok('GET', '/faults')).toEqual({ faults: [{ ...everything, remaining: 4 }] });
    expect(await ok('DELETE', '/faults')).toEqual({ cleared: [{ ...everything, remaining: 4 }] });
    expect((await fetch(`${t.stack.stockBaseUrl}/healthz`)).status).toBe(200);
  });

  it('executor-paused keeps a market order open while it stands; cleared, the executor fills it', async () => {
    const [alice] = await oneClickUsers(t, 'sandbox-executor', 1);
    await alice.client.enableOneClick(alice.account);
    const deposit = await alice.client.post<any>('/api/v1/cash/deposits/send', { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '500' });
    await until(() => alice.client.get<any>(`/api/v1/cash/deposits/${deposit.operationId}`), (o) => o.operationStatus === 'completed');

    const paused = await ok('POST', '/faults', { kind: 'executor-paused' });
    expect(paused).toMatchObject({ kind: 'executor-paused', heldTicks: 0 });
    // Set twice: the same fault.
    expect((await ok('POST', '/faults', { kind: 'executor-paused' })).id).toBe(paused.id);
    const out = await alice.client.post<any>('/api/v1/orders/send', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', deadline: Math.floor(Date.now() / 1000) + 600 });
    expect(out.status).toBe('mined');
    await until(() => alice.client.get<any>(`/api/v1/orders/${out.orderId}`), (o) => o.state === 'open');
    // Three ticks of the executor held after the order was open on chain and indexed: still open.
    const held = (await ok('GET', '/faults')).faults[0].heldTicks as number;
    await until(() => ok('GET', '/faults'), (f) => f.faults[0].heldTicks >= held + 3);
    expect((await alice.client.get<any>(`/api/v1/orders/${out.orderId}`)).state).toBe('open');

    const cleared = await ok('DELETE', '/faults');
    expect(cleared.cleared.map((f: any) => f.kind)).toEqual(['executor-paused']);
    const filled = await until(() => alice.client.get<any>(`/api/v1/orders/${out.orderId}`), (o) => o.state === 'history', 30_000);
    expect(filled.history.status).toBe('FILLED');
  });

  it('chain-stall holds every transaction unmined until cleared; a fund meanwhile is refused 409', async () => {
    const { pub, walletOf } = chainClients(t);
    const sender = privateKeyToAccount(generatePrivateKey());
    await pub.request({ method: 'anvil_setBalance' as never, params: [sender.address, `0x${parseEther('1').toString(16)}`] as never });
    const stalled = await ok('POST', '/faults', { kind: 'chain-stall' });
    expect(stalled).toMatchObject({ kind: 'chain-stall' });
    const hash = await walletOf(sender).sendTransaction({ to: sender.address, value: 1n, gas: 21_000n });
    // Sent and in the pool, not mined: with automine on, anvil would have mined it before answering.
    expect((await pub.getTransaction({ hash })).blockNumber).toBeNull();
    await expect(pub.getTransactionReceipt({ hash })).rejects.toThrow(/could not be found/);
    const fund = await call('POST', '/fund', { address: sender.address, asset: 'USDC', amount: '1' });
    expect([fund.status, fund.json.code, fund.json.errMsg]).toEqual([
      409, 409, 'fund: the chain is stalled by the chain-stall fault, and the mint would not be mined; DELETE /sandbox/v1/faults first',
    ]);

    expect((await ok('DELETE', '/faults')).cleared).toEqual([stalled]);
    const receipt = await pub.waitForTransactionReceipt({ hash, timeout: 10_000 });
    expect(receipt.status).toBe('success');
    expect(await pub.request({ method: 'anvil_getAutomine' as never })).toBe(true);
  });

  it('answers 400 naming the field for bad input on every route that takes any', async () => {
    // prices
    expect(await refusal('POST', '/prices', {})).toBe('symbol: required');
    expect(await refusal('POST', '/prices', { symbol: 'BTC' })).toBe('price: required: a price pins the underlying, release: true hands it back to the simulator');
    expect(await refusal('POST', '/prices', { symbol: 'BTC', price: '1', release: true })).toBe('price: give either price or release: true, not both');
    expect(await refusal('POST', '/prices', { symbol: 'BTC', price: 70000 })).toBe('price: must be string');
    expect(await refusal('POST', '/prices', { symbol: 'BTC', price: '1.234' })).toBe('price: at most two decimal places, the simulator quotes whole cents (got 1.234)');
    expect(await refusal('POST', '/prices', { symbol: 'DOGE-USD', price: '1' })).toBe('symbol: unknown symbol "DOGE-USD" (use the underlying, e.g. DOGE); simulated: AAPL, TSLA, NVDA, MSFT, SPY, BTC, ETH');
    expect(await refusal('POST', '/prices', '{"symbol":')).toBe('body: is not valid JSON');
    // fund
    expect(await refusal('POST', '/fund', { address: '0x12', asset: 'USDC', amount: '1' })).toBe('address: must be a 0x-prefixed 20-byte hex address');
    const someone = privateKeyToAccount(generatePrivateKey()).address;
    expect(await refusal('POST', '/fund', { address: someone, asset: 'DOGE', amount: '1' })).toBe('asset: "DOGE" is not an asset of this venue; one of USDC, AAPL, TSLA, NVDA, MSFT, SPY');
    expect(await refusal('POST', '/fund', { address: someone, asset: 'USDC', amount: '1.0000001' })).toBe('amount: at most 6 decimal places');
    expect(await refusal('POST', '/fund', { address: someone, asset: 'USDC', amount: '0' })).toBe('amount: must be greater than zero');
    expect(await refusal('POST', '/fund', { address: someone, asset: 'USDC', amount: '-1' })).toBe('amount: must be a decimal string like "12.5" (no sign, exponent or spaces)');
    expect(await refusal('POST', '/fund', { address: someone, asset: 'USDC', amount: '1000000000000.000001' })).toBe('amount: too large');
    expect(await refusal('POST', '/fund', { address: someone, asset: 'USDC', amount: '1', extra: 1 })).toBe('extra: unknown field');
    // faults
    expect(await refusal('POST', '/faults', { kind: 'meteor' })).toBe('kind: must be one of rate-limit, http-503, executor-paused, chain-stall, stream-drop');
    expect(await refusal('POST', '/faults', { kind: 'rate-limit', count: 1 })).toBe('apiKey: required for kind rate-limit');
    expect(await refusal('POST', '/faults', { kind: 'rate-limit', apiKey: 'k' })).toBe('count: required for kind rate-limit');
    expect(await refusal('POST', '/faults', { kind: 'rate-limit', apiKey: 'k', count: 0 })).toBe('count: must be >= 1');
    expect(await refusal('POST', '/faults', { kind: 'rate-limit', apiKey: 'k', count: 1, path: '/x' })).toBe('path: not a field of kind rate-limit (it takes apiKey, count, retryAfterSeconds)');
    expect(await refusal('POST', '/faults', { kind: 'http-503', path: 'api', count: 1 })).toBe('path: must match pattern "^/"');
    expect(await refusal('POST', '/faults', { kind: 'chain-stall', count: 1 })).toBe('count: not a field of kind chain-stall (it takes none)');
    expect(await ok('GET', '/faults')).toEqual({ faults: [] });
  });

  describe('with SANDBOX=0', () => {
    let off: TestStack | undefined;
    afterAll(async () => {
      await off?.stop();
    });

    it('serves no sandbox route (404 with or without the token) and demo.json names none', async () => {
      stopped = true;
      await t.stop();
      // The same data directory, deployed and seeded already: a restart with the sandbox off.
      off = await startTestStack({ SANDBOX: '0' }, { dataDir: t.dataDir });
      expect(off.demo.sandbox).toBeUndefined();
      expect(off.stack.sandboxUrl).toBeUndefined();
      for (const auth of [undefined, `Bearer ${token}`]) {
        const res = await fetch(`${off.stack.stockBaseUrl}/sandbox/v1/clock`, { headers: auth ? { authorization: auth } : {} });
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ code: 404, errMsg: 'route: not found' });
      }
    }, 120_000);
  });
});
