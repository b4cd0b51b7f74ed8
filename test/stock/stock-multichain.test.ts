/**
 * One stock API for two chains (issue 39, docs/stock-api.md "Several chains"): a data directory
 * made by a single-chain start is started again with `EMBEDDED_CHAIN_IDS=31337,31338`, and then
 *
 * - the first chain keeps its data directory, database and every balance and order it had;
 * - the second has its own anvil, deployment record and SQLite file under DATA_DIR/chains/31338,
 *   its own indexer, executor and relayer (an order on each chain fills through its own executor);
 * - a request is served by the venue of its `x-api-chain-id`: nothing of one chain (balance, order,
 *   One Click delegation) is visible on the other;
 * - a key is served on a chain only under a scope for it; an unserved chain, `x-api-p` in the wrong
 *   case and a READ_ONLY scope's POST are the opaque HTTP 400 / code 401; a One Click enable signed
 *   for one chain is refused on the other (the EIP-712 domain carries the chain id).
 *
 * The single-chain start here is this build's; the layout it writes is the one the previous commit
 * wrote (DATA_DIR/anvil-state.json, DATA_DIR/deployments/<id>.json, DATA_DIR/tokex.sqlite), which
 * a multi-chain start leaves where it is.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { StockApiError } from '@tokex/sdk';
import { refusedFor as refusal, send } from '../support/stock-refusals.ts';
import { DEMO_WALLETS } from '../../src/chain/anvil-accounts.ts';
import { until } from '../support/poll.ts';
import { buyOnChain, keyWithScopes, MULTICHAIN_WALLET } from '../support/multichain-stock.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { sandboxClient } from '../sandbox/sandbox-client.ts';

const A = 31337;
const B = 31338;
const ENV = { EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100', CASH_SETTLE_DELAY_MS: '300' };

let dataDir: string;
let t: TestStack;
/** What the single-chain start left: an order filled on chain A and the wallet's balance after it. */
let before: { orderId: string; txHash: Hex; balance: any };

const walletIndex = MULTICHAIN_WALLET;

/** The opaque refusal's cause, from this file's stack logs. */
const refusedFor = (r: { status: number; body: Record<string, unknown> }): string => refusal(r, t.logs);

/** A balance answer without its quotes (`price`), which move between two reads. */
function withoutPrices(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutPrices);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'price').map(([k, x]) => [k, withoutPrices(x)]));
}

const user = () => DEMO_WALLETS[walletIndex].address;

