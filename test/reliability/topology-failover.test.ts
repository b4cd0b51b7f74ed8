/**
 * The scale-out topology as real processes on PostgreSQL, Redis and an external chain: two worker
 * processes each running every singleton role (market data, indexer, executor, relayer, perp
 * engine) under leases, two stock APIs and two perp APIs. The stock and perpetual flows run through
 * alternating API instances; the lease holder is killed with SIGKILL in the middle of them, twice
 * (each worker in turn), and the flows finish on the stand-by with nothing lost or done twice:
 * every order filled once, every withdrawal paid once, and the chain agrees.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, parseAbi, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpClient, StockClient } from '@tokex/sdk';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { DEMO_WALLETS } from '../../src/chain/anvil-accounts.ts';
import type { DemoFile } from '../../src/app/demo-file.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { readLease } from '../../src/storage/lease-store.ts';
import { uniqueSchemaName } from '../support/test-databases.ts';
import { roleProcessEnv, startRoleProcess, type RoleProcess } from '../support/role-process.ts';
import { fractionOnTick } from '../support/perp-prices.ts';
import { testWallet } from '../support/chain-fixture.ts';
import { dropRedisKeys } from '../support/redis-keys.ts';

const ENABLED = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const SINGLETONS = ['marketdata', 'indexer', 'executor', 'relayer', 'perp-engine'] as const;
const WORKER_ROLES = SINGLETONS.join(',');
// The default TTL. A take-over after a SIGKILL does not wait for it (a holder process gone on this
// host is taken at the stand-by's next look, every TTL/5), but a holder stalled for TTL/2 loses its
// lease: at 2 s, a worker stalled for 1 s on a loaded machine could lose its leases before the kill,
// and the checks of who holds what before and after each kill would fail for the machine's sake.
const LEASE_TTL_MS = 10_000;

let anvil: AnvilHandle;
let dataDir: string;
let db: Db;
const schema = uniqueSchemaName('topo');
const prefix = `test-topo-${process.pid}-${Date.now().toString(36)}`;
const processes: RoleProcess[] = [];
let env: NodeJS.ProcessEnv;

async function start(roles: string, label: string, extra: NodeJS.ProcessEnv = {}): Promise<RoleProcess> {
  const p = await startRoleProcess(roles, { ...env, ...extra }, label);
  processes.push(p);
  return p;
}

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, limitMs = 90_000): Promise<T> {
  const deadline = performance.now() + limitMs;
  let last: T | undefined;
  for (;;) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (err) {
      // An instance answering 503 while the engine or indexer changes hands: look again.
      last = err as T;
    }
    if (performance.now() > deadline) {
      const logs = processes.map((p) => `--- ${p.label}\n${p.output().slice(-1500)}`).join('\n');
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last, (_, v) => (typeof v === 'bigint' ? v.toString() : v))?.slice(0, 800)}\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Which process holds each singleton's lease, and under which token. */
async function leaseHolders(): Promise<Record<string, { pid: number; token: bigint }>> {
  const out: Record<string, { pid: number; token: bigint }> = {};
  for (const role of SINGLETONS) {
    const row = await readLease(db, `role:${role}`);
    out[role] = { pid: row ? Number(row.holder.split(':').at(-2)) : 0, token: row?.token ?? 0n };
  }
  return out;
}

beforeAll(async () => {
  if (!ENABLED) return;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-topo-'));
  anvil = await startAnvil({ port: 0 });
  env = {
    // Every worker copy holds every sending key; only the lease holder sends (docs/deployment.md).
    ...roleProcessEnv(dataDir, anvil.rpcUrl),
    DATABASE_SCHEMA: schema,
    REDIS_URL: process.env.REDIS_URL,
    PERP_ENGINE_STREAM: prefix,
    STREAM_PREFIX: prefix,
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    EXECUTOR_TICK_MS: '200',
    INDEXER_POLL_MS: '100',
    MARKETDATA_TICK_MS: '250',
    PERP_MARK_INTERVAL_MS: '250',
    INDEX_WAIT_MS: '60000',
  };
  // The first worker deploys and takes every lease; the rest reuse the recorded deployment.
  await start(WORKER_ROLES, 'worker-1', { LOG_LEVEL: 'info' });
  await start('stock-api', 'stock-api-1');
  await Promise.all([start(WORKER_ROLES, 'worker-2', { LOG_LEVEL: 'info' }), start('stock-api', 'stock-api-2'), start('perp-api', 'perp-api-1'), start('perp-api', 'perp-api-2')]);
  db = await openDatabase({ url: process.env.DATABASE_URL, schema, migrate: false });
}, 180_000);

