/**
 * The guardian's pause and the users' escape hatch on a real anvil (docs/security.md, "Guardian" and
 * "Escape hatch"): the guardian (or the owner) pauses new orders, fills and the Cashier's operator
 * actions, never users' exits; while paused, or once the operator has not settled for the silence
 * period, a user cancels their own open orders with the whole lock back. Queued deposits and
 * withdrawals reach the hatch only once the operator has been silent for `operatorSilence()` or the
 * pause has lasted that long (issue 60: a pause no longer releases every queued withdrawal at once);
 * nobody acts on another user's order or queue entry.
 */
import { hexToBigInt, parseEventLogs, toHex, type Address, type Hex } from 'viem';
import { describe, expect, test } from 'vitest';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveStock, approveUsdc, confirm, contracts, DAY, deadlineEachTest, depositStock, depositUsdc, expectCashInvariant, expectRevert, mUsdOf, musd, OrderStatus, price, routerCall, settle, shares, Side, stockOf, usdc, usdcOf, ANY_BUY_PRICE } from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let guardian: ChainUser;
let aapl: Address;
let deadline: number;

const f = useChainFixture(async () => {
  [alice, bob, , guardian] = f.users;
  aapl = contracts(f).stocks.AAPL;
});
deadlineEachTest(f, (d) => (deadline = d));

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
const SILENCE = 3n * 86_400n;
const latestTime = async () => (await f.publicClient.getBlock()).timestamp;
/** Moves the chain's clock so that the latest block is at `at` or (by its own second) just after. */
const advanceTo = async (at: bigint) => {
  const now = await latestTime();
  if (at > now) await increaseTime(at - now);
};
const blockTime = async (receipt: { blockNumber: bigint }) => (await f.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
const opensAt = () => read<bigint>('queuedCashHatchOpensAt');

/**
 * The brief's incident: a withdraw buffer of 1,000 USDC, Alice's 40,000 USDC withdrawal queued for the
 * operator, Bob's 500 USDC deposit queued (credit buffer 0).
 */
async function queuedCash(): Promise<{ withdrawal: bigint; deposit: bigint }> {
  const c = contracts(f);
  await depositUsdc(f, alice, usdc('50000'));
  await confirm(f, cashierAs('setWithdrawBuffer', [c.cashToken, usdc('1000')]));
  await confirm(f, cashierAs('setCreditBuffer', [0n]));
  const w = (await routerCall<[boolean, bigint]>(f, alice, 'withdraw', [c.cashToken, usdc('40000')])).result;
  await approveUsdc(f, bob, usdc('500'));
  const d = (await routerCall<[boolean, bigint]>(f, bob, 'deposit', [c.cashToken, usdc('500')])).result;
  expect([w[0], d[0]]).toEqual([false, false]);
  return { withdrawal: w[1], deposit: d[1] };
}

/** Pays Alice's queued withdrawal through the hatch and asserts the payment to the unit. */
async function takeQueuedWithdrawal(queueId: bigint): Promise<void> {
  const c = contracts(f);
  const wallet = await usdcOf(f, alice.address);
  const paid = await confirm(f, as(alice, 'emergencySettleWithdrawal', [queueId]));
  expect(parseEventLogs({ abi: cashierAbi, logs: paid.logs, eventName: 'WithdrawalSettled' }).map((e) => e.args)).toEqual([
    { queueId, user: alice.address, token: c.cashToken, tokenAmount: usdc('40000'), musdAmount: musd('40000') },
  ]);
  expect(await usdcOf(f, alice.address)).toBe(wallet + usdc('40000'));
  await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [queueId]), 'QueuedOpNotPending', [queueId]);
}

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
    // Queued cash names when the operator's silence would open it.
    const last = await read<bigint>('lastOperatorActivity');
    expect(await opensAt()).toBe(last + SILENCE + 1n);
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [1n]), 'QueuedCashHatchClosed', [last + SILENCE + 1n]);
    await expectRevert(() => as(alice, 'emergencySettleDeposit', [1n]), 'QueuedCashHatchClosed', [last + SILENCE + 1n]);
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

  test("a guardian pause holds a queued 40,000 withdrawal: refused at once, naming when it opens; the user's own orders are cancelled at once", async () => {
    const { buy } = await aliceOpenOrders();
    const { withdrawal, deposit } = await queuedCash();
    await asOwner('setGuardian', [guardian.address]);
    const paused = await confirm(f, as(guardian, 'pause'));
    const pausedAt = await blockTime(paused);
    expect(await read<bigint>('pausedSince')).toBe(pausedAt);
    const at = pausedAt + SILENCE + 1n;
    expect(await opensAt()).toBe(at);
    // (a) The owner of the queued withdrawal, at once: held, and told until when. The deposit too;
    // another user's entry is still not theirs.
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [withdrawal]), 'QueuedCashHatchClosed', [at]);
    await expectRevert(() => as(bob, 'emergencySettleDeposit', [deposit]), 'QueuedCashHatchClosed', [at]);
    // (c) Cancelling one's own order needs no wait: the hatch for orders opens with the pause.
    expect(await read<boolean>('escapeHatchOpen')).toBe(true);
    const cancelled = await confirm(f, as(alice, 'emergencyCancel', [buy]));
    expect(parseEventLogs({ abi: stockRouterAbi, logs: cancelled.logs, eventName: 'EmergencyCancel' }).map((e) => e.args)).toEqual([{ orderId: buy, user: alice.address }]);
    // A minute before the documented minimum: still held, the same second named.
    await advanceTo(at - 60n);
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [withdrawal]), 'QueuedCashHatchClosed', [at]);
    // (b) Once the pause has lasted operatorSilence(): paid, as the operator would have.
    await advanceTo(at);
    await expectRevert(() => as(bob, 'emergencySettleWithdrawal', [withdrawal]), 'NotQueuedOpOwner', [withdrawal, bob.address]);
    await takeQueuedWithdrawal(withdrawal);
    const free = (await mUsdOf(f, bob.address)).free;
    await confirm(f, as(bob, 'emergencySettleDeposit', [deposit]));
    expect((await mUsdOf(f, bob.address)).free).toBe(free + musd('500'));
    await expectCashInvariant(f, [alice.address, bob.address]);
  });

  test("(d) the operator's silence alone, without a pause, opens it as before", async () => {
    const { withdrawal } = await queuedCash();
    const last = await read<bigint>('lastOperatorActivity');
    expect(await read<boolean>('paused')).toBe(false);
    await advanceTo(last + SILENCE - 60n);
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [withdrawal]), 'QueuedCashHatchClosed', [last + SILENCE + 1n]);
    await advanceTo(last + SILENCE + 1n);
    expect(await read<boolean>('escapeHatchOpen')).toBe(true);
    await takeQueuedWithdrawal(withdrawal);
    await expectCashInvariant(f, [alice.address, bob.address]);
  });

  test('a pause never closes what the silence opened: paused after the silence period, the queue stays open', async () => {
    const { withdrawal } = await queuedCash();
    const last = await read<bigint>('lastOperatorActivity');
    await advanceTo(last + SILENCE + 10n);
    await asOwner('pause');
    expect(await opensAt()).toBe(last + SILENCE + 1n);
    await takeQueuedWithdrawal(withdrawal);
  });

  test('pausing again, or unpausing and pausing with no settlement in between, does not restart the hold; a settlement does', async () => {
    const { withdrawal } = await queuedCash();
    await asOwner('setGuardian', [guardian.address]);
    const first = await blockTime(await confirm(f, as(guardian, 'pause')));
    const at = first + SILENCE + 1n;
    await increaseTime(86_400n);
    await confirm(f, as(guardian, 'pause'));
    await confirm(f, as(guardian, 'unpause'));
    expect(await read<bigint>('pausedSince')).toBe(0n);
    await confirm(f, as(guardian, 'pause'));
    expect(await read<bigint>('pausedSince')).toBe(first);
    expect(await opensAt()).toBe(at);
    // The venue ran in between (a settlement an hour or more after the last one noted): a new pause
    // is a new incident, held from its own start.
    await confirm(f, as(guardian, 'unpause'));
    await settle(f, [], []);
    const last = await read<bigint>('lastOperatorActivity');
    expect(last).toBeGreaterThan(first);
    const second = await blockTime(await confirm(f, as(guardian, 'pause')));
    expect(await read<bigint>('pausedSince')).toBe(second);
    expect(await opensAt()).toBe(second + SILENCE + 1n);
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [withdrawal]), 'QueuedCashHatchClosed', [second + SILENCE + 1n]);
    await advanceTo(second + SILENCE + 1n);
    await takeQueuedWithdrawal(withdrawal);
  });

  test("a router paused since before its upgrade (start unknown, zero): the operator's silence alone, until the next pause() records the start", async () => {
    const { withdrawal } = await queuedCash();
    await asOwner('pause');
    // As an in-place upgrade from 0.2.0 leaves a paused router: `_pausedAt` (slot 12, its top 8
    // bytes, per the build's storage layout) zero.
    const slot = toHex(12n, { size: 32 });
    const word = hexToBigInt((await f.publicClient.getStorageAt({ address: router(), slot })) as Hex);
    await f.publicClient.request({ method: 'anvil_setStorageAt' as never, params: [router(), slot, toHex(word & ((1n << 192n) - 1n), { size: 32 })] as never });
    expect(await read<boolean>('paused')).toBe(true);
    expect(await read<bigint>('pausedSince')).toBe(0n);
    const last = await read<bigint>('lastOperatorActivity');
    expect(await opensAt()).toBe(last + SILENCE + 1n);
    await expectRevert(() => as(alice, 'emergencySettleWithdrawal', [withdrawal]), 'QueuedCashHatchClosed', [last + SILENCE + 1n]);
    // The guardian's (or owner's) next pause() is the first call to see it: the start is recorded.
    const noticed = await blockTime(await asOwner('pause'));
    expect(await read<bigint>('pausedSince')).toBe(noticed);
    expect(await opensAt()).toBe(noticed + SILENCE + 1n);
    await advanceTo(noticed + SILENCE + 1n);
    await takeQueuedWithdrawal(withdrawal);
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
