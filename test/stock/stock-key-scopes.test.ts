/**
 * Scoped stock keys (issue 39, docs/api-keys-secrets.md "Stock key scopes") against the real
 * stack over HTTP: a key holds scopes `(chainId, productType, access)` and a request is served only
 * under the scope of its `x-api-chain-id` and `x-api-p`, which must be the chain and product this
 * deployment serves. Every refusal is the seed's opaque HTTP 400 / code 401, its cause in the log
 * under the answer's uuid; the keys are made and changed with `tokex keys` as an operator would.
 */
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { StockClient } from '@tokex/sdk';
import { refusedFor as refusal, send } from '../support/stock-refusals.ts';
import { until } from '../support/poll.ts';
import { openSocket } from '../support/ws-client.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

const run = promisify(execFile);
let t: TestStack;
/** The served chain and product, as a scope string's first two parts: `31337:STOCK`. */
let served: string;
/** A chain this deployment does not serve. */
const OTHER_CHAIN = 8453;

beforeAll(async () => {
  t = await startTestStack({ EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100' });
  served = `${t.demo.chainId}:${t.demo.stock.product}`;
});
afterAll(async () => {
  await t?.stop();
});

/** `tokex …` against the stack's data directory; rejects with stderr on a non-zero exit. */
async function tokex(args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  const { stdout } = await run(process.execPath, ['bin/tokex.mjs', ...args], { env });
  return stdout;
}

/** A key made with `tokex keys create --scope …`, whitelisted for this machine; answers its client on the served chain. */
async function keyWith(scopes: string[], extra: string[] = []): Promise<{ apiKey: string; apiSecret: string; client: StockClient; created: any }> {
  const created = JSON.parse(await tokex(['keys', 'create', ...scopes.flatMap((s) => ['--scope', s]), '--ip', '127.0.0.1,::1', ...extra, '--json']));
  return { apiKey: created.apiKey, apiSecret: created.apiSecret, client: t.client(created.apiKey, created.apiSecret), created };
}

/** The opaque refusal's cause, from this file's stack logs. */
const refusedFor = (r: { status: number; body: Record<string, unknown> }): string => refusal(r, t.logs);

describe('tokex keys with scopes', () => {
  it('creates a key of several scopes, shows them, adds and removes scopes, and refuses removing the last', async () => {
    const { apiKey, created } = await keyWith([`${served}:WRITABLE`, `${OTHER_CHAIN}:Anchored:READ_ONLY`], ['--label', 'two chains']);
    expect(created).toMatchObject({
      api: 'stock',
      scopes: [
        { chainId: t.demo.chainId, productType: t.demo.stock.product, access: 'WRITABLE' },
        { chainId: OTHER_CHAIN, productType: 'Anchored', access: 'READ_ONLY' },
      ],
      // The fields of keys made before scopes: the first scope's.
      chainId: t.demo.chainId,
      product: t.demo.stock.product,
      permission: 'WRITABLE',
      permissions: ['WRITABLE'],
    });
    const shown = await tokex(['keys', 'show', apiKey]);
    expect(shown).toMatch(new RegExp(`^scope +${served}:WRITABLE,${OTHER_CHAIN}:Anchored:READ_ONLY$`, 'm'));
    const listed = (JSON.parse(await tokex(['keys', 'list', '--json'])) as any[]).find((k) => k.apiKey === apiKey);
    expect(listed.scopes).toEqual(created.scopes);
    // The operator page's state (the one HTTP endpoint that shows stock keys) answers them too.
    const ops = await fetch(`${new URL(t.stack.stockBaseUrl!).origin}/console/ops/state`);
    expect(ops.status).toBe(200);
    const row = ((await ops.json()) as { data: { keys: any[] } }).data.keys.find((k) => k.apiKey === apiKey);
    expect(row).toMatchObject({ api: 'stock', permissions: ['WRITABLE'], scopes: created.scopes });

    const added = JSON.parse(await tokex(['keys', 'update', apiKey, '--add-scope', '1:Anchored:READ_ONLY', '--remove-scope', `${OTHER_CHAIN}:Anchored:READ_ONLY`, '--json']));
    expect(added.scopes).toEqual([
      { chainId: t.demo.chainId, productType: t.demo.stock.product, access: 'WRITABLE' },
      { chainId: 1, productType: 'Anchored', access: 'READ_ONLY' },
    ]);
    const one = JSON.parse(await tokex(['keys', 'update', apiKey, '--remove-scope', '1:Anchored:READ_ONLY', '--json']));
    expect(one.scopes).toEqual([{ chainId: t.demo.chainId, productType: t.demo.stock.product, access: 'WRITABLE' }]);

    // Bad input: removing the last scope. The key is left as it was.
    await expect(tokex(['keys', 'update', apiKey, '--remove-scope', `${served}:WRITABLE`])).rejects.toMatchObject({
      stderr: 'error: removeScopes: a stock key keeps at least one scope: add another in the same update, or revoke the key\n',
    });
    expect(JSON.parse(await tokex(['keys', 'show', apiKey, '--json'])).scopes).toEqual(one.scopes);
    // …and one it does not hold.
    await expect(tokex(['keys', 'update', apiKey, '--remove-scope', `${OTHER_CHAIN}:Anchored:READ_ONLY`])).rejects.toMatchObject({
      stderr: `error: removeScopes: the key holds no scope ${OTHER_CHAIN}:Anchored:READ_ONLY (it holds ${served}:WRITABLE)\n`,
    });
  });

  it('refuses a scope string that does not parse at keys create, naming the option and why, and creates nothing', async () => {
    const before = (JSON.parse(await tokex(['keys', 'list', '--json'])) as any[]).length;
    // Each reason of the parser is checked in test/contract/stock-key-scopes.test.ts; here, that the
    // CLI refuses with it, for a malformed string and for a bad access (a CLI run each: seconds).
    const cases: Array<[string, string]> = [
      ['8453:Anchored', 'error: --scope: "8453:Anchored" is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE\n'],
      ['8453:Anchored:writable', 'error: --scope: "8453:Anchored:writable": unknown access "writable": must be READ_ONLY or WRITABLE\n'],
    ];
    for (const [scope, stderr] of cases) {
      await expect(tokex(['keys', 'create', '--scope', scope, '--ip', '127.0.0.1']), scope).rejects.toMatchObject({ stderr });
    }
    // Two accesses for one chain and product, and --scope mixed with the fields it replaces.
    await expect(tokex(['keys', 'create', '--scope', '8453:Anchored:WRITABLE', '--scope', '8453:Anchored:READ_ONLY'])).rejects.toMatchObject({
      stderr: 'error: scopes: more than one scope for chain 8453 product Anchored: a key holds one access per chain and product\n',
    });
    await expect(tokex(['keys', 'create', '--scope', '8453:Anchored:WRITABLE', '--permission', 'READ_ONLY'])).rejects.toMatchObject({
      stderr: 'error: scopes: give scopes, or permissions, not both\n',
    });
    expect((JSON.parse(await tokex(['keys', 'list', '--json'])) as any[]).length).toBe(before);
  });

  it('without --scope makes the one scope of the served chain and product with the given permission, as before', async () => {
    const created = JSON.parse(await tokex(['keys', 'create', '--permission', 'WRITABLE', '--ip', '127.0.0.1,::1', '--json']));
    expect(created).toMatchObject({ permission: 'WRITABLE', scopes: [{ chainId: t.demo.chainId, productType: t.demo.stock.product, access: 'WRITABLE' }] });
    // demo.json's keys hold the served chain's scope too.
    expect(t.demo.stock.keys.readOnly.scopes).toEqual([{ chainId: t.demo.chainId, productType: t.demo.stock.product, access: 'READ_ONLY' }]);
    expect(t.demo.stock.keys.writable.scopes).toEqual([{ chainId: t.demo.chainId, productType: t.demo.stock.product, access: 'WRITABLE' }]);
  });
});

describe('authentication under scopes', () => {
  it('refuses a chain id this deployment does not serve, even to a key holding a WRITABLE scope for it', async () => {
    const { apiKey, apiSecret, client } = await keyWith([`${OTHER_CHAIN}:${t.demo.stock.product}:WRITABLE`, `${served}:WRITABLE`]);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(200);
    const elsewhere = t.client(apiKey, apiSecret, { chainId: OTHER_CHAIN });
    expect(refusedFor(await send(elsewhere.sign('GET', '/api/v1/symbols')))).toBe('x-api-chain-id does not match the service');
    expect(refusedFor(await send(elsewhere.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })))).toBe('x-api-chain-id does not match the service');
  });

  it('refuses a key with no scope for the served chain, however much it may do elsewhere', async () => {
    const { client } = await keyWith([`${OTHER_CHAIN}:${t.demo.stock.product}:WRITABLE`, `1:${t.demo.stock.product}:WRITABLE`]);
    expect(refusedFor(await send(client.sign('GET', '/api/v1/symbols')))).toBe('api key has no scope for this chain and product');
    expect(refusedFor(await send(client.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })))).toBe('api key has no scope for this chain and product');
  });

  it("refuses a READ_ONLY scope's POST and DELETE, even when the key may write on another chain", async () => {
    const { client } = await keyWith([`${OTHER_CHAIN}:${t.demo.stock.product}:WRITABLE`, `${served}:READ_ONLY`]);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(200);
    expect(refusedFor(await send(client.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })))).toBe('READ_ONLY scope on a write method');
    expect(refusedFor(await send(client.sign('DELETE', '/api/v1/orders/1/calldata')))).toBe('READ_ONLY scope on a write method');
  });

  it('refuses x-api-p in the wrong case, even to a key holding a scope for that spelling', async () => {
    const lower = t.demo.stock.product.toLowerCase();
    expect(lower).not.toBe(t.demo.stock.product);
    const { apiKey, apiSecret, client } = await keyWith([`${t.demo.chainId}:${lower}:WRITABLE`, `${served}:READ_ONLY`]);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(200);
    const wrongCase = t.client(apiKey, apiSecret, { product: lower });
    expect(refusedFor(await send(wrongCase.sign('GET', '/api/v1/symbols')))).toBe('x-api-p does not match the service (case-sensitive)');
    // The scope of the served spelling is READ_ONLY: the lower-case WRITABLE one never applies here.
    expect(refusedFor(await send(client.sign('POST', '/api/v1/orders/calldata', { body: { symbol: 'AAPL' } })))).toBe('READ_ONLY scope on a write method');
  });

  it('authenticates a stream under a scope of either access for the served chain and product, and refuses a key with none', async () => {
    const auth = (k: { apiKey: string; apiSecret: string }, id: string) => {
      const ts = Date.now();
      const nonce = randomUUID();
      const sign = createHmac('sha256', k.apiSecret).update(['GET', '/api/v1/ws', String(ts), nonce, ''].join('\n')).digest('hex');
      return { op: 'auth', id, apiKey: k.apiKey, ts, nonce, sign };
    };
    const reader = await keyWith([`${OTHER_CHAIN}:Anchored:WRITABLE`, `${served}:READ_ONLY`]);
    const stranger = await keyWith([`${OTHER_CHAIN}:${t.demo.stock.product}:WRITABLE`]);
    const s = await openSocket(t.demo.stock.wsUrl);
    try {
      s.send(auth(stranger, 'stranger'));
      expect(await s.next((f) => f.id === 'stranger')).toMatchObject({ type: 'error', code: 401, msg: 'Unauthorized' });
      s.send(auth(reader, 'reader'));
      expect(await s.next((f) => f.id === 'reader')).toMatchObject({ type: 'authenticated' });
    } finally {
      s.close();
    }
  });

  it('applies the IP whitelist to every scope of the key', async () => {
    const k = await keyWith([`${OTHER_CHAIN}:Anchored:WRITABLE`, `${served}:WRITABLE`]);
    expect((await k.client.request('GET', '/api/v1/symbols')).code).toBe(200);
    await tokex(['keys', 'update', k.apiKey, '--ip', '10.9.8.7']);
    expect(refusedFor(await send(k.client.sign('GET', '/api/v1/symbols')))).toMatch(/^peer \S+ not in whitelist$/);
  });
});

