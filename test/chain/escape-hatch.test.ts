/**
 * The guardian's pause and the users' escape hatch on a real anvil (docs/security.md, "Guardian" and
 * "Escape hatch"): the guardian (or the owner) pauses new orders, fills and the Cashier's operator
 * actions, never users' exits; while paused, or once the operator has not settled for the silence
 * period, a user cancels their own open orders with the whole lock back and takes their own queued
 * deposits and withdrawals without the operator; nobody acts on another user's order or queue entry.
 */
import { parseEventLogs, toHex, type Address } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { startChainFixture, revertEachTest, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveStock, approveUsdc, confirm, contracts, DAY, deadlineIn, depositStock, depositUsdc, expectCashInvariant, expectRevert, mUsdOf, musd, OrderStatus, price, routerCall, settle, shares, Side, stockOf, usdc, usdcOf, ANY_BUY_PRICE } from './chain-test-helpers.ts';

let f: ChainFixture;
let alice: ChainUser;
let bob: ChainUser;
let guardian: ChainUser;
let aapl: Address;
let deadline: number;

beforeAll(async () => {
  f = await startChainFixture();
  [alice, bob, , guardian] = f.users;
  aapl = contracts(f).stocks.AAPL;
});
afterAll(async () => {
  await f?.stop();
});
revertEachTest(() => f);
beforeEach(async () => {
  deadline = await deadlineIn(f, 3600);
});

const router = () => contracts(f).stockRouter;
const read = <T>(functionName: string, args: readonly unknown[] = []) =>
  f.publicClient.readContract({ address: router(), abi: stockRouterAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
const asOwner = (functionName: string, args: readonly unknown[] = []) =>
  confirm(f, f.operator.writeContract({ address: router(), abi: stockRouterAbi, functionName: functionName as never, args: args as never }));
const as = (user: ChainUser, functionName: string, args: readonly unknown[] = []) =>
  user.wallet.writeContract({ address: router(), abi: stockRouterAbi, functionName: functionName as never, args: args as never });
const cashierAs = (functionName: string, args: readonly unknown[] = []) =>
  f.operator.writeContract({ address: contracts(f).cashier, abi: cashierAbi, functionName: functionName as never, args: args as never });
const increaseTime = async (seconds: bigint) => {
  await f.publicClient.request({ method: 'evm_increaseTime' as never, params: [toHex(seconds)] as never });
  await f.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
};

/** Alice's limit buy of 2 AAPL at 100 (200 mUSD locked, fees included) and her limit sell of 1 at 500. */
async function aliceOpenOrders(): Promise<{ buy: bigint; sell: bigint; locked: bigint }> {
  await depositUsdc(f, alice, usdc('1000'));
  const buy = (await routerCall<bigint>(f, alice, 'placeLimitOrder', [aapl, Side.Buy, shares('2'), price('100'), DAY, deadline])).result;
  await approveStock(f, alice, aapl, shares('1'));
  await depositStock(f, alice, aapl, shares('1'));
  const sell = (await routerCall<bigint>(f, alice, 'placeLimitOrder', [aapl, Side.Sell, shares('1'), price('500'), DAY, deadline])).result;
  return { buy, sell, locked: (await mUsdOf(f, alice.address)).locked };
}

describe('the guardian', () => {
  test('pauses and unpauses; nobody else can, and only the owner names the guardian', async () => {
    await expectRevert(() => as(guardian, 'pause'), 'NotGuardian', [guardian.address]);
    await expectRevert(() => as(guardian, 'setGuardian', [guardian.address]), 'OwnableUnauthorizedAccount', [guardian.address]);
    const named = await asOwner('setGuardian', [guardian.address]);
    expect(parseEventLogs({ abi: stockRouterAbi, logs: named.logs, eventName: 'GuardianSet' }).map((e) => e.args)).toEqual([{ guardian: guardian.address }]);
    expect(await read<Address>('guardian')).toBe(guardian.address);
    const paused = await confirm(f, as(guardian, 'pause'));
    expect(parseEventLogs({ abi: stockRouterAbi, logs: paused.logs, eventName: 'VenuePausedBy' }).map((e) => e.args)).toEqual([{ by: guardian.address }]);
    expect(await read<boolean>('paused')).toBe(true);
    await expectRevert(() => as(bob, 'unpause'), 'NotGuardian', [bob.address]);
    await confirm(f, as(guardian, 'unpause'));
    expect(await read<boolean>('paused')).toBe(false);
    // The owner can pause too (an incident with the guardian's key lost).
    await asOwner('pause');
    expect(await read<boolean>('paused')).toBe(true);
  });

  test("a pause stops new orders, fills and the Cashier's operator actions, never deposits, withdrawals, stock moves or cancel requests", async () => {
    const { buy } = await aliceOpenOrders();
    await approveStock(f, bob, aapl, shares('2'));
    await depositStock(f, bob, aapl, shares('2'));
    await asOwner('setGuardian', [guardian.address]);
    await confirm(f, as(guardian, 'pause'));
    // New orders and fills.
    await expectRevert(() => as(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('100'), DAY, deadline]), 'VenuePaused');
    await expectRevert(() => as(alice, 'placeMarketOrder', [aapl, Side.Buy, 0n, musd('10'), ANY_BUY_PRICE, deadline]), 'VenuePaused');
    await expectRevert(() => f.operator.writeContract({ address: router(), abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId: buy, quantity: shares('1'), price: price('100') }], []] }), 'VenuePaused');
    // The Cashier's operator actions.
    await expectRevert(() => cashierAs('settleDeposit', [1n]), 'VenuePaused');
    await expectRevert(() => cashierAs('settleWithdrawal', [1n]), 'VenuePaused');
    await expectRevert(() => cashierAs('fundTreasury', [contracts(f).cashToken, usdc('1')]), 'VenuePaused');
    // Users' own moves go on.
    await depositUsdc(f, alice, usdc('10'));
    const before = await usdcOf(f, alice.address);
    await routerCall(f, alice, 'withdraw', [contracts(f).cashToken, usdc('5')]);
    expect(await usdcOf(f, alice.address)).toBe(before + usdc('5'));
    const bobStock = await stockOf(f, aapl, bob.address);
    await routerCall(f, bob, 'withdrawStock', [aapl, shares('2')]);
    expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: bobStock.wallet + shares('2'), exchange: bobStock.exchange - shares('2'), locked: 0n });
    await routerCall(f, alice, 'cancelLimitOrder', [buy]);
    expect((await read<{ status: number }>('getOrder', [buy])).status).toBe(OrderStatus.Canceling);
  });
});

