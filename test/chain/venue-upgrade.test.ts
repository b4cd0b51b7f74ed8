/**
 * Contracts behind proxies on a real anvil (docs/upgrades.md): a new deployment records each proxy's
 * implementation and code hash; implementations cannot be initialized or used directly; only the
 * upgrade authority upgrades, and it hands the role over in two steps; an upgrade keeps every
 * balance and order at the proxy's address, is resumable after a stop between its steps, is refused
 * for an incompatible storage layout, and a record from a newer release is refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BaseError, ContractFunctionRevertedError, encodeFunctionData, parseUnits, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashierAbi, cashTokenAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createChainWallet } from '../../src/chain/chain-client.ts';
import type { DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { readDeploymentRecord, writeDeploymentRecord } from '../../src/chain/deployment-file.ts';
import { buildCodeHash } from '../../src/chain/venue-code.ts';
import { venueBootstrapAddress } from '../../src/chain/deploy-contracts.ts';
import { applyUpgrade, assertNotNewer, implementationOf, planUpgrade, planIsEmpty } from '../../src/chain/venue-upgrade.ts';
import { checkUpgradeLayout, layoutManifestPath, recordDeployedLayouts } from '../../src/chain/upgrade-layout-check.ts';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';

/** The custom error a call reverted with, or undefined. */
function revertName(err: unknown): string | undefined {
  if (err instanceof BaseError) {
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName;
  }
  return undefined;
}

async function reverted(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run();
  } catch (err) {
    return revertName(err) ?? (err as Error).message;
  }
  return 'did not revert';
}

let f: ChainFixture;
let dir: string;

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 2) });
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokex-upgrade-'));
}, 120_000);

