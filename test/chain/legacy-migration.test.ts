/**
 * The migration of a venue deployed before the proxies (docs/upgrades.md), on a real anvil with the
 * contracts of commit 374f31d (compiled from this repository's history) and of 6a0f45b (the last
 * release without proxies, split-aware Stocks): state of every kind is created on the old contracts,
 * the migration moves it to new upgradeable ones, and every balance is there to the unit; open
 * orders are closed with their locks returned; the old venue can move nothing any more; a run
 * killed at any step resumes without crediting twice; the migration windows close for good.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeFunctionData, parseUnits, type Abi, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashierAbi, marginVaultAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, DEMO_WALLETS, EXECUTOR_ACCOUNT, GUARDIAN_ACCOUNT, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { createChainClients, createChainWallet, SETUP_RPC_TIMEOUT_MS, type ChainPublicClient, type ChainWalletClient } from '../../src/chain/chain-client.ts';
import type { DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { migrateLegacyVenues, readMigrationJournal, VAULT_MIGRATION_WITHDRAWAL_ID } from '../../src/chain/legacy-migration.ts';
import { planUpgrade } from '../../src/chain/venue-upgrade.ts';
import { ownableAbi, ownerCall, ownerCalls, statefulContractsOf } from '../../src/chain/owner-actions.ts';
import { cashierSurplusSweepCalls } from '../../src/chain/legacy-reconciliation.ts';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { expectedVenueRoles, readVenueRoles } from '../../src/chain/venue-roles.ts';
import { deployLegacyVenue, type LegacyArtifacts } from '../support/legacy-venue.ts';
import { delegateTypedData, oneClickDomain } from '../../src/chain/one-click-typed-data.ts';

const SYMBOLS = [
  { symbol: 'AAPL', name: 'Apple Inc.' },
  { symbol: 'TSLA', name: 'Tesla, Inc.' },
];
// Within the hour: 374f31d refused deadlines further ahead (DeadlineTooFar).
const FAR = Math.floor(Date.now() / 1000) + 3000;

/** The role keys the migrated venue takes (the app passes its configured ones: migrationRoles). */
const ROLES = { stock: [EXECUTOR_ACCOUNT.address], perp: [ANVIL_ACCOUNTS[6].address], guardian: GUARDIAN_ACCOUNT.address };

interface Fixture {
  anvil: AnvilHandle;
  client: ChainPublicClient;
  owner: ChainWalletClient;
  /** The executor's key: the new venue's operator. */
  executor: ChainWalletClient;
  users: ChainWalletClient[];
  record: DeploymentRecord;
  a: LegacyArtifacts;
  dir: string;
}

async function setUp(commit: string): Promise<Fixture> {
  const anvil = await startAnvil({ chainId: 31337 });
  // The CLI's timeout for owner work (SETUP_RPC_TIMEOUT_MS), not the API's 5 s: on a loaded machine
  // anvil may answer a migration's call later than that, and the CLI waits for it (CI met this).
  const timeoutMs = SETUP_RPC_TIMEOUT_MS;
  const { publicClient: client, walletClient, chain } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20, timeoutMs });
  const users = DEMO_WALLETS.slice(0, 3).map((w) => createChainWallet(w.privateKey, { chain, rpcUrl: anvil.rpcUrl, pollingIntervalMs: 20, timeoutMs }));
  const { record, artifacts } = await deployLegacyVenue({ commit, publicClient: client, walletClient: walletClient!, symbols: SYMBOLS, demoWallets: users.map((u) => u.account.address) });
  const executor = createChainWallet(EXECUTOR_ACCOUNT.privateKey, { chain, rpcUrl: anvil.rpcUrl, pollingIntervalMs: 20, timeoutMs });
  return { anvil, client, owner: walletClient!, executor, users, record, a: artifacts, dir: mkdtempSync(path.join(os.tmpdir(), 'tokex-legacy-')) };
}