describe('the escape hatch', () => {
  test('is closed while the venue runs: a user cannot bypass the operator', async () => {
    const { buy } = await aliceOpenOrders();
    expect(await read<boolean>('escapeHatchOpen')).toBe(false);
    await expectRevert(() => as(alice, 'emergencyCancel', [buy]), 'EscapeHatchClosed');
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [1n]), 'EscapeHatchClosed');
    await expectRevert(() => as(alice, 'emergencySettleDeposit', [1n]), 'EscapeHatchClosed');
  });

  test('while paused, a user cancels their own orders with the whole lock back; never another user\'s', async () => {
    const { buy, sell, locked } = await aliceOpenOrders();
    expect(locked).toBe(musd('200.1'));
    const freeBefore = (await mUsdOf(f, alice.address)).free;
    const stockBefore = await stockOf(f, aapl, alice.address);
    await asOwner('pause');
    expect(await read<boolean>('escapeHatchOpen')).toBe(true);
    await expectRevert(() => as(bob, 'emergencyCancel', [buy]), 'NotOrderOwner', [buy]);
    const receipt = await confirm(f, as(alice, 'emergencyCancel', [buy]));
    expect(parseEventLogs({ abi: stockRouterAbi, logs: receipt.logs, eventName: 'OrderClosed' }).map((e) => e.args)).toEqual([
      { orderId: buy, user: alice.address, status: OrderStatus.Canceled, released: musd('200.1') },
    ]);
    expect(parseEventLogs({ abi: stockRouterAbi, logs: receipt.logs, eventName: 'EmergencyCancel' }).map((e) => e.args)).toEqual([{ orderId: buy, user: alice.address }]);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: freeBefore + musd('200.1'), locked: 0n });
    await confirm(f, as(alice, 'emergencyCancel', [sell]));
    expect(stockBefore.locked).toBe(shares('1'));
    expect(await stockOf(f, aapl, alice.address)).toEqual({ wallet: stockBefore.wallet, exchange: stockBefore.exchange + shares('1'), locked: 0n });
    // Closed once: a second try finds nothing open.
    await expectRevert(() => as(alice, 'emergencyCancel', [buy]), 'OrderNotOpen', [buy]);
    expect((await read<{ status: number }>('getOrder', [buy])).status).toBe(OrderStatus.Canceled);
    await expectCashInvariant(f, [alice.address, bob.address]);
  });

  test('while paused, a user takes their own queued withdrawal and credits their own queued deposit', async () => {
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('1000'));
    // Buffers at zero: the withdrawal and the deposit queue for the operator.
    await confirm(f, cashierAs('setWithdrawBuffer', [c.cashToken, 0n]));
    await confirm(f, cashierAs('setCreditBuffer', [0n]));
    const queuedW = (await routerCall<[boolean, bigint]>(f, alice, 'withdraw', [c.cashToken, usdc('300')])).result;
    await approveUsdc(f, alice, usdc('50'));
    const queuedD = (await routerCall<[boolean, bigint]>(f, alice, 'deposit', [c.cashToken, usdc('50')])).result;
    expect(queuedW[0]).toBe(false);
    expect(queuedD[0]).toBe(false);
    await asOwner('pause');
    await expectRevert(() => as(bob, 'emergencySettleWithdrawal', [queuedW[1]]), 'NotQueuedOpOwner', [queuedW[1], bob.address]);
    await expectRevert(() => as(bob, 'emergencySettleDeposit', [queuedD[1]]), 'NotQueuedOpOwner', [queuedD[1], bob.address]);
    const wallet = await usdcOf(f, alice.address);
    const paid = await confirm(f, as(alice, 'emergencySettleWithdrawal', [queuedW[1]]));
    expect(parseEventLogs({ abi: cashierAbi, logs: paid.logs, eventName: 'WithdrawalSettled' }).map((e) => e.args)).toEqual([
      { queueId: queuedW[1], user: alice.address, token: c.cashToken, tokenAmount: usdc('300'), musdAmount: musd('300') },
    ]);
    expect(await usdcOf(f, alice.address)).toBe(wallet + usdc('300'));
    const free = (await mUsdOf(f, alice.address)).free;
    await confirm(f, as(alice, 'emergencySettleDeposit', [queuedD[1]]));
    expect((await mUsdOf(f, alice.address)).free).toBe(free + musd('50'));
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [queuedW[1]]), 'QueuedOpNotPending', [queuedW[1]]);
    await expectCashInvariant(f, [alice.address, bob.address]);
  });

  test('opens by itself once the operator has not settled for the silence period, and closes at its next settlement', async () => {
    const { buy } = await aliceOpenOrders();
    expect(await read<number>('operatorSilence')).toBe(3 * 86_400);
    await expectRevert(() => asOwner('setOperatorSilence', [3_600]), 'InvalidOperatorSilence', [3_600]);
    await expectRevert(() => as(alice, 'setOperatorSilence', [86_400]), 'OwnableUnauthorizedAccount', [alice.address]);
    await asOwner('setOperatorSilence', [86_400]);
    const last = await read<bigint>('lastOperatorActivity');
    await increaseTime(BigInt(86_400) - ((await f.publicClient.getBlock()).timestamp - last) - 5n);
    expect(await read<boolean>('escapeHatchOpen')).toBe(false);
    await increaseTime(10n);
    expect(await read<boolean>('escapeHatchOpen')).toBe(true);
    // The operator is back: a settlement closes the hatch again.
    await settle(f, [{ orderId: buy, quantity: shares('1'), price: price('100') }], []);
    expect(await read<boolean>('escapeHatchOpen')).toBe(false);
    await expectRevert(() => as(alice, 'emergencyCancel', [buy]), 'EscapeHatchClosed');
  });
});