afterAll(async () => {
  await f?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function recordOf(): DeploymentRecord {
  const { chainId, ...stock } = f.deployment;
  return structuredClone({ chainId, venues: { stock } }) as DeploymentRecord;
}

describe('a new deployment', () => {
  test('records this release, and each proxy its implementation and code hash', async () => {
    const d = f.deployment;
    expect(d.release).toBe(APP_VERSION);
    const code = d.code!;
    expect(Object.keys(code).sort()).toEqual(['accountLens', 'cashier', 'dividendDistributor', 'oneClickRouter', 'stockRouter', ...Object.keys(d.contracts.stocks).map((s) => `stocks.${s}`)].sort());
    for (const [p, entry] of Object.entries(code)) {
      expect(entry.codeHash).toBe(buildCodeHash(entry.contract as never));
      if (p === 'accountLens') {
        expect(entry.implementation).toBeUndefined();
        continue;
      }
      const address = p.startsWith('stocks.') ? d.contracts.stocks[p.slice(7)] : (d.contracts as unknown as Record<string, Address>)[p];
      expect((await implementationOf(f.publicClient, address)).toLowerCase()).toBe(entry.implementation!.toLowerCase());
    }
    // Every Stock proxy of the venue shares one implementation.
    const stocks = Object.keys(d.contracts.stocks).map((s) => code[`stocks.${s}`].implementation);
    expect(new Set(stocks).size).toBe(1);
    expect(planIsEmpty(planUpgrade(recordOf()))).toBe(true);
  });

  test('an implementation cannot be initialized, and refuses a user call that would take tokens', async () => {
    const impl = f.deployment.code!.stockRouter.implementation!;
    expect(await reverted(() => f.publicClient.simulateContract({ address: f.deployment.code!.cashier.implementation!, abi: cashierAbi, functionName: 'initialize', args: [f.users[0].address, f.users[0].address, false], account: f.users[0].address }))).toBe('InvalidInitialization');
    expect(await reverted(() => f.publicClient.simulateContract({ address: impl, abi: stockRouterAbi, functionName: 'deposit', args: [f.deployment.contracts.cashToken, 1_000_000n], account: f.users[0].address }))).toBe('ImplementationCalledDirectly');
    // The proxy was initialized in its constructor: a second initialize is refused too.
    expect(await reverted(() => f.publicClient.simulateContract({ address: f.deployment.contracts.cashier, abi: cashierAbi, functionName: 'initialize', args: [f.users[0].address, f.users[0].address, false], account: f.users[0].address }))).toBe('InvalidInitialization');
  });

  test('only the upgrade authority upgrades, and it hands the role over in two steps', async () => {
    const router = f.deployment.contracts.stockRouter;
    const snap = await f.snapshot();
    try {
      const impl = f.deployment.code!.stockRouter.implementation!;
      const stranger = f.users[1];
      expect(await reverted(() => f.publicClient.simulateContract({ address: router, abi: stockRouterAbi, functionName: 'upgradeToAndCall', args: [impl, '0x'], account: stranger.address }))).toBe('NotUpgrader');
      // The owner of the configuration is not the authority once it has moved.
      const owner = f.operator;
      const hash = await owner.writeContract({ address: router, abi: stockRouterAbi, functionName: 'transferUpgrader', args: [stranger.address], account: owner.account, chain: owner.chain });
      await f.publicClient.waitForTransactionReceipt({ hash });
      expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'upgrader' })).toBe(owner.account.address);
      const accept = await stranger.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'acceptUpgrader', account: stranger.wallet.account, chain: stranger.wallet.chain });
      await f.publicClient.waitForTransactionReceipt({ hash: accept });
      expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'upgrader' })).toBe(stranger.address);
      expect(await reverted(() => f.publicClient.simulateContract({ address: router, abi: stockRouterAbi, functionName: 'upgradeToAndCall', args: [impl, '0x'], account: owner.account.address }))).toBe('NotUpgrader');
      // applyUpgrade with the owner's key names the authority and the call it must send.
      const record = recordOf();
      record.venues.stock.code!.stockRouter = { ...record.venues.stock.code!.stockRouter, codeHash: `0x${'11'.repeat(32)}` };
      await expect(applyUpgrade({ publicClient: f.publicClient, upgraderWallet: owner, record, save: async () => {} })).rejects.toThrow(
        new RegExp(`the upgrade authority is ${stranger.address}.*send to ${router} the data 0x`),
      );
    } finally {
      await f.revert(snap);
    }
  });
});