describe.each(stackEngines('mc'))('two embedded chains ($name)', (engine) => {
  let env: Record<string, string> = {};
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-multichain-'));
    // A single-chain deployment with an order filled and a balance.
    env = engine.env();
    const single = await startTestStack({ ...ENV, ...env }, { dataDir });
    expect(single.stack.db.dialect).toBe(engine.name);
    try {
      expect(single.demo.stock.chains.map((c) => c.chainId)).toEqual([A]);
      const k = await keyWithScopes(single, [[A, 'WRITABLE']]);
      const client = single.client(k.apiKey, k.apiSecret);
      const { orderId, txHash, order } = await buyOnChain(single, client, A, '250');
      expect(order.history.status).toBe('FILLED');
      const balance = await client.get<any>(`/api/v1/users/${user()}/balance`);
      before = { orderId, txHash, balance };
    } finally {
      await single.stop();
    }
    t = await startTestStack({ ...ENV, ...env, EMBEDDED_CHAIN_IDS: `${A},${B}` }, { dataDir });
  }, 300_000);

  afterAll(async () => {
    await t?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (env.DATABASE_SCHEMA) {
      // The second chain's schema beside the first's (docs/deployment.md, "Several chains").
      await engine.cleanup?.(env);
      await engine.cleanup?.({ ...env, DATABASE_SCHEMA: `${env.DATABASE_SCHEMA}_c${B}` });
    }
  });

  it('keeps the first chain where a single-chain start put it, and gives the second its own directory, record and database', async () => {
    const sqlite = engine.name === 'sqlite';
    expect(fs.existsSync(path.join(dataDir, 'tokex.sqlite'))).toBe(sqlite);
    expect(fs.existsSync(path.join(dataDir, 'deployments', `${A}.json`))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'anvil-state.json'))).toBe(true);
    const second = path.join(dataDir, 'chains', String(B));
    expect(fs.existsSync(path.join(second, 'tokex.sqlite'))).toBe(sqlite);
    // On PostgreSQL the second chain's tables are in the schema <DATABASE_SCHEMA>_c31338.
    expect(t.stack.chains[1].db.location.schema).toBe(sqlite ? undefined : `${env.DATABASE_SCHEMA}_c${B}`);
    expect(fs.existsSync(path.join(second, 'deployments', `${B}.json`))).toBe(true);
    // The second anvil writes its state file every 2 s of its life: on a loaded machine the first
    // write may come after the stack has started.
    await until(async () => fs.existsSync(path.join(second, 'anvil-state.json')), (x) => x, 30_000);
    expect(fs.existsSync(path.join(dataDir, 'chains', String(A)))).toBe(false);
    expect(t.stack.chains.map((c) => [c.chainId, c.dataDir])).toEqual([
      [A, dataDir],
      [B, second],
    ]);
  });

  it('writes demo.json with both chains, the first also at the top level, and the demo keys scoped for both', async () => {
    expect(t.demo.chainId).toBe(A);
    const [first, second] = t.demo.stock.chains;
    expect(first).toEqual({ chainId: A, rpcUrl: t.demo.rpcUrl, contracts: t.demo.stock.contracts });
    expect(second.chainId).toBe(B);
    expect(second.rpcUrl).not.toBe(first.rpcUrl);
    // The same deployer and the same sequence of deployments on both embedded anvils: the same addresses.
    expect(second.contracts).toEqual(first.contracts);
    const pubB = createPublicClient({ transport: http(second.rpcUrl) });
    expect(await pubB.getChainId()).toBe(B);
    // The demo keys were made by the single-chain start: they gained the second chain's scope.
    expect(t.demo.stock.keys.readOnly.scopes).toEqual([
      { chainId: A, productType: 'STOCK', access: 'READ_ONLY' },
      { chainId: B, productType: 'STOCK', access: 'READ_ONLY' },
    ]);
    expect(t.demo.stock.keys.writable.scopes).toEqual([
      { chainId: A, productType: 'STOCK', access: 'WRITABLE' },
      { chainId: B, productType: 'STOCK', access: 'WRITABLE' },
    ]);
  });

  it('serves the first chain with every balance and order the single-chain start left', async () => {
    const k = await keyWithScopes(t, [[A, 'WRITABLE']]);
    const client = t.client(k.apiKey, k.apiSecret);
    const order = await client.get<any>(`/api/v1/orders/${before.orderId}`);
    expect(order).toMatchObject({ txHash: before.txHash, state: 'history' });
    expect(order.history.status).toBe('FILLED');
    // Every amount as it was (the prices are the live quotes': they moved).
    expect(withoutPrices(await client.get<any>(`/api/v1/users/${user()}/balance`))).toEqual(withoutPrices(before.balance));
  });

  it('answers the price history and the 24-hour figures on the second chain from the one feed, as on the first', async () => {
    const k = await keyWithScopes(t, [[A, 'READ_ONLY'], [B, 'READ_ONLY']]);
    const onA = t.client(k.apiKey, k.apiSecret, { chainId: A });
    const onB = t.client(k.apiKey, k.apiSecret, { chainId: B });
    const endTime = Math.floor(Date.now() / 1000);
    // Closed hours only: the current one moves between the two reads.
    const query = { interval: '1h', endTime: endTime - 3600, limit: 24 };
    const historyA = await onA.get<any>('/api/v1/prices/AAPL/history', query);
    expect(historyA.candles.length).toBeGreaterThan(0);
    expect(await onB.get<any>('/api/v1/prices/AAPL/history', query)).toEqual(historyA);
    // The 24-hour volume is the history's. Its window slides every minute, so the two reads are
    // taken again until they fall within one (without the one feed's history B's are all zero).
    const volumes = (rows: Array<{ symbol: string; volume24H: string }>) => rows.map((r) => [r.symbol, r.volume24H]);
    const [volumesA, volumesB] = await until(
      async () => [volumes(await onA.get<any>('/api/v1/symbols')), volumes(await onB.get<any>('/api/v1/symbols'))],
      ([a, b]) => JSON.stringify(a) === JSON.stringify(b),
      20_000,
    ).catch(async () => [volumes(await onA.get<any>('/api/v1/symbols')), volumes(await onB.get<any>('/api/v1/symbols'))]);
    expect(volumesA.some(([, v]) => v !== '0')).toBe(true);
    expect(volumesB).toEqual(volumesA);
  });

  it('fills an order on each chain through that chain\'s own executor, and shows neither on the other chain', async () => {
    const k = await keyWithScopes(t, [[A, 'WRITABLE'], [B, 'WRITABLE']]);
    const onA = t.client(k.apiKey, k.apiSecret, { chainId: A });
    const onB = t.client(k.apiKey, k.apiSecret, { chainId: B });
    // Nothing on B yet: the wallet's stock position from chain A is not there.
    const balanceB0 = await onB.get<any>(`/api/v1/users/${user()}/balance`);
    const balanceA0 = await onA.get<any>(`/api/v1/users/${user()}/balance`);
    expect(balanceB0).not.toEqual(balanceA0);

    const b = await buyOnChain(t, onB, B, '100');
    expect(b.order.history.status).toBe('FILLED');
    const a = await buyOnChain(t, onA, A, '50');
    expect(a.order.history.status).toBe('FILLED');
    // Each fill was settled on its own chain, by the executor (anvil account 8) of that chain.
    for (const [chainId, hash] of [[B, b.txHash], [A, a.txHash]] as const) {
      const rpcUrl = t.demo.stock.chains.find((c) => c.chainId === chainId)!.rpcUrl;
      const pub = createPublicClient({ transport: http(rpcUrl) });
      expect((await pub.getTransactionReceipt({ hash })).status).toBe('success');
      await expect(createPublicClient({ transport: http(t.demo.stock.chains.find((c) => c.chainId !== chainId)!.rpcUrl) }).getTransactionReceipt({ hash })).rejects.toThrow();
    }

    // Each chain's list of the key's orders holds its own order only.
    const listA = await onA.get<any>('/api/v1/orders?limit=50&page=1');
    const listB = await onB.get<any>('/api/v1/orders?limit=50&page=1');
    const hashes = (l: { rows: Array<{ txHash: string }> }) => l.rows.map((o) => o.txHash);
    // The bound wallet's orders on A: this one and the single-chain start's; never B's.
    expect(hashes(listA)).toEqual([a.txHash, before.txHash]);
    expect(hashes(listB)).toEqual([b.txHash]);
    // B's order read on A: A's order of that id (the first chain's, from the single-chain start), never B's.
    const seenOnA = await onA.request<any>('GET', `/api/v1/orders/${b.orderId}`);
    if (seenOnA.code === 200) expect((seenOnA.data as any).txHash).not.toBe(b.txHash);
    const balanceB1 = await onB.get<any>(`/api/v1/users/${user()}/balance`);
    const balanceA1 = await onA.get<any>(`/api/v1/users/${user()}/balance`);
    expect(balanceB1).not.toEqual(balanceB0);
    expect(balanceA1).not.toEqual(balanceA0);
    expect(balanceA1).not.toEqual(balanceB1);
  });

  it('refuses a key on a chain it has no scope for, an unserved chain, x-api-p in the wrong case and a READ_ONLY scope\'s POST: the opaque 400/401', async () => {
    const onlyA = await keyWithScopes(t, [[A, 'WRITABLE']]);
    expect((await t.client(onlyA.apiKey, onlyA.apiSecret, { chainId: A }).request('GET', '/api/v1/symbols')).code).toBe(200);
    const aOnB = t.client(onlyA.apiKey, onlyA.apiSecret, { chainId: B });
    expect(refusedFor(await send(aOnB.sign('GET', '/api/v1/symbols')))).toBe('api key has no scope for this chain and product');
    expect(refusedFor(await send(aOnB.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })))).toBe('api key has no scope for this chain and product');

    const both = await keyWithScopes(t, [[A, 'WRITABLE'], [B, 'READ_ONLY']]);
    const unserved = t.client(both.apiKey, both.apiSecret, { chainId: 8453 });
    expect(refusedFor(await send(unserved.sign('GET', '/api/v1/symbols')))).toBe('x-api-chain-id does not match the service');
    const wrongCase = t.client(both.apiKey, both.apiSecret, { chainId: B, product: 'stock' });
    expect(refusedFor(await send(wrongCase.sign('GET', '/api/v1/symbols')))).toBe('x-api-p does not match the service (case-sensitive)');
    const readOnB = t.client(both.apiKey, both.apiSecret, { chainId: B });
    expect((await readOnB.request('GET', '/api/v1/symbols')).code).toBe(200);
    expect(refusedFor(await send(readOnB.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })))).toBe('READ_ONLY scope on a write method');
    const deadline = Math.floor(Date.now() / 1000) + 600;
    expect(refusedFor(await send(readOnB.sign('POST', '/api/v1/1ct/prepare', { body: { deadline } })))).toBe('READ_ONLY scope on a write method');

    // The signature does not cover x-api-chain-id: a request seen on A, replayed with B's header, is
    // refused because the key's nonces are one set across chains.
    const seen = t.client(both.apiKey, both.apiSecret, { chainId: A }).sign('GET', '/api/v1/symbols');
    expect((await send(seen)).status).toBe(200);
    const replayed = { ...seen, headers: { ...seen.headers, 'x-api-chain-id': String(B) } };
    expect(refusedFor(await send(replayed))).toBe('nonce reused');
    // The same key writes on A, where its scope is WRITABLE.
    expect((await t.client(both.apiKey, both.apiSecret, { chainId: A }).request('POST', '/api/v1/1ct/prepare', { body: { deadline } })).code).toBe(200);
  });

  it('refuses a One Click enable signed for chain A when sent with chain B\'s header, and keeps the delegations apart', async () => {
    const k = await keyWithScopes(t, [[A, 'WRITABLE'], [B, 'WRITABLE']]);
    const onA = t.client(k.apiKey, k.apiSecret, { chainId: A });
    const onB = t.client(k.apiKey, k.apiSecret, { chainId: B });
    const account = privateKeyToAccount(t.demo.wallets[walletIndex].privateKey);
    const deadline = Math.floor(Date.now() / 1000) + 600;
    const prepA = await onA.post<any>('/api/v1/1ct/prepare', { deadline });
    expect(prepA.signPayload.domain.chainId).toBe(A);
    const prepB = await onB.post<any>('/api/v1/1ct/prepare', { deadline });
    expect(prepB.signPayload.domain.chainId).toBe(B);
    const signedForA = await account.signTypedData(prepA.signPayload);
    let refused: StockApiError | undefined;
    try {
      await onB.post('/api/v1/1ct/enable', { signature: signedForA, deadline });
    } catch (err) {
      if (!(err instanceof StockApiError)) throw err;
      refused = err;
    }
    expect(refused, 'the enable signed for A is refused on B').toBeDefined();
    expect([refused!.httpStatus, refused!.code]).toEqual([400, 400]);
    expect(refused!.message).toContain('signed by another wallet or over a payload altered after 1ct/prepare');
    expect(await onB.get<any>('/api/v1/1ct/status')).toMatchObject({ delegationStatus: 'disabled' });

    // Enabled on A with A's signature: A's delegation only.
    await onA.post('/api/v1/1ct/enable', { signature: signedForA, deadline });
    await until(() => onA.get<any>('/api/v1/1ct/status'), (s) => s.delegationStatus === 'enabled', 30_000);
    expect(await onB.get<any>('/api/v1/1ct/status')).toMatchObject({ delegationStatus: 'disabled' });
  });

  it('reports each chain\'s readiness in /readyz, the second chain under its id', async () => {
    const origin = new URL(t.stack.stockBaseUrl!).origin;
    const body = await until(
      async () => (await (await fetch(`${origin}/readyz`)).json()) as any,
      (b) => b.data?.status === 'ready' && b.data?.chains?.[0]?.status === 'ready',
      30_000,
    );
    expect(body.data.chains.map((c: any) => c.chainId)).toEqual([B]);
    expect(body.data.chains[0].roles.map((r: any) => [r.role, r.state, r.lease])).toEqual([
      ['indexer', 'fresh', 'held'],
      ['executor', 'fresh', 'held'],
      ['relayer', 'fresh', 'held'],
    ]);
    // The metrics say the same by chain id; the first chain's roles keep their own series.
    const metrics = await (await fetch(t.stack.metricsUrl!)).text();
    for (const role of ['indexer', 'executor', 'relayer']) {
      expect(metrics, role).toContain(`tokex_chain_role_lease_held{chain_id="${B}",role="${role}"} 1`);
      expect(metrics, role).toMatch(new RegExp(`^tokex_chain_role_progress_age_seconds\\{chain_id="${B}",role="${role}"\\} \\d`, 'm'));
      expect(metrics, role).toContain(`tokex_role_lease_held{role="${role}"} 1`);
    }
    // The second chain's stock indexer lag, by chain id, beside the first chain's own series.
    const lag = new RegExp(`^tokex_chain_indexer_lag_blocks\\{chain_id="${B}"\\} (\\S+)$`, 'm').exec(metrics);
    expect(lag, 'tokex_chain_indexer_lag_blocks of chain B').not.toBeNull();
    expect(Number.isFinite(Number(lag![1])) && Number(lag![1]) >= 0, `lag ${lag![1]}`).toBe(true);
    expect(metrics).toMatch(/^tokex_indexer_lag_blocks\{indexer="indexer"\} \d/m);
    // Only the chain clock's skew is by chain id for every chain, the first included (docs/operations.md).
    const firstByChainId = metrics.split('\n').filter((l) => l.includes(`chain_id="${A}"`));
    expect(firstByChainId.map((l) => l.split('{')[0])).toEqual(['tokex_chain_clock_skew_seconds']);
  });

  // The embedded sandbox (no database of one's own): its clock moves every chain of the venue.
  if (engine.name === 'sqlite') {
    it('moves both chains with a sandbox clock advance: each chain mined at the venue\'s new time', async () => {
      const sb = sandboxClient(t);
      const chainTime = async (rpcUrl: string) => Number((await createPublicClient({ transport: http(rpcUrl) }).getBlock({ blockTag: 'latest' })).timestamp);
      const urls = t.demo.stock.chains.map((c) => c.rpcUrl);
      expect(urls).toHaveLength(2);
      const answer = await sb.ok('POST', '/clock/advance', { seconds: 7_200 });
      for (const url of urls) expect(await chainTime(url), url).toBeGreaterThanOrEqual(Math.floor(answer.to / 1000) - 1);
      // And the second chain's venue goes on: its executor fresh on its moved chain.
      const origin = new URL(t.stack.stockBaseUrl!).origin;
      await until(async () => (await (await fetch(`${origin}/readyz`)).json()) as any, (b) => b.data?.chains?.[0]?.status === 'ready', 60_000);
    });
  }
});
