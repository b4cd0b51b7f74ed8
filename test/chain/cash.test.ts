import { describe, expect, test } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import {
  approveUsdc,
  confirm,
  contracts,
  depositUsdc,
  expectCashInvariant,
  expectRevert,
  mUsdOf,
  musd,
  usdc,
  usdcOf,
} from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
});

const cashierRead = <N extends 'creditBuffer' | 'totalQueuedDeposits' | 'totalQueuedWithdrawals'>(functionName: N) =>
  f.publicClient.readContract({ address: contracts(f).cashier, abi: cashierAbi, functionName });

async function setCreditBuffer(amount: bigint): Promise<void> {
  await confirm(f, f.operator.writeContract({ address: contracts(f).cashier, abi: cashierAbi, functionName: 'setCreditBuffer', args: [amount] }));
}

describe('cash deposits', () => {
  test('instant deposit credits mUSD and shrinks the credit buffer', async () => {
    const c = contracts(f);
    const before = await usdcOf(f, alice.address);
    await approveUsdc(f, alice, usdc('1000'));
    const sim = await f.publicClient.simulateContract({
      account: alice.wallet.account,
      address: c.stockRouter,
      abi: stockRouterAbi,
      functionName: 'deposit',
      args: [c.cashToken, usdc('1000')],
    });
    expect(sim.result).toEqual([true, 0n]);
    const receipt = await confirm(f, alice.wallet.writeContract(sim.request));

    const [event] = parseEventLogs({ abi: cashierAbi, logs: receipt.logs, eventName: 'Deposited' });
    expect(event.args).toEqual({ user: alice.address, token: c.cashToken, tokenAmount: usdc('1000'), musdAmount: musd('1000') });
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('1000'), locked: 0n });
    expect(await usdcOf(f, alice.address)).toBe(before - usdc('1000'));
    expect(await cashierRead('creditBuffer')).toBe(musd('999000'));
    await expectCashInvariant(f, [alice.address]);
  });

  test('a deposit beyond the credit buffer is queued, then credited by settleDeposit', async () => {
    const c = contracts(f);
    await setCreditBuffer(musd('500'));
    const receipt = await depositUsdc(f, alice, usdc('1000'));
    const [queued] = parseEventLogs({ abi: cashierAbi, logs: receipt.logs, eventName: 'DepositQueued' });
    expect(queued.args).toEqual({ queueId: 1n, user: alice.address, token: c.cashToken, tokenAmount: usdc('1000'), musdAmount: musd('1000') });
    expect(parseEventLogs({ abi: cashierAbi, logs: receipt.logs, eventName: 'Deposited' })).toHaveLength(0);

    expect(await mUsdOf(f, alice.address)).toEqual({ free: 0n, locked: 0n });
    expect(await cashierRead('creditBuffer')).toBe(musd('500'));
    expect(await cashierRead('totalQueuedDeposits')).toBe(musd('1000'));
    const op = await f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'queuedDeposit', args: [1n] });
    expect(op).toEqual({ user: alice.address, token: c.cashToken, tokenAmount: usdc('1000'), musdAmount: musd('1000'), status: 1 });
    await expectCashInvariant(f, [alice.address]);

    // Only an operator settles.
    await expectRevert(
      () => f.publicClient.simulateContract({ account: bob.wallet.account, address: c.cashier, abi: cashierAbi, functionName: 'settleDeposit', args: [1n] }),
      'NotOperator',
      [bob.address],
    );
    const settled = await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'settleDeposit', args: [1n] }));
    const [ev] = parseEventLogs({ abi: cashierAbi, logs: settled.logs, eventName: 'DepositSettled' });
    expect(ev.args.queueId).toBe(1n);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('1000'), locked: 0n });
    expect(await cashierRead('totalQueuedDeposits')).toBe(0n);
    expect((await f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'queuedDeposit', args: [1n] })).status).toBe(2);
    await expectCashInvariant(f, [alice.address]);

    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: c.cashier, abi: cashierAbi, functionName: 'settleDeposit', args: [1n] }),
      'QueuedOpNotPending',
      [1n],
    );
  });

  test('deposit without allowance reverts with ERC20InsufficientAllowance (decoded by the router ABI)', async () => {
    const c = contracts(f);
    await expectRevert(
      () => f.publicClient.simulateContract({ account: alice.wallet.account, address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, usdc('10')] }),
      'ERC20InsufficientAllowance',
      [c.stockRouter, 0n, usdc('10')],
    );
  });

  test('deposit above the wallet balance reverts with ERC20InsufficientBalance', async () => {
    const c = contracts(f);
    const balance = await usdcOf(f, alice.address);
    await approveUsdc(f, alice, balance + usdc('1'));
    await expectRevert(
      () => f.publicClient.simulateContract({ account: alice.wallet.account, address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, balance + usdc('1')] }),
      'ERC20InsufficientBalance',
      [alice.address, balance, balance + usdc('1')],
    );
  });

  test('a really sent failing deposit is mined as reverted', async () => {
    const c = contracts(f);
    const hash = await alice.wallet.writeContract({
      address: c.stockRouter,
      abi: stockRouterAbi,
      functionName: 'deposit',
      args: [c.cashToken, usdc('10')],
      gas: 300_000n,
    });
    const receipt = await f.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    expect(await mUsdOf(f, alice.address)).toEqual({ free: 0n, locked: 0n });
  });

  test('deposit below the minimum, of zero, or of an unsupported token reverts', async () => {
    const c = contracts(f);
    await approveUsdc(f, alice, usdc('10'));
    const deposit = (token: `0x${string}`, amount: bigint) => () =>
      f.publicClient.simulateContract({ account: alice.wallet.account, address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [token, amount] });
    await expectRevert(deposit(c.cashToken, usdc('0.5')), 'AmountBelowMinimum', [usdc('1'), usdc('0.5')]);
    await expectRevert(deposit(c.cashToken, 0n), 'ZeroAmount', []);
    await expectRevert(deposit(c.stocks.AAPL, usdc('5')), 'TokenNotSupported', [c.stocks.AAPL]);
  });
});