describe('an upgrade in place', () => {
  test('installs a new implementation behind each changed proxy, keeps every balance and order, and a rerun does nothing', async () => {
    const snap = await f.snapshot();
    try {
      const d = f.deployment;
      const user = f.users[0];
      const stock = d.contracts.stocks[DEMO_SYMBOLS[0].symbol];
      const send = async (to: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[]) => {
        const hash = await user.wallet.sendTransaction({ to, data: encodeFunctionData({ abi: abi as never, functionName, args } as never), account: user.wallet.account, chain: user.wallet.chain });
        const r = await f.publicClient.waitForTransactionReceipt({ hash });
        expect(r.status).toBe('success');
      };
      await send(d.contracts.cashToken, cashTokenAbi, 'approve', [d.contracts.stockRouter, parseUnits('1000', 6)]);
      await send(d.contracts.stockRouter, stockRouterAbi, 'deposit', [d.contracts.cashToken, parseUnits('500', 6)]);
      await send(d.contracts.stockRouter, stockRouterAbi, 'placeLimitOrder', [stock, 0, parseUnits('1', 18), parseUnits('100', 18), 0, 4_000_000_000]);
      const orderId = (await f.publicClient.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' })) - 1n;
      const before = {
        free: await f.publicClient.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user.address] }),
        locked: await f.publicClient.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'lockedOf', args: [user.address] }),
        order: await f.publicClient.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [orderId] }),
        shares: await f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'balanceOf', args: [user.address] }),
      };
      expect(before.locked).toBeGreaterThan(0n);

      // The record says the router and the stocks run other code than this build's (an earlier release's).
      const file = path.join(dir, 'upgrade.json');
      const record = recordOf();
      const older: Hex = `0x${'22'.repeat(32)}`;
      record.venues.stock.release = '0.2.0-alpha.1';
      for (const p of ['stockRouter', `stocks.${DEMO_SYMBOLS[0].symbol}`, `stocks.${DEMO_SYMBOLS[1].symbol}`]) record.venues.stock.code![p] = { ...record.venues.stock.code![p], codeHash: older };
      await writeDeploymentRecord(file, record);
      const plan = planUpgrade(record);
      expect(plan.venues).toEqual([expect.objectContaining({ venue: 'stock', state: 'upgrade', steps: expect.any(Array) })]);
      const steps = plan.venues[0].state === 'upgrade' ? plan.venues[0].steps : [];
      expect(steps.map((s) => [s.path, s.kind])).toEqual([['stockRouter', 'implementation'], [`stocks.${DEMO_SYMBOLS[0].symbol}`, 'implementation'], [`stocks.${DEMO_SYMBOLS[1].symbol}`, 'implementation']]);

      const oldRouterImpl = d.code!.stockRouter.implementation!;
      const { done } = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record, save: (r) => writeDeploymentRecord(file, r) });
      expect(done).toHaveLength(3);
      const saved = (await readDeploymentRecord(file))!.record.venues.stock;
      expect(saved.release).toBe(APP_VERSION);
      const newRouterImpl = saved.code!.stockRouter.implementation!;
      expect(newRouterImpl.toLowerCase()).not.toBe(oldRouterImpl.toLowerCase());
      expect((await implementationOf(f.publicClient, d.contracts.stockRouter)).toLowerCase()).toBe(newRouterImpl.toLowerCase());
      // One new Stock implementation for both stocks.
      expect(saved.code![`stocks.${DEMO_SYMBOLS[0].symbol}`].implementation).toBe(saved.code![`stocks.${DEMO_SYMBOLS[1].symbol}`].implementation);
      expect(saved.code!.stockRouter.next).toBeUndefined();

      // The Upgraded event is on the proxy's log: the deterministic proxy's bootstrap first
      // (docs/contracts.md, "Same addresses on every chain"), then each implementation.
      const logs = await f.publicClient.getLogs({ address: d.contracts.stockRouter, event: stockRouterAbi.find((e) => e.type === 'event' && e.name === 'Upgraded') as never, fromBlock: 0n });
      expect(logs.map((l) => (l as unknown as { args: { implementation: Address } }).args.implementation.toLowerCase())).toEqual([venueBootstrapAddress().toLowerCase(), oldRouterImpl.toLowerCase(), newRouterImpl.toLowerCase()]);

      expect(await f.publicClient.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user.address] })).toBe(before.free);
      expect(await f.publicClient.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'lockedOf', args: [user.address] })).toBe(before.locked);
      expect(await f.publicClient.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [orderId] })).toEqual(before.order);
      expect(await f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'balanceOf', args: [user.address] })).toBe(before.shares);
      // The order still settles through the upgraded router.
      const settlement = { address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId, quantity: parseUnits('1', 18), price: parseUnits('100', 18) }], [{ orderId, status: 3 }]], account: f.operator.account } as const;
      // Half again the estimate, as every settlement in the tests (chain-test-helpers' settlementGas).
      const gas = ((await f.publicClient.estimateContractGas(settlement)) * 3n) / 2n;
      const fill = await f.operator.writeContract({ ...settlement, chain: f.operator.chain, gas });
      expect((await f.publicClient.waitForTransactionReceipt({ hash: fill })).status).toBe('success');
      expect(await f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'stockBalance', args: [user.address] })).toBe(parseUnits('1', 18));

      const again = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record: (await readDeploymentRecord(file))!.record, save: (r) => writeDeploymentRecord(file, r) });
      expect(again.done).toEqual([]);
    } finally {
      await f.revert(snap);
    }
  });

  test('a run stopped after the new implementation was deployed installs that one on the rerun', async () => {
    const snap = await f.snapshot();
    try {
      const file = path.join(dir, 'resume.json');
      const record = recordOf();
      record.venues.stock.code!.cashier = { ...record.venues.stock.code!.cashier, codeHash: `0x${'33'.repeat(32)}` };
      await writeDeploymentRecord(file, record);
      let saves = 0;
      // The crash: the record is saved with the new implementation noted, then the process dies.
      await expect(
        applyUpgrade({
          publicClient: f.publicClient,
          upgraderWallet: f.operator,
          record,
          save: async (r) => {
            await writeDeploymentRecord(file, r);
            if (++saves === 1) throw new Error('killed');
          },
        }),
      ).rejects.toThrow('killed');
      const halfway = (await readDeploymentRecord(file))!.record;
      const next = halfway.venues.stock.code!.cashier.next!;
      expect(next).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect((await implementationOf(f.publicClient, f.deployment.contracts.cashier)).toLowerCase()).toBe(f.deployment.code!.cashier.implementation!.toLowerCase());
      const nonceBefore = await f.publicClient.getTransactionCount({ address: f.operator.account.address });
      const { done } = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record: halfway, save: (r) => writeDeploymentRecord(file, r) });
      expect(done.map((s) => s.path)).toEqual(['cashier']);
      // One transaction: the upgrade call; the implementation was not deployed a second time.
      expect(await f.publicClient.getTransactionCount({ address: f.operator.account.address })).toBe(nonceBefore + 1);
      expect((await implementationOf(f.publicClient, f.deployment.contracts.cashier)).toLowerCase()).toBe(next.toLowerCase());
    } finally {
      await f.revert(snap);
    }
  });

  test('an incompatible storage layout is refused before anything is sent, naming the variable', async () => {
    const file = path.join(dir, 'layout.json');
    const record = recordOf();
    await writeDeploymentRecord(file, record);
    recordDeployedLayouts(record, file);
    const older: Hex = `0x${'44'.repeat(32)}`;
    // The deployed Cashier's layout as noted, with a variable the build no longer has at its slot.
    const manifestFile = layoutManifestPath(file);
    const manifest = JSON.parse((await import('node:fs')).readFileSync(manifestFile, 'utf8')) as Record<string, { contract: string; layout: { storage: Array<{ label: string; type: string; slot?: string; offset?: number }> } }>;
    const cashier = structuredClone(manifest[buildCodeHash('Cashier')]);
    const first = cashier.layout.storage[0];
    cashier.layout.storage.unshift({ ...first, label: 'retiredCounter' });
    manifest[older] = cashier;
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const step = { venue: 'stock', path: 'cashier', contract: 'Cashier' as const, address: f.deployment.contracts.cashier, kind: 'implementation' as const, fromCodeHash: older, toCodeHash: buildCodeHash('Cashier') };
    expect(() => checkUpgradeLayout(step, file)).toThrow(/retiredCounter/);
    // The compatible case passes.
    expect(() => checkUpgradeLayout({ ...step, fromCodeHash: buildCodeHash('Cashier') }, file)).not.toThrow();
  });

  test('a record written by a newer release is refused, naming both versions', () => {
    const record = recordOf();
    record.venues.stock.release = '99.0.0';
    expect(() => assertNotNewer(planUpgrade(record))).toThrow(`deployed or upgraded by tokex 99.0.0; this is tokex ${APP_VERSION}`);
  });

  test('a key that is not the authority cannot upgrade even with the call in hand', async () => {
    const stranger = createChainWallet(f.users[2].privateKey, { chain: f.chain, rpcUrl: f.rpcUrl });
    expect(await reverted(() => f.publicClient.simulateContract({ address: f.deployment.contracts.cashier, abi: cashierAbi, functionName: 'upgradeToAndCall', args: [f.deployment.code!.cashier.implementation!, '0x'], account: stranger.account.address }))).toBe('NotUpgrader');
  });
});