async function call(f: Fixture, who: ChainWalletClient, to: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void> {
  const hash = await who.sendTransaction({ to, data: encodeFunctionData({ abi, functionName, args }), account: who.account, chain: who.chain, gas: 1_000_000n });
  const r = await f.client.waitForTransactionReceipt({ hash });
  if (r.status !== 'success') throw new Error(`${functionName} reverted`);
}

const read = <T>(f: Fixture, address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
  f.client.readContract({ address, abi, functionName, args }) as Promise<T>;

/** Users trade on the old venue: deposits, a filled buy, resting orders both ways, a queued withdrawal, a delegation, a vault deposit. */
async function createState(f: Fixture): Promise<{ openOrders: bigint[] }> {
  const c = f.record.venues.stock.contracts as Record<string, Address> & { stocks: Record<string, Address> };
  const { a } = f;
  const [alice, bob, carol] = f.users;
  for (const u of [alice, bob]) {
    await call(f, u, c.cashToken, a.CashToken.abi, 'approve', [c.stockRouter, parseUnits('100000', 6)]);
    await call(f, u, c.stockRouter, a.StockRouter.abi, 'deposit', [c.cashToken, parseUnits('2000', 6)]);
    await call(f, u, c.stocks.AAPL, a.Stock.abi, 'approve', [c.stockRouter, parseUnits('100', 18)]);
    await call(f, u, c.stockRouter, a.StockRouter.abi, 'depositStock', [c.stocks.AAPL, parseUnits('10', 18)]);
  }
  // A market buy, filled and closed.
  await call(f, alice, c.stockRouter, a.StockRouter.abi, 'placeMarketOrder', [c.stocks.AAPL, 0, 0n, parseUnits('300', 18), FAR]);
  const filled = (await read<bigint>(f, c.stockRouter, a.StockRouter.abi, 'nextOrderId')) - 1n;
  await call(f, f.owner, c.stockRouter, a.StockRouter.abi, 'settleOrders', [[{ orderId: filled, quantity: parseUnits('1.4', 18), price: parseUnits('200', 18) }], [{ orderId: filled, status: 3 }]]);
  // Resting: a limit sell far above, a limit buy far below, one partially filled.
  await call(f, alice, c.stockRouter, a.StockRouter.abi, 'placeLimitOrder', [c.stocks.AAPL, 1, parseUnits('0.2', 18), parseUnits('500', 18), 0, FAR]);
  const sell = (await read<bigint>(f, c.stockRouter, a.StockRouter.abi, 'nextOrderId')) - 1n;
  await call(f, bob, c.stockRouter, a.StockRouter.abi, 'placeLimitOrder', [c.stocks.AAPL, 0, parseUnits('3', 18), parseUnits('100', 18), 0, FAR]);
  const buy = (await read<bigint>(f, c.stockRouter, a.StockRouter.abi, 'nextOrderId')) - 1n;
  await call(f, f.owner, c.stockRouter, a.StockRouter.abi, 'settleOrders', [[{ orderId: buy, quantity: parseUnits('1', 18), price: parseUnits('99', 18) }], []]);
  await call(f, bob, c.stockRouter, a.StockRouter.abi, 'placeLimitOrder', [c.stocks.TSLA, 1, parseUnits('2', 18), parseUnits('900', 18), 0, FAR]).catch(() => undefined);
  // A withdrawal the buffer cannot pay at once: queued.
  await call(f, f.owner, c.cashier, a.Cashier.abi, 'setWithdrawBuffer', [c.cashToken, 0n]);
  await call(f, bob, c.stockRouter, a.StockRouter.abi, 'withdraw', [c.cashToken, parseUnits('50', 6)]);
  // One Click: carol delegates to the owner (the relayer in the demo).
  const sig = await carol.account.signTypedData(delegateTypedData(oneClickDomain(31337, c.oneClickRouter), { user: carol.account.address, delegatee: f.owner.account.address, nonce: 0n, deadline: FAR }));
  await call(f, carol, c.oneClickRouter, a.OneClickRouter.abi, 'delegateBySig', [carol.account.address, f.owner.account.address, FAR, sig]);
  // The perp vault: two deposits, one paid withdrawal.
  const vault = f.record.venues.perp.contracts.marginVault as Address;
  for (const u of [alice, carol]) {
    await call(f, u, c.cashToken, a.CashToken.abi, 'approve', [vault, parseUnits('1000', 6)]);
    await call(f, u, vault, a.MarginVault.abi, 'deposit', [parseUnits('1000', 6)]);
  }
  await call(f, f.owner, vault, a.MarginVault.abi, 'withdraw', [alice.account.address, parseUnits('100', 6), `0x${'ab'.repeat(32)}`]);
  return { openOrders: [sell, buy] };
}

interface Picture {
  cash: Record<string, bigint>;
  stocks: Record<string, Record<string, { wallet: bigint; exchange: bigint }>>;
  supply: Record<string, bigint>;
  fees: bigint;
  vault: bigint;
}

async function picture(f: Fixture, rec: DeploymentRecord, abis: { cashier: Abi; stock: Abi }): Promise<Picture> {
  const c = rec.venues.stock.contracts as Record<string, Address> & { stocks: Record<string, Address> };
  const accounts = [...f.users.map((u) => u.account.address), f.owner.account.address];
  const cash: Picture['cash'] = {};
  const stocks: Picture['stocks'] = {};
  const supply: Picture['supply'] = {};
  for (const u of accounts) {
    // What a user owns in cash: free + locked (a lock is returned by the migration).
    cash[u] = (await read<bigint>(f, c.cashier, abis.cashier, 'balanceOf', [u])) + (await read<bigint>(f, c.cashier, abis.cashier, 'lockedOf', [u]));
    for (const [sym, token] of Object.entries(c.stocks)) {
      stocks[sym] ??= {};
      stocks[sym][u] = {
        wallet: await read<bigint>(f, token, abis.stock, 'balanceOf', [u]),
        exchange: (await read<bigint>(f, token, abis.stock, 'stockBalance', [u])) + (await read<bigint>(f, token, abis.stock, 'lockedStockBalance', [u])),
      };
    }
  }
  for (const [sym, token] of Object.entries(c.stocks)) supply[sym] = await read<bigint>(f, token, abis.stock, 'totalSupply');
  const vault = rec.venues.perp.contracts.marginVault as Address;
  return { cash, stocks, supply, fees: await read<bigint>(f, c.cashier, abis.cashier, 'feeBalance'), vault: await read<bigint>(f, c.cashToken, f.a.CashToken.abi, 'balanceOf', [vault]) };
}

for (const commit of ['374f31d', '6a0f45b']) {
  describe(`a venue deployed by ${commit} (no proxies)`, () => {
    let f: Fixture;
    let before: Picture;
    let openOrders: bigint[];
    beforeAll(async () => {
      f = await setUp(commit);
      ({ openOrders } = await createState(f));
      before = await picture(f, f.record, { cashier: f.a.Cashier.abi, stock: f.a.Stock.abi });
    }, 180_000);
    afterAll(async () => {
      await f?.anvil.stop();
      if (f?.dir) rmSync(f.dir, { recursive: true, force: true });
    });

    test('is planned as a migration, moved to new upgradeable contracts with every balance to the unit, and the old one can move nothing', async () => {
      expect(planUpgrade(f.record).venues.map((v) => [v.venue, v.state])).toEqual([['stock', 'legacy'], ['perp', 'legacy']]);
      const journalFile = path.join(f.dir, 'migration.json');
      const closedSeen: string[][] = [];
      const { record, journal, moved } = await migrateLegacyVenues({ publicClient: f.client, ownerWallet: f.owner, record: f.record, journalFile, roles: ROLES, afterOrdersClosed: async (ids) => void closedSeen.push([...ids]) });

      expect(closedSeen).toEqual([openOrders.map(String)]);
      for (const venue of ['stock', 'perp']) {
        expect(record.venues[venue].release).toBe(APP_VERSION);
        expect(record.venues[venue].retired?.[0].release).toBe('0.1.0');
      }
      expect(planUpgrade(record).venues.every((v) => v.state === 'current')).toBe(true);
      const oldStock = f.record.venues.stock.contracts as Record<string, Address> & { stocks: Record<string, Address> };
      const newStock = record.venues.stock.contracts as Record<string, Address> & { stocks: Record<string, Address> };
      expect(moved[oldStock.stockRouter.toLowerCase()]).toBe(newStock.stockRouter);
      expect(moved[oldStock.stocks.AAPL.toLowerCase()]).toBe(newStock.stocks.AAPL);
      expect(newStock.cashToken).toBe(oldStock.cashToken);

      const after = await picture(f, record, { cashier: cashierAbi, stock: stockAbi });
      expect(after).toEqual(before);
      // Locks returned: nobody has anything locked in the new venue.
      for (const u of f.users) {
        expect(await read<bigint>(f, newStock.cashier, cashierAbi, 'lockedOf', [u.account.address])).toBe(0n);
        expect(await read<bigint>(f, newStock.stocks.AAPL, stockAbi, 'lockedStockBalance', [u.account.address])).toBe(0n);
      }
      expect(journal.reconciliation!.every((r) => r.ok)).toBe(true);
      expect(journal.reconciliation!.map((r) => r.what)).toContain('cash balances (mUSD, free + locked)');
      // Order ids continue; the queued withdrawal kept its id and is still pending.
      expect(await read<bigint>(f, newStock.stockRouter, stockRouterAbi, 'nextOrderId')).toBe(await read<bigint>(f, oldStock.stockRouter, f.a.StockRouter.abi, 'nextOrderId'));
      const queued = await read<{ status: number; user: Address }>(f, newStock.cashier, cashierAbi, 'queuedWithdrawal', [1n]);
      expect([queued.status, queued.user]).toEqual([1, f.users[1].account.address]);
      // One Click delegation and nonce carried over.
      const carol = f.users[2].account.address;
      expect(await read<Address>(f, newStock.oneClickRouter, oneClickRouterAbi, 'delegateOf', [carol])).toBe(f.owner.account.address);
      expect(await read<bigint>(f, newStock.oneClickRouter, oneClickRouterAbi, 'nonces', [carol])).toBe(1n);
      // A 0.1.0 delegation never expired: carried over, it lasts DELEGATION_LIFETIME (30 days) from its import, as a new one.
      const migratedAt = (await f.client.getContractEvents({ address: newStock.oneClickRouter, abi: oneClickRouterAbi, eventName: 'DelegationMigrated', fromBlock: 0n }))
        .find((l) => l.args.user === carol)!;
      const importedAt = (await f.client.getBlock({ blockNumber: migratedAt.blockNumber })).timestamp;
      expect(migratedAt.args.expiresAt).toBe(importedAt + 30n * 86_400n);
      expect(await read<bigint>(f, newStock.oneClickRouter, oneClickRouterAbi, 'delegationExpiresAt', [carol])).toBe(importedAt + 30n * 86_400n);
      expect(await read<readonly [Address, bigint]>(f, newStock.oneClickRouter, oneClickRouterAbi, 'activeDelegateOf', [carol])).toEqual([f.owner.account.address, importedAt + 30n * 86_400n]);
      // The vault: collateral, totals, paid ids.
      const vault = record.venues.perp.contracts.marginVault as Address;
      const oldVault = f.record.venues.perp.contracts.marginVault as Address;
      expect(await read<bigint>(f, vault, marginVaultAbi, 'depositedOf', [f.users[0].account.address])).toBe(parseUnits('1000', 6));
      expect(await read<bigint>(f, vault, marginVaultAbi, 'withdrawnOf', [f.users[0].account.address])).toBe(parseUnits('100', 6));
      expect(await read<boolean>(f, vault, marginVaultAbi, 'withdrawalPaid', [`0x${'ab'.repeat(32)}`])).toBe(true);
      expect(await read<boolean>(f, oldVault, marginVaultAbi, 'withdrawalPaid', [VAULT_MIGRATION_WITHDRAWAL_ID])).toBe(true);
      // Windows closed; nobody can import again.
      expect(await read<boolean>(f, newStock.cashier, cashierAbi, 'migrating')).toBe(false);
      await expect(call(f, f.owner, newStock.cashier, cashierAbi as Abi, 'migrateBalances', [[carol], [1n]])).rejects.toThrow();
      // The old venue moves nothing: a deposit through the old router reverts.
      const alice = f.users[0];
      await expect(call(f, alice, oldStock.stockRouter, f.a.StockRouter.abi, 'deposit', [oldStock.cashToken, parseUnits('10', 6)])).rejects.toThrow();
      // The new venue works: a deposit, an order, a fill.
      await call(f, alice, oldStock.cashToken, f.a.CashToken.abi, 'approve', [newStock.stockRouter, parseUnits('1000', 6)]);
      await call(f, alice, newStock.stockRouter, stockRouterAbi, 'deposit', [newStock.cashToken, parseUnits('10', 6)]);
      await call(f, alice, newStock.stockRouter, stockRouterAbi, 'placeLimitOrder', [newStock.stocks.AAPL, 1, parseUnits('1', 18), parseUnits('150', 18), 0, FAR]);
      const id = (await read<bigint>(f, newStock.stockRouter, stockRouterAbi, 'nextOrderId')) - 1n;
      expect(id).toBeGreaterThan(openOrders[1]);
      // The order pays the fee rate carried over from the old venue, fixed at its placement.
      const fee = await read<{ limitFeeBps: number }>(f, newStock.stockRouter, stockRouterAbi, 'feeConfig');
      expect(await read<readonly number[]>(f, newStock.stockRouter, stockRouterAbi, 'orderFeeBps', [[id]])).toEqual([fee.limitFeeBps]);
      // The migrated venue requires a price feed for every fill (the app's start sets the feeds up);
      // this test has none, so its owner opts out explicitly.
      expect(await read<boolean>(f, newStock.stockRouter, stockRouterAbi, 'requireOracle')).toBe(true);
      const fill = [[{ orderId: id, quantity: parseUnits('1', 18), price: parseUnits('150', 18) }], [{ orderId: id, status: 3 }]];
      await expect(f.client.simulateContract({ address: newStock.stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: fill as never, account: f.executor.account! })).rejects.toThrow(/PriceFeedRequired/);
      // The migration ends with every new contract owned and upgraded by its venue's timelock: the
      // admin key no longer calls onlyOwner itself, it goes through the timelock (delay 0 here).
      for (const venue of ['stock', 'perp']) {
        const timelock = record.venues[venue].timelock!.address;
        const contracts = statefulContractsOf(record.venues[venue]);
        expect(contracts.length).toBeGreaterThan(0);
        for (const c of contracts) {
          expect([c.path, await read<Address>(f, c.address, ownableAbi as Abi, 'owner'), await read<Address>(f, c.address, ownableAbi as Abi, 'upgrader')]).toEqual([c.path, timelock, timelock]);
        }
      }
      await expect(call(f, f.owner, newStock.stockRouter, stockRouterAbi, 'setRequireOracle', [false])).rejects.toThrow(/reverted/);
      expect(await ownerCall({ publicClient: f.client, wallet: f.owner, target: newStock.stockRouter, abi: stockRouterAbi, functionName: 'setRequireOracle', args: [false] })).toMatchObject({ done: true, via: 'timelock' });
      // The executor's key settles; the admin key is an operator of no new contract (issue 60).
      await expect(f.client.simulateContract({ address: newStock.stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: fill as never, account: f.owner.account! })).rejects.toThrow(/NotOperator/);
      await call(f, f.executor, newStock.stockRouter, stockRouterAbi, 'settleOrders', fill);
      // Every role of every new contract is the table's (docs/security.md, "Who holds which role").
      expect(await readVenueRoles({ publicClient: f.client, record, keys: { admin: f.owner.account.address, executor: f.executor.account.address, 'perp-operator': ROLES.perp[0], guardian: ROLES.guardian } })).toEqual(expectedVenueRoles(record));
      // A rerun finds a finished journal and starts a new one only for a record that still has legacy venues: none.
      expect(readMigrationJournal(journalFile)?.finishedAt).toBeGreaterThan(0);
    }, 300_000);
  });
}

/** A 374f31d venue with state, for the tests of one describe. */
function withStateOn(commit: string): () => Fixture {
  let f: Fixture;
  beforeAll(async () => {
    f = await setUp(commit);
    await createState(f);
  }, 180_000);
  afterAll(async () => {
    await f?.anvil.stop();
    if (f?.dir) rmSync(f.dir, { recursive: true, force: true });
  });
  return () => f;
}

describe('a migration killed at a step', () => {
  const fx = withStateOn('374f31d');

  test('resumes at every step, and credits nobody twice', async () => {
    const f = fx();
    const before = await picture(f, f.record, { cashier: f.a.Cashier.abi, stock: f.a.Stock.abi });
    const journalFile = path.join(f.dir, 'migration.json');
    // The process dies after each step it records in turn; the next run takes over from the journal.
    let killedAt = 0;
    for (let attempt = 1; attempt < 60; attempt++) {
      let saves = 0;
      try {
        const result = await migrateLegacyVenues({
          publicClient: f.client,
          ownerWallet: f.owner,
          record: f.record,
          journalFile,
          onStep: () => {
            saves++;
            if (saves === attempt) throw new Error(`killed after step ${attempt}`);
          },
        });
        const after = await picture(f, result.record, { cashier: cashierAbi, stock: stockAbi });
        expect(after).toEqual(before);
        expect(result.journal.reconciliation!.every((r) => r.ok)).toBe(true);
        killedAt = attempt;
        break;
      } catch (err) {
        expect((err as Error).message).toBe(`killed after step ${attempt}`);
      }
    }
    expect(killedAt).toBeGreaterThan(5);
  }, 600_000);
});

describe('a migration killed between a transaction and its record', () => {
  const fx = withStateOn('374f31d');

  test('after every transaction in turn: the rerun sends none of them twice in effect, and everything balances', async () => {
    const f = fx();
    const before = await picture(f, f.record, { cashier: f.a.Cashier.abi, stock: f.a.Stock.abi });
    const journalFile = path.join(f.dir, 'migration.json');
    let done = false;
    let kills = 0;
    for (let attempt = 1; attempt < 200 && !done; attempt++) {
      let sent = 0;
      let killed = false;
      // The node takes the transaction (it is mined), then the process dies before anything is recorded.
      const dying = new Proxy(f.client, {
        get(target, prop, receiver) {
          if (prop !== 'sendRawTransaction') return Reflect.get(target, prop, receiver);
          return async (args: Parameters<ChainPublicClient['sendRawTransaction']>[0]) => {
            const hash = await target.sendRawTransaction(args);
            if (++sent === attempt) {
              await target.waitForTransactionReceipt({ hash });
              killed = true;
              throw new Error('killed after a send');
            }
            return hash;
          };
        },
      });
      try {
        const result = await migrateLegacyVenues({ publicClient: dying, ownerWallet: f.owner, record: f.record, journalFile });
        expect(await picture(f, result.record, { cashier: cashierAbi, stock: stockAbi })).toEqual(before);
        expect(result.journal.reconciliation!.every((r) => r.ok)).toBe(true);
        done = true;
      } catch (err) {
        // The kill may surface wrapped (a deploy maps what it meets to a chain error, dropping the cause).
        expect(killed, `${(err as Error).message} ${JSON.stringify((err as { detail?: unknown }).detail ?? {})}`).toBe(true);
        kills++;
      }
    }
    expect(done).toBe(true);
    expect(kills).toBeGreaterThan(10);
  }, 900_000);
});

describe('a migration attacked at each step (issue 60)', () => {
  const fx = withStateOn('374f31d');

  test('a transfer to the new Cashier before its funding, a donation to it and the vault, deposits into the old vault after its snapshot, before and after the move: it completes, killed after every step in turn, returns every late deposit, reports the surpluses and retires the old operators', async () => {
    const f = fx();
    const c = f.record.venues.stock.contracts as Record<string, Address> & { stocks: Record<string, Address> };
    const oldVault = f.record.venues.perp.contracts.marginVault as Address;
    const [alice, bob, carol] = f.users;
    const journalFile = path.join(f.dir, 'migration.json');
    const before = await picture(f, f.record, { cashier: f.a.Cashier.abi, stock: f.a.Stock.abi });
    const usdc = (u: ChainWalletClient) => read<bigint>(f, c.cashToken, f.a.CashToken.abi, 'balanceOf', [u.account.address]);
    const wallets = { alice: await usdc(alice), bob: await usdc(bob), carol: await usdc(carol) };
    const deposit = async (u: ChainWalletClient, amount: bigint) => {
      await call(f, u, c.cashToken, f.a.CashToken.abi, 'approve', [oldVault, amount]);
      await call(f, u, oldVault, f.a.MarginVault.abi, 'deposit', [amount]);
    };
    const CASHIER_DONATION = 1n;
    /** Sent to the new Cashier between its deployment and the owner's funding: front-running the funding. */
    const CASHIER_FRONT_RUN = 3n;
    const VAULT_DONATION = parseUnits('2', 6);
    const done = new Set<string>();
    const once = async (name: string, act: () => Promise<void>) => {
      if (done.has(name)) return;
      done.add(name);
      await act();
    };
    // Each attack once, at the step it targets, in whichever attempt first reaches it.
    const attack = async (line: string) => {
      const j = readMigrationJournal(journalFile);
      if (line.startsWith('stock: the new venue is deployed')) {
        await once('cashier front-run', () => call(f, alice, c.cashToken, f.a.CashToken.abi, 'transfer', [j!.stock!.deployed!.contracts.cashier, CASHIER_FRONT_RUN]));
      }
      if (line.startsWith('stock: the new Cashier holds the cash')) {
        // The finding's attack: one unit to the freshly funded Cashier, from any wallet.
        await once('cashier donation', () => call(f, alice, c.cashToken, f.a.CashToken.abi, 'transfer', [j!.stock!.deployed!.contracts.cashier, CASHIER_DONATION]));
      }
      if (line.startsWith('perp: snapshot of the vault')) await once('deposit after the snapshot', () => deposit(carol, parseUnits('7', 6)));
      if (line.startsWith('perp: the new vault is deployed')) {
        // A deposit racing the move, and a donation to the new vault.
        await once('deposit before the move', () => deposit(bob, parseUnits('5', 6)));
        await once('vault donation', () => call(f, alice, c.cashToken, f.a.CashToken.abi, 'transfer', [j!.perp!.deployed!.contracts.marginVault, VAULT_DONATION]));
      }
      if (line.startsWith("perp: the old vault's collateral is in the new vault")) await once('deposit after the move', () => deposit(alice, parseUnits('3', 6)));
    };
    // onStep is synchronous (a kill throws from it): the attacks it queues are sent at the next
    // journal write (`durable` is awaited before each) or right after a kill, so each lands after
    // its step and before the step after it is recorded.
    const queued: string[] = [];
    const drain = async () => {
      while (queued.length > 0) await attack(queued.shift()!);
    };
    let result: Awaited<ReturnType<typeof migrateLegacyVenues>> | undefined;
    let attempts = 0;
    for (let attempt = 1; attempt < 80 && !result; attempt++) {
      attempts = attempt;
      let steps = 0;
      try {
        result = await migrateLegacyVenues({
          publicClient: f.client,
          ownerWallet: f.owner,
          record: f.record,
          journalFile,
          roles: ROLES,
          durable: drain,
          onStep: (line) => {
            queued.push(line);
            if (++steps === attempt) throw new Error(`killed after step ${attempt}`);
          },
        });
      } catch (err) {
        expect((err as Error).message).toBe(`killed after step ${attempt}`);
      }
      await drain();
    }
    expect(result, 'the migration never completed').toBeDefined();
    expect(attempts).toBeGreaterThan(5);
    expect([...done].sort()).toEqual(['cashier donation', 'cashier front-run', 'deposit after the move', 'deposit after the snapshot', 'deposit before the move', 'vault donation']);
    const { record, journal } = result!;

    // Balanced: every account's cash and stock to the unit; the surpluses reported, not refused.
    const after = await picture(f, record, { cashier: cashierAbi, stock: stockAbi });
    expect({ ...after, vault: undefined }).toEqual({ ...before, vault: undefined });
    expect(after.vault).toBe(before.vault + VAULT_DONATION);
    expect(journal.reconciliation!.every((r) => r.ok)).toBe(true);
    expect(journal.reconciliation!.filter((r) => r.surplus !== undefined && r.surplus !== '0').map((r) => [r.what.split(' ')[0], r.surplus])).toEqual([['cash', String(CASHIER_FRONT_RUN + CASHIER_DONATION)], ['vault', String(VAULT_DONATION)]]);
    // Every late deposit paid back to its depositor: their wallets hold what they held, less the donations.
    expect(journal.perp!.lateDeposits!.map((d) => [d.account, d.amount]).sort()).toEqual(
      [[carol.account.address, String(parseUnits('7', 6))], [bob.account.address, String(parseUnits('5', 6))], [alice.account.address, String(parseUnits('3', 6))]].sort(),
    );
    expect({ alice: await usdc(alice), bob: await usdc(bob), carol: await usdc(carol) }).toEqual({ alice: wallets.alice - CASHIER_FRONT_RUN - CASHIER_DONATION - VAULT_DONATION, bob: wallets.bob, carol: wallets.carol });
    // The new vault's books are the engine's: late deposits and their returns are in neither total.
    const vault = record.venues.perp.contracts.marginVault as Address;
    expect(await read<bigint>(f, vault, marginVaultAbi, 'depositedOf', [alice.account.address])).toBe(parseUnits('1000', 6));
    expect(await read<bigint>(f, vault, marginVaultAbi, 'withdrawnOf', [alice.account.address])).toBe(parseUnits('100', 6));
    expect(await read<bigint>(f, vault, marginVaultAbi, 'depositedOf', [carol.account.address])).toBe(parseUnits('1000', 6));
    expect(await read<bigint>(f, vault, marginVaultAbi, 'depositedOf', [bob.account.address])).toBe(0n);
    expect(await read<Address>(f, vault, marginVaultAbi, 'reserveRegistry')).toBe(record.venues.perp.contracts.reserveRegistry);
    // The old contracts keep no operator; the old router refuses a deposit, naming why.
    expect(await read<boolean>(f, oldVault, f.a.MarginVault.abi, 'isOperator', [f.owner.account.address])).toBe(false);
    expect(await read<boolean>(f, c.stockRouter, f.a.StockRouter.abi, 'isOperator', [f.owner.account.address])).toBe(false);
    expect(await read<boolean>(f, c.cashier, f.a.Cashier.abi, 'isOperator', [f.owner.account.address])).toBe(false);
    await expect(f.client.simulateContract({ address: c.stockRouter, abi: f.a.StockRouter.abi, functionName: 'deposit', args: [c.cashToken, parseUnits('10', 6)], account: alice.account! })).rejects.toThrow(/NotRouter/);

    // The Cashier's surplus goes to the treasury's balance through the timelock: no token moves.
    const newStock = record.venues.stock.contracts as Record<string, Address>;
    const treasury = await read<Address>(f, newStock.cashier, cashierAbi, 'treasury');
    const treasuryBefore = await read<bigint>(f, newStock.cashier, cashierAbi, 'balanceOf', [treasury]);
    const calls = await cashierSurplusSweepCalls({ publicClient: f.client, cashier: newStock.cashier, token: newStock.cashToken, amount: CASHIER_FRONT_RUN + CASHIER_DONATION, timelock: record.venues.stock.timelock!.address });
    expect(await ownerCalls({ publicClient: f.client, wallet: f.owner, calls, label: 'cashier surplus to the treasury' })).toMatchObject({ done: true });
    expect(await read<bigint>(f, newStock.cashier, cashierAbi, 'balanceOf', [treasury])).toBe(treasuryBefore + (CASHIER_FRONT_RUN + CASHIER_DONATION) * 10n ** 12n);
    expect(await read<Address>(f, newStock.cashier, cashierAbi, 'router')).toBe(newStock.stockRouter);
  }, 900_000);
});