afterAll(async () => {
  if (!ENABLED) return;
  // Every process stops on SIGTERM; one that has not within 30 s is a bug, named here.
  const stubborn: string[] = [];
  await Promise.all(
    processes.map(async (p) => {
      const timer = setTimeout(() => {
        stubborn.push(`${p.label}: ${p.output().slice(-1500)}`);
        void p.kill('SIGKILL');
      }, 30_000);
      await p.kill('SIGTERM');
      clearTimeout(timer);
    }),
  );
  await anvil?.stop();
  if (db) {
    await db.kysely.schema.dropSchema(schema).ifExists().cascade().execute();
    await db.close();
  }
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  // Hygiene only: it must not stand in for the stubborn-process check below.
  await dropRedisKeys(process.env.REDIS_URL!, `${prefix}:`).catch(() => undefined);
  expect(stubborn).toEqual([]);
});

describe.runIf(ENABLED)('singleton roles under leases, as real processes', () => {
  it('kills each lease holder in turn mid-flow; the stand-by finishes every flow once', async () => {
    const worker = (label: string) => processes.find((p) => p.label === label)!;
    const pidOf = (p: RoleProcess) => p.child.pid!;
    // worker-1 started first, so it holds every lease; worker-2 waits on stand-by.
    expect(Object.values(await leaseHolders())).toEqual(SINGLETONS.map(() => ({ pid: pidOf(worker('worker-1')), token: 1n })));
    expect(worker('worker-2').output()).toContain('role on stand-by');

    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoFile;
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'deployments', `${demo.chainId}.json`), 'utf8'));
    const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } };
    const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl) });

    // The stock venue: wallet 1, through both stock API instances.
    const stockUrls = [worker('stock-api-1').baseUrl('stock'), worker('stock-api-2').baseUrl('stock')];
    const stock = stockUrls.map((u) => new StockClient({ baseUrl: u, chainId: demo.chainId, ...demo.stock.keys.writable }));
    // The writable demo key is bound to wallet 0; wallet 0 trades stock, the perp venue uses wallet 1's own keys.
    const stockWallet = testWallet(DEMO_WALLETS[0].privateKey, chain, anvil.rpcUrl);
    const sendTx = async (cd: { toAddress: Address; callData: Hex }) => {
      const hash = await stockWallet.sendTransaction({ to: cd.toAddress, data: cd.callData });
      await pub.waitForTransactionReceipt({ hash });
      return hash;
    };
    const c = demo.stock.contracts;
    await pub.waitForTransactionReceipt({ hash: await stockWallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
    const msft = record.venues.stock.contracts.stocks.MSFT as Address;
    // A filled buy is minted to the exchange and credited to the user's stock balance in the token.
    const stockBalanceAbi = parseAbi(['function stockBalance(address user) view returns (uint256)']);
    const msftBefore = await pub.readContract({ address: msft, abi: stockBalanceAbi, functionName: 'stockBalance', args: [stockWallet.account.address] });

    // The perpetual venue: wallet 1 deposits, trades and withdraws through both perp API instances.
    const perpUrls = [worker('perp-api-1').baseUrl('perp'), worker('perp-api-2').baseUrl('perp')];
    const perpAccount = privateKeyToAccount(DEMO_WALLETS[1].privateKey);
    const key = await PerpClient.createApiKey(perpUrls[0], perpAccount, { label: 'topology', permissions: ['READ', 'TRADE', 'TRANSFER'], chainId: demo.chainId });
    const readKey = await PerpClient.createApiKey(perpUrls[1], perpAccount, { label: 'topology reads', permissions: ['READ'], chainId: demo.chainId });
    const perp = perpUrls.map((u) => PerpClient.forKey(u, key, demo.chainId));
    const reads = perpUrls.map((u) => PerpClient.forKey(u, readKey, demo.chainId));
    await perp[1].depositCollateral(perpAccount, '1000', { timeoutMs: 90_000 });
    const collateral = record.venues.perp.contracts.collateralToken as Address;
    const decimals = await pub.readContract({ address: collateral, abi: erc20Abi, functionName: 'decimals' });
    const collateralBefore = await pub.readContract({ address: collateral, abi: erc20Abi, functionName: 'balanceOf', args: [perpAccount.address] });

    const orderIds: string[] = [];
    const withdrawalIds: string[] = [];
    let perpFilled = 0;

    /** One round of every flow through alternating instances; answers what must finish after a kill. */
    const round = async (n: number) => {
      // Stock: a deposit recorded on one instance, a market buy on the other.
      const dep = await stock[n % 2].post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '100' });
      expect(await stock[(n + 1) % 2].post<any>('/api/v1/cash/deposits/tx', { txHash: await sendTx(dep) })).toMatchObject({ operationStatus: 'completed' });
      const cd = await stock[(n + 1) % 2].post<any>('/api/v1/orders/calldata', { symbol: 'MSFT', side: 'Buy', type: 'Market', notional: '50', deadline: Math.floor(Date.now() / 1000) + 600 });
      const { orderId } = await stock[n % 2].post<any>('/api/v1/orders/tx', { txHash: await sendTx(cd) });
      orderIds.push(orderId);
      // Perp: three IOC buys against the market maker's book, alternating instances.
      const [inst] = await perp[0].get<any[]>('instruments', { symbol: 'AAPL-USD' });
      for (let i = 0; i < 3; i++) {
        const book = await until('a perp book', () => reads[i % 2].get<any>('depth', { symbol: 'AAPL-USD' }), (d) => d.asks.length > 0);
        // 1 % through the best ask read on the other instance's replica: the market maker may requote
        // between that read and the order (a busy machine), and the buy must still meet the book.
        const price = fractionOnTick(book.asks[0][0], inst.tickSize, 101n, 100n);
        const placed = await perp[i % 2].placeOrder<any>(perpAccount, { symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1', price, timeInForce: 'IOC' });
        expect(placed.status).toBe('FILLED');
        perpFilled += 1;
      }
      // Withdrawals reserved now, paid by whoever holds the perp engine's lease next.
      for (let i = 0; i < 6; i++) {
        const id = `topo-${n}-${i}`;
        withdrawalIds.push(id);
        await perp[i % 2].withdraw(perpAccount, { amount: '5', clientWithdrawalId: id });
      }
    };

    const finished = async (n: number) => {
      for (const orderId of orderIds) {
        await until(`stock order ${orderId}`, () => stock[n % 2].get<any>(`/api/v1/orders/${orderId}`), (o) => o.state === 'history' && o.history.status === 'FILLED');
      }
      const page = await until('every withdrawal paid', () => reads[n % 2].listWithdrawals({ limit: 100 }), (p) => withdrawalIds.every((id) => p.rows.some((w) => w.clientWithdrawalId === id && w.status === 'COMPLETED')));
      return page;
    };

    const kill = async (label: string, next: string) => {
      const before = await leaseHolders();
      expect(new Set(Object.values(before).map((h) => h.pid))).toEqual(new Set([pidOf(worker(label))]));
      const killedAt = performance.now();
      await worker(label).kill('SIGKILL');
      // A holder on this host whose process is gone is taken over at the stand-by's next look.
      const after = await until('every lease taken over', leaseHolders, (h) => Object.values(h).every((x) => x.pid === pidOf(worker(next))));
      for (const role of SINGLETONS) expect(after[role].token).toBe(before[role].token + 1n);
      return performance.now() - killedAt;
    };

    // Round 0 on worker-1, killed while its stock order and withdrawals are in flight.
    await round(0);
    const takeover1 = await kill('worker-1', 'worker-2');
    await finished(1);
    // worker-1 comes back and waits on stand-by; round 1 on worker-2, killed the same way.
    await start(WORKER_ROLES, 'worker-1b', { LOG_LEVEL: 'info' });
    await round(1);
    const takeover2 = await kill('worker-2', 'worker-1b');
    await finished(0);
    // Round 2 on the last worker, to the end.
    await round(2);
    const paid = await finished(1);

    // Nothing lost, nothing twice: every withdrawal paid once, in its own transaction, and the
    // wallet received exactly their sum; every stock order filled once and the tokens are on chain.
    const ours = paid.rows.filter((w) => withdrawalIds.includes(w.clientWithdrawalId!));
    expect(ours).toHaveLength(18);
    expect(new Set(ours.map((w) => w.txHash)).size).toBe(18);
    const collateralAfter = await pub.readContract({ address: collateral, abi: erc20Abi, functionName: 'balanceOf', args: [perpAccount.address] });
    expect(collateralAfter - collateralBefore).toBe(parseUnits('90', decimals));
    // Each perp API reads from its own replica of the journal, a moment behind the engine.
    const account = await until('the last payment on the replica', () => reads[0].get<any>('account'), (a) => a.withdrawn === '90');
    expect(account).toMatchObject({ deposited: '1000', withdrawn: '90' });
    const positions = await reads[1].get<any>('positions', { symbol: 'AAPL-USD' });
    expect(positions.rows[0]).toMatchObject({ side: 'LONG', size: String(perpFilled) });

    let filled = 0n;
    for (const orderId of orderIds) {
      const o = await stock[0].get<any>(`/api/v1/orders/${orderId}`);
      filled += parseUnits(o.history.filledQuantity, 18);
    }
    const msftAfter = await pub.readContract({ address: msft, abi: stockBalanceAbi, functionName: 'stockBalance', args: [stockWallet.account.address] });
    expect(msftAfter - msftBefore).toBe(filled);
    console.log(`topology: leases taken over in ${Math.round(takeover1)} ms and ${Math.round(takeover2)} ms after SIGKILL; 3 stock orders, 9 perp orders, 18 withdrawals, each done once`);
  }, 400_000);

  it('races across two instances: 100 One Click cash withdrawals and 100 perp orders against one balance admit exactly floor(balance / amount)', async () => {
    const worker = (label: string) => processes.find((p) => p.label === label)!;
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoFile;
    const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } };
    const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl) });
    const c = demo.stock.contracts;

    // Stock: the writable demo key's wallet withdraws its exchange cash with One Click, 100 times at
    // once through both instances; the Cashier debits each against the free balance on chain.
    const stock = ['stock-api-1', 'stock-api-2'].map((l) => new StockClient({ baseUrl: worker(l).baseUrl('stock'), chainId: demo.chainId, ...demo.stock.keys.writable }));
    const account = privateKeyToAccount(DEMO_WALLETS[0].privateKey);
    await stock[0].enableOneClick(account);
    const cashierAbi = parseAbi(['function balanceOf(address) view returns (uint256)', 'function toMusd(address token, uint256 tokenAmount) view returns (uint256)']);
    const free = await pub.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [account.address] });
    const cashDecimals = await pub.readContract({ address: c.cashToken, abi: erc20Abi, functionName: 'decimals' });
    const per = await pub.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'toMusd', args: [c.cashToken, parseUnits('3', cashDecimals)] });
    const expected = Number(free / per);
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(100);
    const sends = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => stock[i % 2].sendCashWithdrawal({ tokenAddress: c.cashToken, tokenAmount: '3' })));
    const outcome = (r: PromiseSettledResult<{ status: string }>) => (r.status === 'fulfilled' ? r.value.status : `refused ${(r.reason as { code?: number }).code}`);
    const tally = sends.map(outcome).reduce<Record<string, number>>((m, k) => ({ ...m, [k]: (m[k] ?? 0) + 1 }), {});
    expect(tally.mined).toBe(expected);
    expect(await pub.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [account.address] })).toBe(free - per * BigInt(expected));

    // Perp: 100 resting orders at once through both instances against one account's free
    // collateral; each reserves the same margin, so exactly floor(free / margin) are admitted.
    const perpUrls = ['perp-api-1', 'perp-api-2'].map((l) => worker(l).baseUrl('perp'));
    const trader = privateKeyToAccount(DEMO_WALLETS[2].privateKey);
    const keys = await Promise.all(perpUrls.map((u, i) => PerpClient.createApiKey(u, trader, { label: `admission ${i}`, permissions: ['READ', 'TRADE', 'TRANSFER'], chainId: demo.chainId })));
    const perp = perpUrls.map((u, i) => PerpClient.forKey(u, keys[i], demo.chainId));
    await perp[0].depositCollateral(trader, '1000', { timeoutMs: 90_000 });
    // Read from one instance throughout: each reads its own replica of the journal; an answer waits
    // for the replica of the instance that gave it, another instance's may be a moment behind.
    await until('the deposit credited', () => perp[0].get<any>('account'), (a) => a.deposited === '1000');
    const [inst] = await perp[0].get<any[]>('instruments', { symbol: 'AAPL-USD' });
    const book = await until('a perp book', () => perp[0].get<any>('depth', { symbol: 'AAPL-USD' }), (d) => d.bids.length > 0);
    // Far below the book (a tenth under its lowest bid, on the tick), so none of them fills.
    const price = fractionOnTick(book.bids.at(-1)[0], inst.tickSize, 9n, 10n);
    const order = { symbol: 'AAPL-USD', side: 'BUY' as const, type: 'LIMIT' as const, size: '1', price, timeInForce: 'GTC' as const };
    const before = await perp[0].get<any>('account');
    const probe = await perp[0].placeOrder<any>(trader, order);
    const during = await perp[0].get<any>('account');
    const margin = parseUnits(before.freeCollateral, 6) - parseUnits(during.freeCollateral, 6);
    expect(margin).toBeGreaterThan(0n);
    await perp[1].delete(`orders/${probe.orderId}`);
    const freeNow = parseUnits((await until('the probe cancelled', () => perp[0].get<any>('account'), (a) => a.freeCollateral === before.freeCollateral)).freeCollateral, 6);
    const admittable = Number(freeNow / margin);
    const placed = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => perp[i % 2].placeOrder<any>(trader, order)));
    const admitted = placed.filter((r) => r.status === 'fulfilled');
    const refused = placed.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as { code?: number }).code);
    expect(admitted).toHaveLength(admittable);
    expect(refused).toEqual(Array(100 - admittable).fill(51001));
    const open = await perp[0].get<any>('orders/open', { symbol: 'AAPL-USD' });
    expect(open.total).toBe(admittable);
    console.log(`races: ${expected} of 100 One Click withdrawals mined (${JSON.stringify(tally)}); ${admittable} of 100 perp orders admitted, ${100 - admittable} refused 51001`);
  }, 300_000);
});
