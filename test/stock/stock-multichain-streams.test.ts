/**
 * The stock streams of two chains on one `/api/v1/ws` (issue 39, docs/streams.md "Several chains
 * (stock)"), on two embedded anvils with the whole stack (each chain's indexer publishing its own
 * streams; through Redis too when DATABASE_URL and REDIS_URL are set):
 *
 * - a private subscriber of chain B (the SDK's StockStreamClient with `chainId`) sees its wallet's
 *   order on B and nothing of the same wallet's order on A, while a subscriber of A sees A's only;
 * - a key scoped for chain A only is refused `auth` on B, by the frame's `chainId` or the URL's,
 *   with the same opaque 401 as REST, its cause in the log;
 * - a client that names no chain (an `auth` frame as before several chains) is on the first chain;
 * - a connection never mixes chains: an `auth` naming another chain after a subscribe is refused
 *   (400), and a URL naming a chain not served is refused at the upgrade (HTTP 400);
 * - `tokex stream balances --chain 31338` (the real `bin/tokex.mjs`, demo.json through DATA_DIR)
 *   prints chain B's balances, without `--chain` chain A's, and a chain demo.json does not name is
 *   refused with the ones it does. Here rather than in test/cli/cli-chains.test.ts: that stack runs
 *   chain B's indexer, hence its stream publisher, in another process without Redis, so its API
 *   serves no stream of chain B.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Redis } from 'ioredis';
import { StockStreamClient, StreamError, type StockClient } from '@tokex/sdk';
import { until } from '../support/poll.ts';
import { buyOnChain, keyWithScopes, stockStreamAuthFrame, MULTICHAIN_WALLET } from '../support/multichain-stock.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket, refusedUpgrade, type StreamFrame, type TestSocket } from '../support/ws-client.ts';

const A = 31337;
const B = 31338;
const ENV = { EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100', CASH_SETTLE_DELAY_MS: '300' };
const walletIndex = MULTICHAIN_WALLET;

type Key = { apiKey: string; apiSecret: string };

/** An `auth` frame signed as docs/streams.md says, with `extra` fields (`chainId`, `product`). */
const authFrame = stockStreamAuthFrame;

