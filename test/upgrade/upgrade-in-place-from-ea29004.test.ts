/**
 * The upgrade test for issue 60's contract changes ("Tests and bad input": the upgrade test from the
 * last landed commit; docs/upgrades.md "Upgrading in place"). Commit ea29004 is the last one before
 * them: release 0.2.0's proxies and timelocks, the vault's fixed-window cap, roots posted without
 * their leaves, a guardian pause that released the queue, the deployer an operator of the
 * StockRouter, Cashier and DividendDistributor. It is installed from this repository's history and
 * started on a fresh data directory (SQLite, the embedded anvil); a client leaves state on both
 * venues (a resting stock order and its lock, a perpetual account with a share of the pool) and the
 * venue posts its roots; the stack stops with SIGTERM and this checkout's `tokex start` runs on the
 * same data directory.
 *
 * What must hold afterwards: the start upgrades every changed proxy in place (same addresses, new
 * code, the banner's `upgrade` line), and nothing is lost: the order, its lock and the Cashier
 * balances to the unit; the vault's per-account totals, the trader's balance, flows and pool shares; every
 * root the earlier release posted, unchanged. The new storage works from zero: the next root is posted
 * with its leaves and the SDK rebuilds the trader's escape call from the chain alone; a withdrawal is
 * paid under the cap's token bucket; the router's pause start reads "unknown"; no forced withdrawal
 * stands. And the keys hold exactly docs/security.md's table: the deployer's operator roles the
 * earlier release granted are revoked by the start (TIMELOCK_DELAY_S is 0 on the embedded chain).
 *
 * Time: the install of ea29004 under `.cache/releases/` (npm install, a few minutes the first time,
 * nothing after), then about a minute of starts and trading.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { escapeCallFromChain, PerpClient, StockClient } from '@tokex/sdk';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cashierAbi, marginVaultAbi, reserveRegistryAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, EXECUTOR_ACCOUNT, GUARDIAN_ACCOUNT, OPERATOR_ACCOUNT, ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import type { DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { expectedVenueRoles, readVenueRoles, type RoleKey } from '../../src/chain/venue-roles.ts';
import { installEarlierRelease, REPO_ROOT, startEarlierStack, type EarlierDemoFile, type EarlierRelease, type RunningStack } from '../support/earlier-release.ts';

const COMMIT = 'ea29004';
/** Roots every 15 s, so that one is posted by each release within the test. */
const STACK_ENV = { HISTORY_DAYS: '1', PERP_FUNDING_INTERVAL_MS: '15000' };
const KEYS: Record<RoleKey, Address> = {
  admin: OPERATOR_ACCOUNT.address,
  executor: EXECUTOR_ACCOUNT.address,
  'perp-operator': ANVIL_ACCOUNTS[6].address,
  relayer: ANVIL_ACCOUNTS[7].address,
  'oracle-publisher': ORACLE_PUBLISHER_ACCOUNT.address,
  guardian: GUARDIAN_ACCOUNT.address,
};

