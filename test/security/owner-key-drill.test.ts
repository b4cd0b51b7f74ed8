/**
 * Owner-key drill (issue 43, items 3 and 7; docs/security.md, "Owner and upgrader"): the embedded
 * stack started with TIMELOCK_DELAY_S=3600 hands every stateful contract and its upgrade role to the
 * venues' timelocks. Someone holding the admin key (OPERATOR_PRIVATE_KEY) then tries the worst: the
 * Cashier re-pointed at an attacker, a 10 % fee, the vault's cap raised, an upgrade to a hostile
 * implementation. Nothing takes effect before the delay, every attempt is public at once
 * (CallScheduled, GET config's `scheduled`), a user takes its cash out of the venue while the attempts
 * wait, a canceller cancels them, and an honest change waits the delay and then takes effect.
 */
import { encodeFunctionData, erc20Abi, getAddress, parseAbiItem, type Abi, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashierAbi, marginVaultAbi, stockRouterAbi, venueTimelockAbi } from '../../src/chain/abi/generated/index.ts';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { createChainClients, type ChainPublicClient, type ChainWalletClient } from '../../src/chain/chain-client.ts';
import { TxBatch } from '../../src/chain/deploy-contracts.ts';
import { readDeploymentRecord, type DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { ownableAbi, ownerCall, statefulContractsOf, timelockCalls } from '../../src/chain/owner-actions.ts';
import { deploymentPath } from '../../src/app/chain-wiring.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';

const DELAY = 3600;
const ATTACKER = getAddress('0x000000000000000000000000000000000000dEaD');

interface Scheduled {
  operationId: string;
  contract: string;
  target: string;
  function?: string;
  args?: string[];
  readyAt: number;
}

describe('owner key drill: the timelock in front of every owner change', () => {
  let t: TestStack;
  let client: ChainPublicClient;
  let admin: ChainWalletClient;
  let record: DeploymentRecord;

  const read = <T>(address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
    client.readContract({ address, abi, functionName, args }) as Promise<T>;
  const chainNow = async () => Number((await client.getBlock()).timestamp);
  const warp = async (seconds: number) => {
    await client.request({ method: 'evm_increaseTime' as never, params: [seconds] as never });
    await client.request({ method: 'evm_mine' as never, params: [] as never });
  };
  const scheduledInConfig = async (): Promise<Scheduled[]> => {
    // A user's read-only key, as any client reads it (the reader behind it caches for 5 s).
    return (await t.readOnly.getConfig<{ scheduled: Scheduled[] }>()).scheduled;
  };

  beforeAll(async () => {
    t = await startTestStack({ TIMELOCK_DELAY_S: String(DELAY) });
    ({ publicClient: client, walletClient: admin } = (() => {
      const c = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.config.chainId, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey });
      return { publicClient: c.publicClient, walletClient: c.walletClient! };
    })());
    record = (await readDeploymentRecord(deploymentPath(t.config)))!.record;
  }, 240_000);
  afterAll(async () => {
    await t?.stop();
  });

  test('after the start every stateful contract is owned and upgraded by its venue timelock, with the configured delay', async () => {
    for (const venue of ['stock', 'perp']) {
      const tl = record.venues[venue].timelock!;
      expect(tl.minDelay).toBe(DELAY);
      expect(await read<bigint>(tl.address, venueTimelockAbi, 'getMinDelay')).toBe(BigInt(DELAY));
      const contracts = statefulContractsOf(record.venues[venue]);
      // stock: router, cashier, One Click, distributor, every Stock, the price feed hub; perp: vault, registry.
      expect(contracts.length).toBeGreaterThanOrEqual(venue === 'stock' ? 6 : 2);
      for (const c of contracts) {
        expect([c.path, await read<Address>(c.address, ownableAbi, 'owner'), await read<Address>(c.address, ownableAbi, 'upgrader')]).toEqual([c.path, tl.address, tl.address]);
      }
      // The admin key is the timelock's proposer, executor and canceller; nobody is its admin but itself.
      const roles = ['PROPOSER_ROLE', 'EXECUTOR_ROLE', 'CANCELLER_ROLE', 'DEFAULT_ADMIN_ROLE'] as const;
      const hashes = await Promise.all(roles.map((r) => read<Hex>(tl.address, venueTimelockAbi, r)));
      expect(await Promise.all(hashes.map((h) => read<boolean>(tl.address, venueTimelockAbi, 'hasRole', [h, admin.account.address])))).toEqual([true, true, true, false]);
      expect(await read<boolean>(tl.address, venueTimelockAbi, 'hasRole', [hashes[3], tl.address])).toBe(true);
    }
  });

  test('the admin key takes nothing before the delay, every attempt is public, and a canceller cancels it', async () => {
    const stock = record.venues.stock.contracts as { cashier: Address; stockRouter: Address };
    const vault = record.venues.perp.contracts.marginVault as Address;
    const stockTimelock = record.venues.stock.timelock!.address;
    const perpTimelock = record.venues.perp.timelock!.address;
    const routerBefore = await read<Address>(stock.cashier, cashierAbi, 'router');
    const feeBefore = await read<{ marketFeeBps: number; limitFeeBps: number }>(stock.stockRouter, stockRouterAbi, 'feeConfig');
    const capBefore = await read<readonly [bigint, bigint]>(vault, marginVaultAbi, 'withdrawalCap').catch(() => undefined);
    // A user with cash in the venue before the attack: it must be able to leave during the delay.
    const user = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.config.chainId, operatorPrivateKey: t.demo.wallets[2].privateKey }).walletClient!;
    const cash = (record.venues.stock.contracts as { cashToken: Address }).cashToken;
    const send = async (address: Address, abi: Abi, functionName: string, args: readonly unknown[]) => {
      const hash = await user.writeContract({ address, abi, functionName, args, account: user.account, chain: user.chain } as never);
      expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success');
    };
    const DEPOSIT = 250_000_000n; // 250 USDC (6 decimals)
    await send(cash, erc20Abi, 'approve', [stock.stockRouter, DEPOSIT]);
    await send(stock.stockRouter, stockRouterAbi, 'deposit', [cash, DEPOSIT]);

    // 1. Directly: every onlyOwner function refuses the admin key.
    for (const [to, abi, fn, args] of [
      [stock.cashier, cashierAbi, 'setRouter', [ATTACKER]],
      [stock.stockRouter, stockRouterAbi, 'setFeeConfig', [{ marketFeeBps: 1000, limitFeeBps: 1000 }]],
      [vault, marginVaultAbi, 'setWithdrawalCap', [10n ** 18n, 60n]],
    ] as const) {
      await expect(client.simulateContract({ address: to, abi: abi as Abi, functionName: fn, args: args as never, account: admin.account })).rejects.toThrow(/OwnableUnauthorizedAccount/);
    }
    // An upgrade to a hostile implementation (the Cashier's code behind the StockRouter's proxy).
    const tx = await TxBatch.open(client, admin);
    const hostile = await tx.deployImplementation('Cashier', []);
    await tx.finish();
    const upgradeData = encodeFunctionData({ abi: stockRouterAbi, functionName: 'upgradeToAndCall', args: [hostile, '0x'] });
    await expect(client.call({ account: admin.account, to: stock.stockRouter, data: upgradeData })).rejects.toThrow(/NotUpgrader|revert/);

    // 2. Through the timelock: scheduled, not executed.
    const t0 = await chainNow();
    const setRouter = await ownerCall({ publicClient: client, wallet: admin, target: stock.cashier, abi: cashierAbi, functionName: 'setRouter', args: [ATTACKER] });
    const setFee = await ownerCall({ publicClient: client, wallet: admin, target: stock.stockRouter, abi: stockRouterAbi, functionName: 'setFeeConfig', args: [{ marketFeeBps: 1000, limitFeeBps: 1000 }] });
    const setCap = await ownerCall({ publicClient: client, wallet: admin, target: vault, abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [10n ** 18n, 60n] });
    const upgrade = await timelockCalls({ publicClient: client, wallet: admin, timelock: stockTimelock, calls: [{ target: stock.stockRouter, data: upgradeData }] });
    for (const r of [setRouter, setFee, setCap, upgrade]) {
      expect(r.done).toBe(false);
      if (r.done) continue;
      expect(r.readyAt).toBeGreaterThanOrEqual(t0 + DELAY);
      expect(r.readyAt).toBeLessThanOrEqual(t0 + DELAY + 60);
    }
    expect(await read<Address>(stock.cashier, cashierAbi, 'router')).toBe(routerBefore);
    expect(await read<unknown>(stock.stockRouter, stockRouterAbi, 'feeConfig')).toEqual(feeBefore);

    // Visible at once: the CallScheduled events and GET config's `scheduled`.
    const event = parseAbiItem('event CallScheduled(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data, bytes32 predecessor, uint256 delay)');
    const logs = [
      ...(await client.getLogs({ address: stockTimelock, event, fromBlock: 0n })),
      ...(await client.getLogs({ address: perpTimelock, event, fromBlock: 0n })),
    ];
    const ids = [setRouter, setFee, setCap, upgrade].map((r) => (r.done ? undefined : r.operationId));
    for (const id of ids) expect(logs.some((l) => l.args.id === id && l.args.delay === BigInt(DELAY))).toBe(true);
    const shown = await scheduledInConfig();
    const byId = (r: typeof setRouter) => shown.find((s) => !r.done && s.operationId === r.operationId);
    expect(byId(setRouter)).toMatchObject({ contract: 'stock.cashier', function: 'setRouter', args: [ATTACKER] });
    expect(byId(setFee)).toMatchObject({ contract: 'stock.stockRouter', function: 'setFeeConfig', args: ['{"marketFeeBps":1000,"limitFeeBps":1000}'] });
    expect(byId(setCap)).toMatchObject({ contract: 'perp.marginVault', function: 'setWithdrawalCap', args: ['1000000000000000000', '60'] });
    expect(byId(upgrade)).toMatchObject({ contract: 'stock.stockRouter', function: 'upgradeToAndCall', args: [hostile, '0x'] });
    for (const r of [setRouter, setFee, setCap, upgrade]) if (!r.done) expect(byId(r)!.readyAt).toBe(r.readyAt * 1000);

    // 3. Half the delay later: still not executable, by the app's path or by a direct execute.
    await warp(DELAY / 2);
    expect((await ownerCall({ publicClient: client, wallet: admin, target: stock.cashier, abi: cashierAbi, functionName: 'setRouter', args: [ATTACKER] })).done).toBe(false);
    await expect(client.simulateContract({ address: stockTimelock, abi: venueTimelockAbi, functionName: 'execute', args: [stock.cashier, 0n, encodeFunctionData({ abi: cashierAbi, functionName: 'setRouter', args: [ATTACKER] }), `0x${'0'.repeat(64)}`, `0x${'0'.repeat(64)}`], account: admin.account })).rejects.toThrow();
    expect(await read<Address>(stock.cashier, cashierAbi, 'router')).toBe(routerBefore);

    // Users can still exit while the hostile changes wait: the user takes its whole free cash out of
    // the venue by its own transaction, between the warps (paid at once from the withdrawal buffer,
    // or queued and paid by the executor).
    const free = await read<bigint>(stock.cashier, cashierAbi, 'balanceOf', [user.account.address]);
    expect(free).toBeGreaterThanOrEqual(DEPOSIT * 10n ** 12n);
    const out = free / 10n ** 12n;
    const walletBefore = await read<bigint>(cash, erc20Abi, 'balanceOf', [user.account.address]);
    const { result: withdrawal } = await client.simulateContract({ address: stock.stockRouter, abi: stockRouterAbi, functionName: 'withdraw', args: [cash, out], account: user.account });
    await send(stock.stockRouter, stockRouterAbi, 'withdraw', [cash, out]);
    if (!withdrawal[0]) await until(() => read<bigint>(cash, erc20Abi, 'balanceOf', [user.account.address]), (b) => b > walletBefore, 30_000);
    expect(await read<bigint>(cash, erc20Abi, 'balanceOf', [user.account.address])).toBe(walletBefore + out);
    expect(await read<bigint>(stock.cashier, cashierAbi, 'balanceOf', [user.account.address])).toBe(free - out * 10n ** 12n);

    // 4. The canceller cancels the hostile ones; they leave GET config.
    for (const [tl, r] of [[stockTimelock, setRouter], [stockTimelock, upgrade], [perpTimelock, setCap]] as const) {
      if (r.done) throw new Error('unexpectedly executed');
      const hash = await admin.writeContract({ address: tl, abi: venueTimelockAbi, functionName: 'cancel', args: [r.operationId], account: admin.account, chain: admin.chain });
      expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success');
    }
    // GET config caches its list for 5 s: wait for the refresh that no longer holds the cancelled ones.
    const cancelled: string[] = [setRouter, upgrade, setCap].map((r) => (r.done ? '' : r.operationId));
    const left = await until(scheduledInConfig, (list) => !list.some((x) => cancelled.includes(x.operationId)), 30_000);
    expect(left.map((s) => s.operationId)).toContain(setFee.done ? '' : setFee.operationId);
    for (const r of [setRouter, upgrade, setCap]) expect(left.map((s) => s.operationId)).not.toContain(r.done ? '' : r.operationId);

    // 5. After the delay the change left standing takes effect; the cancelled ones never did.
    await warp(DELAY / 2 + 5);
    expect(await ownerCall({ publicClient: client, wallet: admin, target: stock.stockRouter, abi: stockRouterAbi, functionName: 'setFeeConfig', args: [{ marketFeeBps: 1000, limitFeeBps: 1000 }] })).toMatchObject({ done: true, via: 'timelock' });
    expect(await read<{ marketFeeBps: number }>(stock.stockRouter, stockRouterAbi, 'feeConfig')).toMatchObject({ marketFeeBps: 1000, limitFeeBps: 1000 });
    expect(await read<Address>(stock.cashier, cashierAbi, 'router')).toBe(routerBefore);
    // The cap and its period, which the cancelled change meant to raise; the window's start and its
    // running total move with the clock (the warps above may cross a UTC day).
    if (capBefore !== undefined) expect((await read<readonly bigint[]>(vault, marginVaultAbi, 'withdrawalCap')).slice(0, 2)).toEqual(capBefore.slice(0, 2));
    expect((await client.getStorageAt({ address: stock.stockRouter, slot: '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc' }))?.toLowerCase()).not.toContain(hostile.slice(2).toLowerCase());
  }, 120_000);
});