describe('a key of two scopes', () => {
  it('trades on the served chain under its WRITABLE scope: a market buy with deposit, filled', async () => {
    const w = t.demo.wallets[3];
    const { client } = await keyWith([`${served}:WRITABLE`, `${OTHER_CHAIN}:Anchored:READ_ONLY`], ['--user-address', w.address]);
    const chain = { id: t.demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [t.demo.rpcUrl] } } };
    const wallet = testWallet(w.privateKey, chain, t.demo.rpcUrl);
    const pub = createPublicClient({ chain, transport: http(t.demo.rpcUrl) });
    const c = t.demo.stock.contracts;
    await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });

    const cd = await client.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/with-deposit/calldata', {
      symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '250', tokenAmount: '250', deadline: Math.floor(Date.now() / 1000) + 3600,
    });
    expect(cd.toAddress).toBe(c.stockRouter);
    const txHash = await wallet.sendTransaction({ to: cd.toAddress, data: cd.callData });
    expect((await pub.waitForTransactionReceipt({ hash: txHash })).status).toBe('success');
    const rec = await client.post<{ orderId: string }>('/api/v1/orders/tx', { txHash });
    expect(rec.orderId).toMatch(/^\d+$/);
    const order = await until(() => client.get<any>(`/api/v1/orders/${rec.orderId}`), (o) => o.state === 'history');
    expect(order).toMatchObject({ side: 'Buy', type: 'Market', txHash, userAddress: w.address.toLowerCase() });
    expect(order.history.status).toBe('FILLED');
  });
});
