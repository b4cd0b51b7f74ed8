/**
 * A stalled chain halts only its own venue (issue 39, docs/deployment.md "Several chains"): two
 * external chains (`STOCK_CHAINS=31337,31338`, each an anvil of this test's at `RPC_URL` and
 * `RPC_URL_31338`); the second's node is paused with SIGSTOP (it accepts connections and never
 * answers). `/readyz` stays 200 and names chain 31338 with its stale roles, while an order on the
 * first chain is placed and filled; SIGCONT brings the second chain back to ready. Then a start
 * with the second chain's node not answering at all starts the first chain, names the second in
 * `/readyz` and refuses its requests (the opaque 401, the cause logged); once that node answers, the
 * second chain starts in the background without a restart and the API serves it.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { until } from '../support/poll.ts';
import { openSocket, refusedUpgrade } from '../support/ws-client.ts';
import { stockStreamAuthFrame } from '../support/multichain-stock.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

const A = 31337;
const B = 31338;
const STALE_MS = 3_000;
let anvilA: AnvilHandle;
let anvilB: AnvilHandle;
let t: TestStack;
let paused = false;
let restarted: TestStack | undefined;
let stateDir: string;

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Ready {
  status: number;
  body: { code: number; errMsg: string; data: { status: string; summary?: string; chains?: Array<{ chainId: number; status: string; summary?: string; roles: Array<{ role: string; state: string }> }> } };
}

async function readyz(): Promise<Ready> {
  const res = await fetch(`${new URL(t.stack.stockBaseUrl!).origin}/readyz`);
  return { status: res.status, body: (await res.json()) as Ready['body'] };
}

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-mc-pause-'));
  stateDir = dir;
  anvilA = await startAnvil({ port: 0, chainId: A, stateFile: path.join(dir, 'a.json') });
  anvilB = await startAnvil({ port: 0, chainId: B, stateFile: path.join(dir, 'b.json') });
  t = await startTestStack({
    STOCK_CHAINS: `${A},${B}`,
    RPC_URL: anvilA.rpcUrl,
    [`RPC_URL_${B}`]: anvilB.rpcUrl,
    OPERATOR_PRIVATE_KEY: ANVIL_ACCOUNTS[9].privateKey,
    DEMO_MODE: 'true',
    READINESS_STALE_MS: String(STALE_MS),
    STATUS_PUBLISH_MS: '250',
    EXECUTOR_TICK_MS: '200',
    INDEXER_POLL_MS: '100',
  });
}, 240_000);

afterAll(async () => {
  if (paused) process.kill(anvilB.pid, 'SIGCONT');
  await t?.stop();
  if (restarted !== t) await restarted?.stop();
  await anvilA?.stop();
  await anvilB?.stop();
});

it('a paused second chain is named by /readyz, which stays 200, and the first chain trades on', async () => {
  expect(t.demo.stock.chains.map((c) => [c.chainId, c.rpcUrl])).toEqual([
    [A, anvilA.rpcUrl],
    [B, anvilB.rpcUrl],
  ]);
  const ready = await until(readyz, (r) => r.status === 200 && r.body.data.chains?.[0]?.status === 'ready', 60_000);
  expect(ready.body.data.summary).toBe('');

  process.kill(anvilB.pid, 'SIGSTOP');
  paused = true;
  const down = await until(readyz, (r) => r.body.data.chains?.[0]?.status === 'not_ready' && /indexer/.test(r.body.data.chains[0].summary ?? '') && /executor/.test(r.body.data.chains[0].summary ?? ''), 60_000);
  // The API stays in rotation: the first chain is ready and says which chain is not.
  expect(down.status).toBe(200);
  expect(down.body.data.status).toBe('ready');
  expect(down.body.data.summary).toMatch(/^chain 31338 not ready: (indexer|executor) stale for \d+ s, (indexer|executor) stale for \d+ s$/);
  expect(down.body.data.chains![0].roles.filter((r) => r.state !== 'fresh').map((r) => r.role).sort()).toEqual(['executor', 'indexer']);

  // The first chain trades meanwhile: a market buy with deposit, filled by its own executor.
  const w = t.demo.wallets[3];
  const chain = { id: A, name: 'a', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvilA.rpcUrl] } } };
  const pub = createPublicClient({ chain, transport: http(anvilA.rpcUrl) });
  const wallet = testWallet(w.privateKey, chain, anvilA.rpcUrl);
  const c = t.demo.stock.contracts;
  const made = await t.stack.keys.create({ scopes: [{ chainId: A, productType: 'STOCK', access: 'WRITABLE' }, { chainId: B, productType: 'STOCK', access: 'WRITABLE' }], ipWhitelist: ['127.0.0.1', '::1'], userAddress: w.address });
  const onA = t.client(made.key.apiKey, made.apiSecret, { chainId: A });
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
  const cd = await onA.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/with-deposit/calldata', {
    symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', tokenAmount: '100', deadline: Math.floor(Date.now() / 1000) + 3600,
  });
  const txHash = await wallet.sendTransaction({ to: cd.toAddress, data: cd.callData });
  expect((await pub.waitForTransactionReceipt({ hash: txHash })).status).toBe('success');
  const rec = await onA.post<{ orderId: string }>('/api/v1/orders/tx', { txHash });
  const order = await until(() => onA.get<any>(`/api/v1/orders/${rec.orderId}`), (o) => o.state === 'history', 60_000);
  expect(order.history.status).toBe('FILLED');
  // The paused chain's reads that need its node answer the documented chain-unavailable 503 (or a
  // cached answer), nothing else.
  const onB = t.client(made.key.apiKey, made.apiSecret, { chainId: B });
  const balanceB = await onB.request('GET', `/api/v1/users/${w.address}/balance`);
  if (balanceB.code !== 200) expect(balanceB).toMatchObject({ httpStatus: 503, code: 503, errMsg: 'chain: RPC unavailable, try again later' });

  process.kill(anvilB.pid, 'SIGCONT');
  paused = false;
  const back = await until(readyz, (r) => r.body.data.chains?.[0]?.status === 'ready', 60_000);
  expect(back.status).toBe(200);
  expect(back.body.data.summary).toBe('');
  expect((await onB.request('GET', `/api/v1/users/${w.address}/balance`)).code).toBe(200);
}, 240_000);

it("starts the first chain when the second chain's node does not answer at start, naming it in /readyz and refusing its requests, and serves the second once its node answers, without a restart", async () => {
  const dataDir = t.dataDir;
  await t.stop();
  const deadPort = await closedPort();
  const dead = `http://127.0.0.1:${deadPort}`;
  restarted = await startTestStack(
    {
      STOCK_CHAINS: `${A},${B}`,
      RPC_URL: anvilA.rpcUrl,
      [`RPC_URL_${B}`]: dead,
      OPERATOR_PRIVATE_KEY: ANVIL_ACCOUNTS[9].privateKey,
      DEMO_MODE: 'true',
      READINESS_STALE_MS: String(STALE_MS),
      STATUS_PUBLISH_MS: '250',
    },
    { dataDir },
  );
  const r = restarted;
  expect(r.stack.chains.map((c) => c.chainId)).toEqual([A]);
  expect(r.stack.unstartedChains.map((c) => c.chainId)).toEqual([B]);
  expect(r.logs.some((l) => l.includes(`chain ${B} did not start: tried again every 10 s until its node answers`))).toBe(true);
  t = r;
  const res = await until(readyz, (x) => x.status === 200, 60_000);
  expect(res.body.data.chains).toEqual([{ chainId: B, status: 'not_ready', summary: expect.stringMatching(/^did not start \(.+\); served once its node answers \(tried again every 10 s\)$/), roles: [] }]);
  expect(res.body.data.summary).toMatch(/^chain 31338 not ready: did not start/);
  const made = await r.stack.keys.create({ scopes: [{ chainId: A, productType: 'STOCK', access: 'READ_ONLY' }, { chainId: B, productType: 'STOCK', access: 'READ_ONLY' }], ipWhitelist: ['127.0.0.1', '::1'] });
  expect((await r.client(made.key.apiKey, made.apiSecret, { chainId: A }).request('GET', '/api/v1/symbols')).code).toBe(200);
  const onB = await r.client(made.key.apiKey, made.apiSecret, { chainId: B }).request('GET', '/api/v1/symbols');
  expect([onB.httpStatus, onB.code]).toEqual([400, 401]);
  const line = r.logs.find((l) => l.includes(String(onB.uuid)) && l.includes('authentication failed'));
  expect(JSON.parse(line!).reason).toBe(`chain ${B} did not start (its node did not answer): served once its node answers`);
  // Its streams likewise: the upgrade naming it is refused, saying why.
  const wsUrl = r.demo.stock.wsUrl;
  expect(await refusedUpgrade(`${wsUrl}?chainId=${B}`)).toEqual({ status: 400, body: `chainId: chain ${B} did not start (its node did not answer): served once its node answers` });

  // The node comes up (the second chain's anvil, its state and so its contracts as they were, on the
  // port the stack was given): without a restart, the chain starts, its roles run and the API serves it.
  const failedTries = r.logs.filter((l) => l.includes(`chain ${B} still did not start`)).length;
  await anvilB.stop();
  anvilB = await startAnvil({ port: deadPort, chainId: B, stateFile: path.join(stateDir, 'b.json') });
  const up = await until(readyz, (x) => x.body.data.chains?.[0]?.status === 'ready', 90_000);
  expect(up.status).toBe(200);
  expect(up.body.data.summary).toBe('');
  expect(r.stack.unstartedChains).toEqual([]);
  expect(r.stack.chains.map((c) => c.chainId)).toEqual([A, B]);
  expect(r.logs.filter((l) => l.includes(`chain ${B} started: its node answers`))).toHaveLength(1);
  // Logged once per change, not once per try: the same refusal each time adds no line.
  expect(r.logs.filter((l) => l.includes(`chain ${B} still did not start`)).length).toBe(failedTries);
  const served = await r.client(made.key.apiKey, made.apiSecret, { chainId: B }).request('GET', '/api/v1/symbols');
  expect([served.httpStatus, served.code]).toEqual([200, 200]);
  const w = r.demo.wallets[3];
  const writable = await r.stack.keys.create({ scopes: [{ chainId: B, productType: 'STOCK', access: 'WRITABLE' }], ipWhitelist: ['127.0.0.1', '::1'], userAddress: w.address });
  const onBNow = r.client(writable.key.apiKey, writable.apiSecret, { chainId: B });
  expect((await onBNow.request('GET', `/api/v1/users/${w.address}/balance`)).code).toBe(200);
  // Its venue is the one its record names (the same addresses as the first chain's: docs/contracts.md).
  expect(r.stack.chains[1].deployment.contracts.stockRouter).toBe(r.stack.chains[0].deployment.contracts.stockRouter);
  expect((await onBNow.request('POST', '/api/v1/1ct/prepare', { body: { deadline: Math.floor(Date.now() / 1000) + 600 } })).code).toBe(200);
  // And its streams, without a restart: a public channel by the URL, and an auth naming chain B.
  const socket = await openSocket(`${wsUrl}?chainId=${B}`);
  try {
    socket.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
    expect(await socket.next((f) => f.type === 'subscribed' && f.id === 'q')).toMatchObject({ channel: 'quotes', symbol: 'AAPL', data: { symbol: 'AAPL' } });
    socket.send(stockStreamAuthFrame({ apiKey: writable.key.apiKey, apiSecret: writable.apiSecret }, { chainId: B }));
    expect(await socket.next((f) => f.type === 'authenticated')).toMatchObject({ account: w.address.toLowerCase() });
  } finally {
    socket.close();
  }
}, 240_000);