describe('cash withdrawals', () => {
  test('instant withdrawal pays the tokens and shrinks the withdrawal buffer', async () => {
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('3000'));
    const wallet = await usdcOf(f, alice.address);
    const sim = await f.publicClient.simulateContract({ account: alice.wallet.account, address: c.stockRouter, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('1200.5')] });
    expect(sim.result).toEqual([true, 0n]);
    const receipt = await confirm(f, alice.wallet.writeContract(sim.request));
    const [ev] = parseEventLogs({ abi: cashierAbi, logs: receipt.logs, eventName: 'Withdrawn' });
    expect(ev.args).toEqual({ user: alice.address, token: c.cashToken, tokenAmount: usdc('1200.5'), musdAmount: musd('1200.5') });
    expect(await usdcOf(f, alice.address)).toBe(wallet + usdc('1200.5'));
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('1799.5'), locked: 0n });
    const config = await f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'tokenConfig', args: [c.cashToken] });
    expect(config).toEqual({ enabled: true, decimals: 6, minAmount: usdc('1'), withdrawBuffer: usdc('250000') - usdc('1200.5') });
    await expectCashInvariant(f, [alice.address]);
  });

  test('a withdrawal beyond the buffer debits mUSD at once and pays on settleWithdrawal', async () => {
    const c = contracts(f);
    await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setWithdrawBuffer', args: [c.cashToken, usdc('100')] }));
    await depositUsdc(f, alice, usdc('1000'));
    const wallet = await usdcOf(f, alice.address);
    const receipt = await confirm(
      f,
      alice.wallet.writeContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('400')] }),
    );
    const [queued] = parseEventLogs({ abi: cashierAbi, logs: receipt.logs, eventName: 'WithdrawalQueued' });
    expect(queued.args).toEqual({ queueId: 1n, user: alice.address, token: c.cashToken, tokenAmount: usdc('400'), musdAmount: musd('400') });
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('600'), locked: 0n });
    expect(await usdcOf(f, alice.address)).toBe(wallet);
    expect(await cashierRead('totalQueuedWithdrawals')).toBe(musd('400'));
    await expectCashInvariant(f, [alice.address]);

    const settled = await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'settleWithdrawal', args: [1n] }));
    expect(parseEventLogs({ abi: cashierAbi, logs: settled.logs, eventName: 'WithdrawalSettled' })[0].args.tokenAmount).toBe(usdc('400'));
    expect(await usdcOf(f, alice.address)).toBe(wallet + usdc('400'));
    expect(await cashierRead('totalQueuedWithdrawals')).toBe(0n);
    await expectCashInvariant(f, [alice.address]);
    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: c.cashier, abi: cashierAbi, functionName: 'settleWithdrawal', args: [1n] }),
      'QueuedOpNotPending',
      [1n],
    );
  });

  test('withdrawing more than the free mUSD reverts with InsufficientBalance', async () => {
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('100'));
    await expectRevert(
      () => f.publicClient.simulateContract({ account: alice.wallet.account, address: c.stockRouter, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('100.000001')] }),
      'InsufficientBalance',
      [musd('100'), musd('100.000001')],
    );
  });

  test('the Cashier can only be driven by the router', async () => {
    const c = contracts(f);
    await expectRevert(
      () => f.publicClient.simulateContract({ account: alice.wallet.account, address: c.cashier, abi: cashierAbi, functionName: 'lock', args: [alice.address, 1n] }),
      'NotRouter',
      [alice.address],
    );
  });
});
