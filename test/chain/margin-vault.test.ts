/**
 * The perpetual venue's MarginVault on a real anvil: deposits credit the sender and emit
 * `Deposited`, the custom errors of a bad deposit, withdrawals paid only by an operator and only once
 * per id; and the venue deployed by ensureVenues beside the stock venue (its cash token as the
 * collateral, the perp operator granted, the demo deposit made from the demo wallet), reused on a
 * restart and deployed anew when the stock venue is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keccak256, parseEventLogs, toHex, zeroHash, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashTokenAbi, marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { ensureVenues, stockDeploymentOf, stockVenueDeployer, type VenueDeployer } from '../../src/chain/deploy-contracts.ts';
import { DEMO_PERP_DEPOSIT, grantPerpOperators, perpDeploymentOf, perpVenueDeployer, type PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { readDeploymentRecord, writeDeploymentRecord } from '../../src/chain/deployment-file.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { startChainFixture, revertEachTest, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, PERP_OPERATOR, perpOperatorWallet, vaultDeposit, vaultWithdraw } from '../support/perp-venue.ts';
import { expectRevert, usdc, usdcOf } from './chain-test-helpers.ts';

let f: ChainFixture;
let perp: PerpDeployment;
let bob: ChainUser;
let carol: ChainUser;
let tmp: string;

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
  perp = await deployPerpVenue(f);
  [, bob, carol] = f.users;
  tmp = mkdtempSync(path.join(tmpdir(), 'margin-vault-'));
});
afterAll(async () => {
  await f?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});
revertEachTest(() => f);

const vault = () => perp.contracts.marginVault;
const read = <T>(functionName: string, args: readonly unknown[] = []): Promise<T> =>
  f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
const id = (s: string) => keccak256(toHex(s));

describe('the perp venue as deployed', () => {
  test('the vault takes the stock venue’s cash token, the perp operator pays, the deployer owns', async () => {
    expect(perp.contracts.collateralToken).toBe(f.deployment.contracts.cashToken);
    expect(perp.operator).toBe(OPERATOR_ACCOUNT.address);
    expect(perp.chainId).toBe(f.chainId);
    expect((await read<Address>('collateralToken')).toLowerCase()).toBe(f.deployment.contracts.cashToken.toLowerCase());
    expect(await read<Address>('owner')).toBe(OPERATOR_ACCOUNT.address);
    expect(await read<boolean>('isOperator', [PERP_OPERATOR.address])).toBe(true);
    expect(await read<boolean>('isOperator', [OPERATOR_ACCOUNT.address])).toBe(false);
    expect(await read<boolean>('isOperator', [ANVIL_ACCOUNTS[8].address])).toBe(false);
  });

  test('the demo wallet deposited 10,000 USDC itself, after the recorded deployment block', async () => {
    expect(DEMO_PERP_DEPOSIT).toBe(usdc('10000'));
    expect(await read<bigint>('depositedOf', [DEMO_WALLETS[0].address])).toBe(usdc('10000'));
    expect(await read<bigint>('totalDeposited')).toBe(usdc('10000'));
    expect(await usdcOf(f, vault())).toBe(usdc('10000'));
    // Minted for the deposit: the wallet keeps the stock venue's demo cash.
    expect(await usdcOf(f, DEMO_WALLETS[0].address)).toBe(usdc('100000'));
    const logs = await f.publicClient.getContractEvents({ address: vault(), abi: marginVaultAbi, eventName: 'Deposited', fromBlock: 0n });
    expect(logs).toHaveLength(1);
    expect(logs[0].args).toEqual({ account: DEMO_WALLETS[0].address, amount: usdc('10000') });
    const tx = await f.publicClient.getTransaction({ hash: logs[0].transactionHash });
    expect(tx.from.toLowerCase()).toBe(DEMO_WALLETS[0].address.toLowerCase());
    expect(logs[0].blockNumber).toBeGreaterThan(BigInt(perp.blockNumber));
  });
});

describe('deposit', () => {
  test('credits the sender, moves the tokens and emits Deposited', async () => {
    const before = await usdcOf(f, bob.address);
    const receipt = await vaultDeposit(f, perp, bob, usdc('250.5'));
    const events = parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'Deposited' });
    expect(events.map((e) => e.args)).toEqual([{ account: bob.address, amount: usdc('250.5') }]);
    expect(events[0].address.toLowerCase()).toBe(vault().toLowerCase());
    expect(await usdcOf(f, bob.address)).toBe(before - usdc('250.5'));
    expect(await usdcOf(f, vault())).toBe(usdc('10250.5'));
    expect(await read<bigint>('depositedOf', [bob.address])).toBe(usdc('250.5'));
    expect(await read<bigint>('totalDeposited')).toBe(usdc('10250.5'));
    await vaultDeposit(f, perp, bob, usdc('1'));
    expect(await read<bigint>('depositedOf', [bob.address])).toBe(usdc('251.5'));
  });

  test('zero reverts ZeroAmount; without (enough) approval InsufficientAllowance', async () => {
    const deposit = (user: ChainUser, amount: bigint) =>
      user.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'deposit', args: [amount] });
    await expectRevert(() => deposit(bob, 0n), 'ZeroAmount');
    await expectRevert(() => deposit(bob, usdc('5')), 'InsufficientAllowance', [bob.address, 0n, usdc('5')]);
    await f.publicClient.waitForTransactionReceipt({
      hash: await bob.wallet.writeContract({ address: perp.contracts.collateralToken, abi: cashTokenAbi, functionName: 'approve', args: [vault(), usdc('4')] }),
    });
    await expectRevert(() => deposit(bob, usdc('5')), 'InsufficientAllowance', [bob.address, usdc('4'), usdc('5')]);
    expect(await read<bigint>('depositedOf', [bob.address])).toBe(0n);
    expect(await read<bigint>('totalDeposited')).toBe(usdc('10000'));
  });
});

describe('withdraw', () => {
  test('the operator pays the account once per id, emitting Withdrawn', async () => {
    const before = await usdcOf(f, carol.address);
    const wid = id('withdrawal-1');
    const receipt = await vaultWithdraw(f, perp, carol.address, usdc('75'), wid);
    const events = parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'Withdrawn' });
    expect(events.map((e) => e.args)).toEqual([{ account: carol.address, amount: usdc('75'), withdrawalId: wid }]);
    expect(await usdcOf(f, carol.address)).toBe(before + usdc('75'));
    expect(await usdcOf(f, vault())).toBe(usdc('9925'));
    expect(await read<boolean>('withdrawalPaid', [wid])).toBe(true);
    expect(await read<bigint>('withdrawnOf', [carol.address])).toBe(usdc('75'));
    expect(await read<bigint>('totalWithdrawn')).toBe(usdc('75'));

    const operator = perpOperatorWallet(f);
    const withdraw = (account: Address, amount: bigint, withdrawalId: `0x${string}`) =>
      operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'withdraw', args: [account, amount, withdrawalId] });
    await expectRevert(() => withdraw(carol.address, usdc('75'), wid), 'WithdrawalAlreadyPaid', [wid]);
    await expectRevert(() => withdraw(carol.address, usdc('1'), zeroHash), 'ZeroWithdrawalId');
    await expectRevert(() => withdraw(carol.address, 0n, id('w-0')), 'ZeroAmount');
    await expectRevert(() => withdraw('0x0000000000000000000000000000000000000000', usdc('1'), id('w-0')), 'ZeroAddress');
    await expectRevert(() => withdraw(carol.address, usdc('9925.000001'), id('w-big')), 'InsufficientVaultBalance', [usdc('9925'), usdc('9925.000001')]);
    expect(await usdcOf(f, carol.address)).toBe(before + usdc('75'));
    // Another id pays again, up to everything the vault holds.
    await vaultWithdraw(f, perp, carol.address, usdc('9925'), id('withdrawal-2'));
    expect(await usdcOf(f, vault())).toBe(0n);
  });

  test('only an operator pays; only the owner names operators', async () => {
    const asBob = (account: Address) =>
      bob.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'withdraw', args: [account, usdc('1'), id('w')] });
    await expectRevert(() => asBob(bob.address), 'NotOperator', [bob.address]);
    await expectRevert(
      () => bob.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setOperator', args: [bob.address, true] }),
      'OwnableUnauthorizedAccount',
      [bob.address],
    );
    // The owner grants bob, then revokes the perp operator.
    const owner = (operator: Address, enabled: boolean) =>
      f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setOperator', args: [operator, enabled] });
    const granted = await f.publicClient.waitForTransactionReceipt({ hash: await owner(bob.address, true) });
    expect(parseEventLogs({ abi: marginVaultAbi, logs: granted.logs, eventName: 'OperatorSet' }).map((e) => e.args)).toEqual([
      { operator: bob.address, enabled: true },
    ]);
    await f.publicClient.waitForTransactionReceipt({ hash: await asBob(bob.address) });
    expect(await read<boolean>('withdrawalPaid', [id('w')])).toBe(true);
    await f.publicClient.waitForTransactionReceipt({ hash: await owner(PERP_OPERATOR.address, false) });
    const operator = perpOperatorWallet(f);
    await expectRevert(
      () => operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'withdraw', args: [bob.address, usdc('1'), id('w2')] }),
      'NotOperator',
      [PERP_OPERATOR.address],
    );
  });
});

describe('deployment by ensureVenues', () => {
  const stockVenue = stockVenueDeployer({ symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [] });

  test('beside the stock venue, reused on restart, recorded and read back', async () => {
    const deploys: string[] = [];
    const counted = (d: VenueDeployer): VenueDeployer => ({ ...d, deploy: (c) => (deploys.push(d.venue), d.deploy(c)) });
    const perpVenue = counted(perpVenueDeployer({ operators: [PERP_OPERATOR.address] }));
    const { chainId, ...stock } = f.deployment;
    const first = await ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: { chainId, venues: { stock } }, venues: [counted(stockVenue), perpVenue] });
    expect(first.deployed).toEqual(['perp']);
    expect(first.record.venues.stock).toEqual(stock);
    const p = perpDeploymentOf(first.record)!;
    expect(p.contracts.collateralToken).toBe(f.deployment.contracts.cashToken);
    expect(p.contracts.marginVault).not.toBe(perp.contracts.marginVault);
    // No demo deposits asked: the new vault holds nothing.
    expect(await usdcOf(f, p.contracts.marginVault)).toBe(0n);

    // Written and read back: the perp section survives with its shape checked.
    const file = path.join(tmp, 'deployments', '31337.json');
    await writeDeploymentRecord(file, first.record);
    const reread = await readDeploymentRecord(file);
    expect(reread?.record).toEqual(first.record);
    expect(perpDeploymentOf(reread!.record)).toEqual(p);

    // A restart on the same chain: both venues live, nothing is deployed.
    const reasons: string[] = [];
    const second = await ensureVenues({
      publicClient: f.publicClient,
      walletClient: f.operator,
      record: reread!.record,
      venues: [counted(stockVenue), perpVenue],
      onDeploy: (v, r) => reasons.push(`${v}: ${r}`),
    });
    expect(second.deployed).toEqual([]);
    expect(second.record).toEqual(first.record);
    expect(deploys).toEqual(['perp']);

    // The stock venue's code gone: it is deployed anew, and the perp venue with it, on the new cash token.
    const gone = { ...stock, contracts: { ...stock.contracts, cashier: '0x000000000000000000000000000000000000dEaD' as Address } };
    const third = await ensureVenues({
      publicClient: f.publicClient,
      walletClient: f.operator,
      record: { chainId, venues: { stock: gone, perp: first.record.venues.perp } },
      venues: [counted(stockVenue), perpVenue],
      onDeploy: (v, r) => reasons.push(`${v}: ${r}`),
    });
    expect(third.deployed).toEqual(['stock', 'perp']);
    expect(reasons).toEqual(['stock: code gone', 'perp: dependency redeployed']);
    const newStock = stockDeploymentOf(third.record)!;
    expect(perpDeploymentOf(third.record)!.contracts.collateralToken).toBe(newStock.contracts.cashToken);
    expect(newStock.contracts.cashToken).not.toBe(f.deployment.contracts.cashToken);
  });

  test('grantPerpOperators makes a missing operator once', async () => {
    const other = ANVIL_ACCOUNTS[5].address;
    const grant = () => grantPerpOperators({ publicClient: f.publicClient, walletClient: f.operator, deployment: perp, accounts: [PERP_OPERATOR.address, other, other] });
    expect(await grant()).toEqual([other]);
    expect(await read<boolean>('isOperator', [other])).toBe(true);
    expect(await grant()).toEqual([]);
  });

  test('the perp venue without a stock venue before it is refused', async () => {
    await expect(
      ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: { chainId: f.chainId, venues: {} }, venues: [perpVenueDeployer({ operators: [] })] }),
    ).rejects.toThrow(/the perp venue needs the stock venue deployed first/);
  });
});