describe.each(stackEngines('mc_streams'))('stock streams of two chains ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let dataDir: string;
  /** WRITABLE on both chains, bound to the trading wallet. */
  let both: Key;
  /** WRITABLE on chain A only, bound to the same wallet. */
  let onlyA: Key;
  const sockets: TestSocket[] = [];
  const clients: StockStreamClient[] = [];
  const user = () => t.demo.wallets[walletIndex].address.toLowerCase();

  const open = async (query = '') => {
    const s = await openSocket(t.demo.stock.wsUrl + query);
    sockets.push(s);
    return s;
  };
  const streamClient = (key: Key | undefined, chainId?: number) => {
    const c = new StockStreamClient({ url: t.demo.stock.wsUrl, ...(key ?? {}), ...(chainId !== undefined ? { chainId } : {}), WebSocket, reconnect: { baseMs: 50, maxAttempts: 3 } });
    clients.push(c);
    return c;
  };

  const keyWith = (scopes: Array<[number, 'READ_ONLY' | 'WRITABLE']>): Promise<Key> => keyWithScopes(t, scopes);
  const buyOn = (client: StockClient, chainId: number, notional: string) => buyOnChain(t, client, chainId, notional);

  /** The cause the stock API logged for the last stream `auth` it refused. */
  function lastStreamRefusal(): string | undefined {
    const lines = t.logs.filter((l) => l.includes('"stream auth refused"'));
    return lines.length === 0 ? undefined : (JSON.parse(lines[lines.length - 1]) as { reason: string }).reason;
  }

  /**
   * `tokex <args>` in a child process on this stack's demo.json, stopped once it printed a line
   * `done` accepts (a stream runs until stopped), or when it exits by itself.
   */
  function tokex(args: string[], done: (line: string) => boolean = () => false): Promise<{ code: number | null; lines: string[]; stderr: string }> {
    const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, ...inherited } = process.env;
    const child = spawn(process.execPath, ['bin/tokex.mjs', ...args], { env: { ...inherited, LOG_LEVEL: 'warn', DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    return new Promise((resolve) => {
      child.stdout.on('data', (d) => {
        stdout += String(d);
        if (stdout.split('\n').slice(0, -1).some(done)) child.kill('SIGTERM');
      });
      child.stderr.on('data', (d) => (stderr += String(d)));
      child.on('exit', (code) => resolve({ code, lines: stdout.split('\n').filter(Boolean), stderr }));
    });
  }


  beforeAll(async () => {
    env = engine.env();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-mc-streams-'));
    t = await startTestStack({ ...ENV, ...env, EMBEDDED_CHAIN_IDS: `${A},${B}` }, { dataDir });
    expect(t.demo.stock.chains.map((c) => c.chainId)).toEqual([A, B]);
    both = await keyWith([[A, 'WRITABLE'], [B, 'WRITABLE']]);
    onlyA = await keyWith([[A, 'WRITABLE']]);
  }, 300_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    for (const s of sockets) s.close();
    await t?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (env?.DATABASE_SCHEMA) {
      await engine.cleanup?.(env);
      await engine.cleanup?.({ ...env, DATABASE_SCHEMA: `${env.DATABASE_SCHEMA}_c${B}` });
    }
  });

  it('a subscriber of chain B sees its order on B and nothing of an order on A; a client naming no chain is on A', async () => {
    // Chain B through the SDK, which names the chain in the URL and the auth frame.
    const onB = streamClient(both, B);
    const bOrders: Array<{ kind: 'snapshot' | 'update'; data: any }> = [];
    const bBalances: any[] = [];
    const subB = onB.subscribe('orders', {}, { onSnapshot: (d) => bOrders.push({ kind: 'snapshot', data: d }), onUpdate: (d) => bOrders.push({ kind: 'update', data: d }) });
    const balB = onB.subscribe('balances', {}, { onSnapshot: (d) => bBalances.push(d), onUpdate: (d) => bBalances.push(d) });
    await onB.connect();
    expect(onB.account).toBe(user());
    await Promise.all([subB.ready, balB.ready]);

    // Chain A as a client written before several chains: no query, an auth frame without chainId.
    const onA = await open();
    onA.send(authFrame(both));
    expect(await onA.next((f) => f.type === 'authenticated')).toMatchObject({ account: user() });
    for (const channel of ['orders', 'balances']) {
      onA.send({ op: 'subscribe', id: channel, channel });
      await onA.next((f) => f.type === 'subscribed' && f.id === channel);
    }
    // The balances are each chain's, as `GET users/{id}/balance` of that chain answers them.
    // (null in a snapshot until the new key's wallet is read: its first balance follows as an update.)
    expect((await onA.next((f) => f.channel === 'balances' && f.data !== null && f.data !== undefined)).data).toMatchObject({ chainId: A, productType: 'STOCK' });
    await until(async () => bBalances.length, (n) => n > 0 && bBalances[bBalances.length - 1] !== null, 20_000);
    expect(bBalances[bBalances.length - 1]).toMatchObject({ chainId: B, productType: 'STOCK' });

    // An order on A first: A's subscriber sees it to its end; then one on B.
    const a = await buyOn(t.client(both.apiKey, both.apiSecret, { chainId: A }), A, '50');
    await onA.next((f) => f.type === 'update' && f.channel === 'orders' && f.data.txHash === a.txHash && f.data.state === 'history');
    const b = await buyOn(t.client(both.apiKey, both.apiSecret, { chainId: B }), B, '100');
    await until(async () => bOrders.filter((o) => o.kind === 'update' && o.data.txHash === b.txHash && o.data.state === 'history').length, (n) => n === 1, 30_000);

    // B's stream: B's order only, and no update of anything else (its snapshot had no open order).
    expect(bOrders[0]).toEqual({ kind: 'snapshot', data: [] });
    const bUpdates = bOrders.filter((o) => o.kind === 'update');
    expect(bUpdates.length).toBeGreaterThan(0);
    expect(bUpdates.every((o) => o.data.txHash === b.txHash)).toBe(true);
    expect(JSON.stringify(bOrders)).not.toContain(a.txHash);
    // Its balance updates are chain B's (none says chain A).
    expect(bBalances.every((x) => x === null || x.chainId === B)).toBe(true);
    // A's stream: A's order only.
    const aUpdates = onA.frames.filter((f) => f.type === 'update' && f.channel === 'orders');
    expect(aUpdates.every((f) => f.data.txHash === a.txHash)).toBe(true);
    expect(JSON.stringify(onA.frames)).not.toContain(b.txHash);
    expect(onA.frames.filter((f) => f.channel === 'balances').every((f) => f.data === null || f.data.chainId === A)).toBe(true);
    // The last streamed order on B is REST's body of it on B.
    const restB = await t.client(both.apiKey, both.apiSecret, { chainId: B }).get<any>(`/api/v1/orders/${b.orderId}`);
    expect(bUpdates[bUpdates.length - 1].data).toEqual(restB);
  }, 180_000);

  it('tokex stream balances --chain 31338 prints chain B\'s balances, without --chain chain A\'s; a chain demo.json does not name is refused', async () => {
    // The key bound to the trading wallet (it holds a scope on both chains); its balances are
    // streamed from the start on each chain (a bound wallet's), so a frame comes without a trade.
    const key = ['--api-key', both.apiKey, '--api-secret', both.apiSecret, '--json'];
    const balance = (line: string) => (JSON.parse(line) as { chainId?: number }).chainId !== undefined;
    const onB = await tokex(['stream', 'balances', '--chain', String(B), ...key], balance);
    expect(onB.stderr).toBe('');
    const framesB = onB.lines.map((l) => JSON.parse(l));
    expect(framesB.length).toBeGreaterThan(0);
    expect(framesB[framesB.length - 1]).toMatchObject({ chainId: B, productType: 'STOCK' });
    // Nothing of chain A on chain B's connection.
    expect(framesB.every((b) => b.chainId === B)).toBe(true);

    // Without --chain: the first chain, as before several chains.
    const onA = await tokex(['stream', 'balances', ...key], balance);
    expect(onA.stderr).toBe('');
    expect(onA.lines.map((l) => JSON.parse(l).chainId)).toEqual(onA.lines.map(() => A));

    // As the stock commands refuse it: exit 1, the chains demo.json names, before any connection.
    for (const args of [['stream', 'balances', '--chain', '5'], ['stream', 'quotes', 'AAPL', '--chain', '5']]) {
      expect(await tokex(args)).toEqual({ code: 1, lines: [], stderr: `error: --chain: chain 5 is not served by this stack; demo.json names ${A}, ${B}\n` });
    }
    // The perpetual streams are the first chain's only.
    expect((await tokex(['stream', 'trades', 'BTC-USD', '--chain', String(B)])).stderr).toBe("error: --chain: the perpetual streams are the first chain's; --chain is for the stock streams (--stock)\n");
  }, 60_000);

  // Only where this engine's stack runs its streams through Redis (PostgreSQL with REDIS_URL set):
  // defined there alone, so the SQLite variant reports no skipped test.
  if ('REDIS_URL' in engine.env()) it('with Redis, each chain\'s streams are under their own prefix: the first chain\'s where a single chain\'s are, chain B\'s under :stock:31338', async () => {
    const redis = new Redis(env.REDIS_URL);
    try {
      const prefix = `${t.config.streamPrefix}:stock`;
      const [epochA, epochB] = [await redis.get(`${prefix}:epoch`), await redis.get(`${prefix}:${B}:epoch`)];
      expect(Number(epochA)).toBeGreaterThan(0);
      expect(Number(epochB)).toBeGreaterThan(0);
      // Each chain's balances snapshot of the wallet, in its own hash, names its own chain.
      const snapA = JSON.parse((await redis.hget(`${prefix}:snap`, `balances ${user()}`))!);
      const snapB = JSON.parse((await redis.hget(`${prefix}:${B}:snap`, `balances ${user()}`))!);
      expect([snapA.data.chainId, snapB.data.chainId]).toEqual([A, B]);
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a key scoped for chain A only on chain B: the opaque 401, by the frame\'s chainId or the URL\'s', async () => {
    // The frame names B.
    const s = await open();
    s.send(authFrame(onlyA, { chainId: B, product: 'STOCK' }));
    expect(await s.next((f) => f.type === 'error')).toEqual({ type: 'error', id: 'auth', code: 401, msg: 'Unauthorized' });
    expect(lastStreamRefusal()).toBe('api key has no scope for this chain and product');
    // The URL names B and the frame nothing.
    const viaUrl = await open(`?chainId=${B}`);
    viaUrl.send(authFrame(onlyA));
    expect(await viaUrl.next((f) => f.type === 'error')).toEqual({ type: 'error', id: 'auth', code: 401, msg: 'Unauthorized' });
    expect(lastStreamRefusal()).toBe('api key has no scope for this chain and product');
    // The SDK's client of chain B: connect() rejects with the refusal.
    const sdk = streamClient(onlyA, B);
    const err = await sdk.connect().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StreamError);
    expect((err as StreamError).code).toBe(401);
    // The same key on A, and naming no chain (the first): authenticated.
    const onA = await open(`?chainId=${A}`);
    onA.send(authFrame(onlyA, { chainId: String(A) }));
    expect(await onA.next((f) => f.type === 'authenticated' || f.type === 'error')).toMatchObject({ type: 'authenticated', account: user() });
    const plain = await open();
    plain.send(authFrame(onlyA));
    expect(await plain.next((f) => f.type === 'authenticated' || f.type === 'error')).toMatchObject({ type: 'authenticated', account: user() });
    // An unserved chain and another product in the frame: the same opaque refusal.
    for (const [extra, cause] of [
      [{ chainId: 8453 }, 'auth chainId does not match the service'],
      [{ chainId: B, product: 'stock' }, 'auth product does not match the service (case-sensitive)'],
    ] as const) {
      const x = await open();
      x.send(authFrame(both, extra));
      expect(await x.next((f) => f.type === 'error')).toEqual({ type: 'error', id: 'auth', code: 401, msg: 'Unauthorized' });
      expect(lastStreamRefusal()).toBe(cause);
    }
  });

  it('keeps a connection on one chain: an auth naming another after a subscribe is refused; a URL chain not served is refused at the upgrade', async () => {
    const s = await open();
    s.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
    await s.next((f) => f.type === 'subscribed' && f.id === 'q');
    s.send(authFrame(both, { chainId: B }));
    const refused: StreamFrame = await s.next((f) => f.type === 'error' && f.id === 'auth');
    expect(refused.code).toBe(400);
    expect(refused.msg).toMatch(/^chainId: this connection is on chain 31337/);
    // The connection goes on, and may still authenticate on its own chain.
    s.send(authFrame(both));
    expect(await s.next((f) => f.type === 'authenticated')).toMatchObject({ account: user() });

    // The URL fixes the chain: the frame naming the other one is refused the same way.
    const fixed = await open(`?chainId=${B}`);
    fixed.send(authFrame(both, { chainId: A }));
    expect((await fixed.next((f) => f.type === 'error' && f.id === 'auth')).code).toBe(400);

    // Public channels of B through the URL: B's listing (the same symbols, served by B's hub).
    const pubB = await open(`?chainId=${B}`);
    pubB.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
    expect(await pubB.next((f) => f.type === 'subscribed' && f.id === 'q')).toMatchObject({ channel: 'quotes', symbol: 'AAPL', data: { symbol: 'AAPL' } });
    // B's candles are the one feed's history (the first chain's database), as A's: a candle, not null.
    pubB.send({ op: 'subscribe', id: 'k', channel: 'klines:1m', symbol: 'AAPL' });
    const candleB = await pubB.next((f) => f.type === 'subscribed' && f.id === 'k');
    expect(candleB.data).not.toBeNull();
    expect(candleB.data.closeTime).toBe(candleB.data.openTime + 59_999);

    expect(await refusedUpgrade(`${t.demo.stock.wsUrl}?chainId=8453`)).toEqual({ status: 400, body: 'chainId: chain 8453 is not served by this API' });
    expect(await refusedUpgrade(`${t.demo.stock.wsUrl}?chainId=0x7a69`)).toEqual({ status: 400, body: 'chainId: a positive integer without a leading zero' });
  });
});
