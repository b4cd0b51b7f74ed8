/**
 * Keys hold exactly the roles docs/security.md gives them (issue 60): the table of
 * src/chain/venue-roles.ts is the one in the docs; a freshly started embedded venue answers on chain
 * exactly that table (the deployer an operator of nothing); a venue deployed as 0.2.0 did it (the
 * deployer an operator of the StockRouter, Cashier, DividendDistributor, MarginVault and
 * ReserveRegistry) has it revoked by the admin's start, through the timelock and only after its delay.
 * The migrated 0.1.0 venue's roles are checked in legacy-migration.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashierAbi, dividendDistributorAbi, marginVaultAbi, reserveRegistryAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, EXECUTOR_ACCOUNT, GUARDIAN_ACCOUNT, ORACLE_PUBLISHER_ACCOUNT, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { createChainClients, SETUP_RPC_TIMEOUT_MS, type ChainPublicClient, type ChainWalletClient } from '../../src/chain/chain-client.ts';
import { ensureVenues, stockVenueDeployer } from '../../src/chain/deploy-contracts.ts';
import { perpVenueDeployer } from '../../src/chain/deploy-perp-venue.ts';
import { readDeploymentRecord, type DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { readScheduledCalls } from '../../src/chain/owner-actions.ts';
import { expectedVenueRoles, readVenueRoles, renderRoleTables, ROLE_TABLE_END, ROLE_TABLE_START, type RoleKey } from '../../src/chain/venue-roles.ts';
import { deploymentPath } from '../../src/app/chain-wiring.ts';
import { sealOwnership } from '../../src/app/seal-ownership.ts';
import type { AppConfig } from '../../src/config/app-config.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const KEYS: Record<RoleKey, Address> = {
  admin: OPERATOR_ACCOUNT.address,
  executor: EXECUTOR_ACCOUNT.address,
  'perp-operator': ANVIL_ACCOUNTS[6].address,
  relayer: ANVIL_ACCOUNTS[7].address,
  'oracle-publisher': ORACLE_PUBLISHER_ACCOUNT.address,
  guardian: GUARDIAN_ACCOUNT.address,
};
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('the role table', () => {
  test("docs/security.md's table is the one rendered from src/chain/venue-roles.ts", () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8');
    const start = doc.indexOf(ROLE_TABLE_START);
    const end = doc.indexOf(ROLE_TABLE_END);
    expect(start).toBeGreaterThan(0);
    expect(doc.slice(start + ROLE_TABLE_START.length, end)).toBe(`\n${renderRoleTables()}\n`);
  });
});

describe('a fresh embedded venue', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  }, 240_000);
  afterAll(async () => {
    await t?.stop();
  });

  test('answers on chain exactly the table: the deployer is an operator of nothing', async () => {
    const { publicClient } = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.config.chainId });
    const record = (await readDeploymentRecord(deploymentPath(t.config)))!.record;
    // The oracle's hub is part of it (set up by the executor's start), so its publisher is read too.
    expect((record.venues.stock.contracts as { priceFeedHub?: Address }).priceFeedHub).toBeDefined();
    const onChain = await readVenueRoles({ publicClient, record, keys: KEYS });
    expect(onChain).toEqual(expectedVenueRoles(record));
    expect(onChain.filter((r) => r.holders.includes('admin')).map((r) => `${r.venue} ${r.path} ${r.role}`)).toEqual([
      'perp timelock canceller', 'perp timelock executor', 'perp timelock proposer',
      'stock cashier treasury', 'stock timelock canceller', 'stock timelock executor', 'stock timelock proposer',
    ]);
  }, 120_000);
});

describe('a venue deployed as 0.2.0 did it (the deployer an operator)', () => {
  let anvil: AnvilHandle;
  let client: ChainPublicClient;
  let admin: ChainWalletClient;
  let record: DeploymentRecord;
  let dir: string;
  const DELAY = 3600;
  const logs: string[] = [];
  const logger = { info: (o: unknown, m?: string) => void logs.push(`info ${m ?? o}`), warn: (o: unknown, m?: string) => void logs.push(`warn ${typeof o === 'string' ? o : m}`), error: (o: unknown, m?: string) => void logs.push(`error ${m ?? o}`) };
  const OPERATED: Array<[string, 'stock' | 'perp', string, typeof stockRouterAbi | typeof cashierAbi | typeof dividendDistributorAbi | typeof marginVaultAbi | typeof reserveRegistryAbi]> = [
    ['stockRouter', 'stock', 'stockRouter', stockRouterAbi],
    ['cashier', 'stock', 'cashier', cashierAbi],
    ['dividendDistributor', 'stock', 'dividendDistributor', dividendDistributorAbi],
    ['marginVault', 'perp', 'marginVault', marginVaultAbi],
    ['reserveRegistry', 'perp', 'reserveRegistry', reserveRegistryAbi],
  ];
  const deployerIsOperator = async () =>
    Promise.all(OPERATED.map(async ([, venue, p, abi]) => client.readContract({ address: (record.venues[venue].contracts as Record<string, Address>)[p], abi, functionName: 'isOperator', args: [OPERATOR_ACCOUNT.address] } as never) as Promise<boolean>));
  const seal = () =>
    sealOwnership({
      config: { timelockDelayS: DELAY, deploymentFile: path.join(dir, 'record.json'), dataDir: dir, chainId: 31337 } as AppConfig,
      logger,
      chain: { publicClient: client, record, walletFor: () => admin, addressOf: (s) => (s === 'deployer' ? KEYS.admin : s === 'executor' ? KEYS.executor : s === 'perp-operator' ? KEYS['perp-operator'] : undefined) },
    });

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 31337 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'tokex-roles-'));
    const c = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20, timeoutMs: SETUP_RPC_TIMEOUT_MS });
    client = c.publicClient;
    admin = c.walletClient!;
    // What 0.2.0's deployment made: the deployer an operator of the stock venue beside the executor,
    // and of the vault and registry beside the perp operator (a migration copied it there).
    ({ record } = await ensureVenues({
      publicClient: client,
      walletClient: admin,
      venues: [
        stockVenueDeployer({ symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [], options: { operators: [KEYS.executor], deployerOperator: true, guardian: KEYS.guardian, requireOracle: false } }),
        perpVenueDeployer({ operators: [KEYS['perp-operator'], KEYS.admin], guardian: KEYS.guardian }),
      ],
    }));
  }, 180_000);
  afterAll(async () => {
    await anvil?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the admin's start revokes it through the timelock: scheduled, public, applied after the delay, and then the chain is the table", async () => {
    expect(await deployerIsOperator()).toEqual([true, true, true, true, true]);
    await seal();
    // Handed over and the delay set: the revocation waits it like every owner change.
    expect(await deployerIsOperator()).toEqual([true, true, true, true, true]);
    expect(logs.filter((l) => l.startsWith('warn the admin key\'s operator roles: revocation scheduled in the timelock, executable at'))).toHaveLength(1);
    const scheduled = await readScheduledCalls({ publicClient: client, record, abis: [stockRouterAbi, cashierAbi, dividendDistributorAbi, marginVaultAbi, reserveRegistryAbi] });
    expect(scheduled.map((s) => [s.contract, s.functionName, s.args])).toEqual(
      expect.arrayContaining(OPERATED.map(([name, venue]) => [`${venue}.${name}`, 'setOperator', [OPERATOR_ACCOUNT.address, 'false']])),
    );
    expect(scheduled).toHaveLength(5);
    // A second start before the delay schedules nothing more.
    await seal();
    expect(await readScheduledCalls({ publicClient: client, record, abis: [] })).toHaveLength(5);

    await client.request({ method: 'evm_increaseTime' as never, params: [DELAY + 1] as never });
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    await seal();
    expect(await deployerIsOperator()).toEqual([false, false, false, false, false]);
    expect(logs).toContain("info the admin key is no operator of the venues' contracts any more");
    // The admin key can no longer settle: a close (what it did to a user's order as Expired) reverts.
    const stockRouter = (record.venues.stock.contracts as Record<string, Address>).stockRouter;
    await expect(client.simulateContract({ account: admin.account, address: stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: [[], []] })).rejects.toThrow(/NotOperator/);
    // The chain is now the table: the configured keys only (no hub in this record: no publisher row).
    expect(await readVenueRoles({ publicClient: client, record, keys: KEYS })).toEqual(expectedVenueRoles(record));
  }, 180_000);
});