type Contracts = Record<string, Address> & { stocks: Record<string, Address> };
interface Picture {
  record: DeploymentRecord;
  cash: { free: bigint; locked: bigint };
  order: { state: string; openOrder?: { status: string; lockedAmount: string; remainingQuantity: string } };
  vault: { deposited: bigint; withdrawn: bigint };
  perp: { balance: string; deposited: string; withdrawn: string; shares: string };
  roots: Array<{ epoch: bigint; root: Hex; total: bigint }>;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe(`an upgrade in place from ${COMMIT} (0.2.0, before issue 60's contract changes)`, () => {
  let release: EarlierRelease;
  let dataDir: string;
  let earlier: RunningStack | undefined;
  let current: RunningStack | undefined;
  let before: Picture | undefined;
  let orderId: string;

  const readRecord = () => JSON.parse(fs.readFileSync(path.join(dataDir, 'deployments', '31337.json'), 'utf8')) as DeploymentRecord;
  const clients = (demo: EarlierDemoFile) => {
    const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } } as const;
    const trader = demo.perp!.keys.trader.address;
    const key = demo.wallets.find((w) => w.address.toLowerCase() === demo.stock.keys.writable.userAddress.toLowerCase())!.privateKey;
    return {
      chain: createPublicClient({ chain, transport: http(demo.rpcUrl) }),
      wallet: createWalletClient({ chain, transport: http(demo.rpcUrl), account: privateKeyToAccount(key) }),
      traderKey: privateKeyToAccount(demo.wallets.find((w) => w.address.toLowerCase() === trader.toLowerCase())!.privateKey),
      stock: new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, product: demo.stock.product, ...demo.stock.keys.writable }),
      perp: new PerpClient({ baseUrl: demo.perp!.baseUrl, chainId: demo.chainId, apiKey: demo.perp!.keys.trader.apiKey, apiSecret: demo.perp!.keys.trader.apiSecret }),
      trader,
      me: demo.stock.keys.writable.userAddress,
    };
  };

  async function picture(demo: EarlierDemoFile): Promise<Picture> {
    const c = clients(demo);
    const record = readRecord();
    const stock = record.venues.stock.contracts as Contracts;
    const perp = record.venues.perp!.contracts as Contracts;
    const read = (address: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[] = []) =>
      c.chain.readContract({ address, abi: abi as never, functionName: functionName as never, args: args as never }) as Promise<unknown>;
    const count = (await read(perp.reserveRegistry!, reserveRegistryAbi, 'latest')) as { epoch: bigint };
    const roots: Picture['roots'] = [];
    // The registry's records are by epoch (ms): every one the events name.
    const posted = await c.chain.getContractEvents({ address: perp.reserveRegistry!, abi: reserveRegistryAbi, eventName: 'ReservesPosted', fromBlock: 0n, toBlock: 'latest' });
    for (const e of posted) {
      const r = (await read(perp.reserveRegistry!, reserveRegistryAbi, 'rootOf', [e.args.epoch])) as { epoch: bigint; root: Hex; total: bigint };
      roots.push({ epoch: r.epoch, root: r.root, total: r.total });
    }
    expect(roots.at(-1)?.epoch).toBe(count.epoch);
    const account = await c.perp.getAccount();
    const lp = (await c.perp.liquidityPositions()) as { shares: string };
    return {
      record,
      cash: {
        free: (await read(stock.cashier!, cashierAbi, 'balanceOf', [c.me])) as bigint,
        locked: (await read(stock.cashier!, cashierAbi, 'lockedOf', [c.me])) as bigint,
      },
      order: (await c.stock.getOrder(orderId)) as unknown as Picture['order'],
      vault: {
        deposited: (await read(perp.marginVault!, marginVaultAbi, 'depositedOf', [c.trader])) as bigint,
        withdrawn: (await read(perp.marginVault!, marginVaultAbi, 'withdrawnOf', [c.trader])) as bigint,
      },
      perp: { balance: account.balance, deposited: account.deposited, withdrawn: account.withdrawn, shares: lp.shares },
      roots,
    };
  }

  beforeAll(async () => {
    // A clone without the commit fails here with what to do; it is never skipped.
    release = await installEarlierRelease(COMMIT);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `tokex-upgrade-${COMMIT}-`));
  }, 20 * 60_000);

  afterAll(async () => {
    await Promise.allSettled([earlier?.stop(), current?.stop()]);
    if (dataDir && process.env.TOKEX_UPGRADE_KEEP) {
      if (earlier) fs.writeFileSync(path.join(dataDir, `tokex-${COMMIT}.log`), earlier.output());
      if (current) fs.writeFileSync(path.join(dataDir, 'tokex-current.log'), current.output());
      console.info(`TOKEX_UPGRADE_KEEP: the data directory and both stacks' output are in ${dataDir}`);
    } else if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 150_000);

  it(`${COMMIT} runs, a client leaves state on both venues and the venue posts its roots`, async () => {
    earlier = await startEarlierStack({ dir: release.dir, dataDir, env: STACK_ENV, label: `tokex ${COMMIT}` });
    const demo = earlier.demo;
    const c = clients(demo);
    const stock = demo.stock.contracts;

    // A limit buy far below the market, with its deposit: it rests and locks cash.
    await c.chain.waitForTransactionReceipt({ hash: await c.wallet.writeContract({ address: stock.cashToken, abi: erc20Abi, functionName: 'approve', args: [stock.stockRouter, maxUint256] }) });
    const cd = await c.stock.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/with-deposit/calldata', {
      symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '2', price: '1.25', timeInForce: 'DAY', tokenAmount: '40', deadline: Math.floor(Date.now() / 1000) + 7 * 86_400,
    });
    const txHash = await c.wallet.sendTransaction({ to: cd.toAddress, data: cd.callData });
    expect((await c.chain.waitForTransactionReceipt({ hash: txHash })).status).toBe('success');
    orderId = (await c.stock.post<{ orderId: string }>('/api/v1/orders/tx', { txHash })).orderId;

    // The perpetual trader (10,000 deposited at start) puts 800 in the pool.
    await c.perp.addLiquidity('800');
    const added = Date.now();
    // A root the earlier release posted after it (roots without leaves, in salt order).
    const record = readRecord();
    const registry = (record.venues.perp!.contracts as Contracts).reserveRegistry!;
    await until('a root after the liquidity', async () => {
      const latest = await c.chain.readContract({ address: registry, abi: reserveRegistryAbi, functionName: 'latest' });
      return latest.epoch > BigInt(added) ? latest : undefined;
    });
    // The deployer is an operator of the stock venue, as 0.2.0 made it.
    const s = record.venues.stock.contracts as Contracts;
    for (const [address, abi] of [[s.stockRouter, stockRouterAbi], [s.cashier, cashierAbi]] as const) {
      expect(await c.chain.readContract({ address: address!, abi, functionName: 'isOperator', args: [OPERATOR_ACCOUNT.address] })).toBe(true);
    }

    before = await picture(demo);
    expect(before.order.state).toBe('open');
    expect(before.order.openOrder).toMatchObject({ status: 'OPEN', remainingQuantity: '2', lockedAmount: '2.50125' });
    expect(before.cash.locked).toBe(2_501_250_000_000_000_000n);
    expect(before.perp.shares).not.toBe('0');
    expect(before.roots.length).toBeGreaterThan(0);
    const stopped = await earlier.stop();
    expect(stopped.killed).toBe(false);
  }, 8 * 60_000);

  it('this checkout upgrades every changed proxy in place on the same data directory: same addresses, new code', async () => {
    if (!before) throw new Error(`${COMMIT} made no state (see the test before)`);
    current = await startEarlierStack({ dir: REPO_ROOT, dataDir, env: STACK_ENV, label: 'tokex (this checkout)' });
    expect(current.output()).toMatch(/\n {2}upgrade {4}contracts upgraded in place to \S+ \(\d+ change\(s\); the log has each step\)\n/);
    const record = readRecord();
    // Same addresses for everything; new implementations behind the contracts issue 60 changed.
    expect(record.venues.stock.contracts).toEqual(before.record.venues.stock.contracts);
    expect(record.venues.perp!.contracts).toEqual(before.record.venues.perp!.contracts);
    const codeOf = (r: DeploymentRecord, venue: 'stock' | 'perp', p: string) => r.venues[venue]!.code![p]!;
    for (const [venue, p] of [['stock', 'stockRouter'], ['stock', 'oneClickRouter'], ['perp', 'marginVault'], ['perp', 'reserveRegistry']] as const) {
      expect(codeOf(record, venue, p).codeHash, `${venue}.${p}`).not.toBe(codeOf(before.record, venue, p).codeHash);
      expect(codeOf(record, venue, p).implementation, `${venue}.${p}`).not.toBe(codeOf(before.record, venue, p).implementation);
    }
  }, 5 * 60_000);

  it('nothing is lost: the order and its lock, the Cashier, the vault totals, the perpetual balance and pool shares, every root', async () => {
    if (!current || !before) throw new Error('the upgraded start did not run (see the tests before)');
    const after = await picture(current.demo);
    expect(after.cash).toEqual(before.cash);
    expect(after.order).toMatchObject({ state: 'open', openOrder: before.order.openOrder });
    expect(after.vault).toEqual(before.vault);
    expect(after.perp).toEqual(before.perp);
    // Every root of the earlier release is still there, unchanged (later ones may have been added).
    expect(after.roots.slice(0, before.roots.length)).toEqual(before.roots);
  }, 2 * 60_000);

  it("the new storage works from zero: a root with its leaves and the SDK's escape call, a withdrawal under the bucket, the pause start unknown", async () => {
    if (!current || !before) throw new Error('the upgraded start did not run (see the tests before)');
    const c = clients(current.demo);
    const record = readRecord();
    const perp = record.venues.perp!.contracts as Contracts;
    const stock = record.venues.stock.contracts as Contracts;
    const lastBefore = before.roots.at(-1)!.epoch;
    // The earlier release's roots have no published leaves; the next one this checkout posts has.
    expect(await c.chain.readContract({ address: perp.reserveRegistry!, abi: reserveRegistryAbi, functionName: 'leavesPublished', args: [lastBefore] })).toBe(false);
    const latest = await until('a root posted with its leaves', async () => {
      const l = await c.chain.readContract({ address: perp.reserveRegistry!, abi: reserveRegistryAbi, functionName: 'latest' });
      if (l.epoch <= lastBefore) return undefined;
      return (await c.chain.readContract({ address: perp.reserveRegistry!, abi: reserveRegistryAbi, functionName: 'leavesPublished', args: [l.epoch] })) ? l : undefined;
    }, 90_000);
    const call = await escapeCallFromChain(c.chain, { vault: perp.marginVault!, account: c.trader });
    expect(call.functionName).toBe('escapeWithdraw');
    expect(call.epoch).toBeGreaterThanOrEqual(latest.epoch);
    // The trader's leaf holds its collateral and its pool share (its whole 10,000, less nothing it spent).
    expect(call.leaf!.equity).toBeGreaterThan(9_950_000_000n);
    expect(call.leaf!.deposited).toBe(before.vault.deposited);

    // No forced withdrawal stands; the router's pause start is unknown (0) and it is not paused.
    expect(await c.chain.readContract({ address: perp.marginVault!, abi: marginVaultAbi, functionName: 'forcedWithdrawal', args: [c.trader] })).toEqual([0n, 0n, 0n]);
    expect(await c.chain.readContract({ address: stock.stockRouter!, abi: stockRouterAbi, functionName: 'pausedSince' })).toBe(0n);
    expect(await c.chain.readContract({ address: stock.stockRouter!, abi: stockRouterAbi, functionName: 'paused' })).toBe(false);

    // A withdrawal is paid through the upgraded vault (the cap's bucket over the earlier fixed window).
    const clientWithdrawalId = `after-upgrade-${Date.now()}`;
    await c.perp.withdraw(c.traderKey, { amount: '25', clientWithdrawalId });
    const done = await c.perp.waitForWithdrawal(clientWithdrawalId, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: 'COMPLETED' });
    expect(await c.chain.readContract({ address: perp.marginVault!, abi: marginVaultAbi, functionName: 'withdrawnOf', args: [c.trader] })).toBe(before.vault.withdrawn + 25_000_000n);
  }, 3 * 60_000);

  it("keys hold exactly docs/security.md's table: the deployer's operator roles of 0.2.0 are revoked by the start", async () => {
    if (!current) throw new Error('the upgraded start did not run (see the tests before)');
    const c = clients(current.demo);
    const record = readRecord();
    // The admin's start schedules and (the delay being 0 here) applies the revocation, a moment after the banner.
    const expected = expectedVenueRoles(record);
    const read = () => readVenueRoles({ publicClient: c.chain as never, record, keys: KEYS });
    await until('the chain to answer the role table', async () => (isDeepStrictEqual(await read(), expected) ? true : undefined), 30_000).catch(() => undefined);
    expect(await read()).toEqual(expected);
    const s = record.venues.stock.contracts as Contracts;
    for (const [address, abi] of [[s.stockRouter, stockRouterAbi], [s.cashier, cashierAbi]] as const) {
      expect(await c.chain.readContract({ address: address!, abi, functionName: 'isOperator', args: [OPERATOR_ACCOUNT.address] })).toBe(false);
    }
  }, 2 * 60_000);
});
