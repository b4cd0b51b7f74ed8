/**
 * A split on the Stock token (its share multiplier) on anvil: balances, supply, open orders and
 * fills across the split, the rounding rules and the refusals (docs/corporate-actions.md, "Splits").
 */
import { describe, expect, test } from 'vitest';
import { keccak256, parseEventLogs, stringToHex, type Address, type Hex } from 'viem';
import { stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import {
  approveStock,
  confirm,
  contracts,
  deadlineEachTest,
  deadlineIn,
  depositStock,
  depositUsdc,
  expectRevert,
  expectStockBacking,
  mUsdOf,
  routerCall,
  settle as settleOrders,
  type Close,
  type Fill,
  musd,
  OrderStatus,
  price,
  shares,
  Side,
  stockOf,
  usdc,
} from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let aapl: Address;
let router: Address;
let deadline: number;
const ONE = 10n ** 36n;
const ref = (id: string): Hex => keccak256(stringToHex(`tokex:split:${id}`));

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  aapl = contracts(f).stocks.AAPL;
  router = contracts(f).stockRouter;
});
deadlineEachTest(f, (d) => (deadline = d));

const read = <T>(functionName: string, args: readonly unknown[] = [], address: Address = aapl) =>
  f.publicClient.readContract({ address, abi: stockAbi, functionName, args } as never) as Promise<T>;

async function split(numerator: bigint, denominator: bigint, id: string) {
  return confirm(f, f.operator.writeContract({ address: aapl, abi: stockAbi, functionName: 'split', args: [numerator, denominator, ref(id)] }));
}

const place = async (user: ChainUser, functionName: 'placeLimitOrder' | 'placeMarketOrder', args: readonly unknown[]): Promise<bigint> =>
  (await routerCall<bigint>(f, user, functionName, args)).result;
const settle = (fills: Fill[], closes: Close[] = []) => settleOrders(f, fills, closes);

const getOrder = (id: bigint) => f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [id] });

describe('a 10:1 split multiplies every balance and the supply at once', () => {
  test('wallet, free and locked exchange balances and the total supply scale by exactly ten; value is unchanged', async () => {
    await approveStock(f, bob, aapl, shares('10'));
    await depositStock(f, bob, aapl, shares('10'));
    await place(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('4'), price('200'), 0, deadline]);
    const before = await stockOf(f, aapl, bob.address);
    const aliceBefore = await stockOf(f, aapl, alice.address);
    const supplyBefore = await read<bigint>('totalSupply');

    const receipt = await split(10n, 1n, 'AAPL-2026-12-01');
    const [ev] = parseEventLogs({ abi: stockAbi, logs: receipt.logs, eventName: 'MultiplierChanged' });
    expect(ev.args).toEqual({ ref: ref('AAPL-2026-12-01'), oldMultiplier: ONE, newMultiplier: 10n * ONE, numerator: 10n, denominator: 1n });

    expect(await read<bigint>('multiplier')).toBe(10n * ONE);
    expect(await read<bigint>('totalSupply')).toBe(supplyBefore * 10n);
    expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: before.wallet * 10n, exchange: before.exchange * 10n, locked: before.locked * 10n });
    expect(await stockOf(f, aapl, alice.address)).toEqual({ wallet: aliceBefore.wallet * 10n, exchange: 0n, locked: 0n });
    // balance × price: 4 shares at 200 before are 40 shares at 20 after.
    expect(((await stockOf(f, aapl, bob.address)).locked * price('20')) / ONE).toBe((before.locked * price('200')) / ONE);
    await expectStockBacking(f, aapl, [alice.address, bob.address]);
  });

  test('the open sell is restated in current shares and fills at its adjusted limit; its lock is released to the unit', async () => {
    await approveStock(f, bob, aapl, shares('10'));
    await depositStock(f, bob, aapl, shares('10'));
    const sell = await place(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('4'), price('200'), 0, deadline]);
    await settle([{ orderId: sell, quantity: shares('1'), price: price('200') }]);
    await split(10n, 1n, 'AAPL-A');

    expect(await getOrder(sell)).toMatchObject({ quantity: shares('40'), filledQuantity: shares('10'), price: price('20'), multiplier: 10n * ONE, locked: shares('3') });
    // 19.99 is below the adjusted limit of 20.
    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId: sell, quantity: shares('1'), price: price('19.99') }], []] }),
      'PriceOutsideLimit',
    );
    const cashBefore = await mUsdOf(f, bob.address);
    const filled = await settle([{ orderId: sell, quantity: shares('25'), price: price('20') }]);
    const [fillEv] = parseEventLogs({ abi: stockRouterAbi, logs: filled.logs, eventName: 'OrderFilled' });
    expect(fillEv.args).toMatchObject({ quantity: shares('25'), price: price('20'), notional: musd('500'), locked: shares('0.5'), multiplier: 10n * ONE });
    expect((await mUsdOf(f, bob.address)).free - cashBefore.free).toBe(musd('500') - fillEv.args.fee);
    // 40 − 10 − 25 = 5 shares left, locked as 0.5 base share.
    expect(await stockOf(f, aapl, bob.address)).toMatchObject({ exchange: shares('60'), locked: shares('5') });
    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[{ orderId: sell, quantity: shares('5.1'), price: price('20') }], []] }),
      'FillExceedsOrder',
    );
    await settle([], [{ orderId: sell, status: OrderStatus.Canceled }]);
    expect(await stockOf(f, aapl, bob.address)).toMatchObject({ exchange: shares('65'), locked: 0n });
    await expectStockBacking(f, aapl, [alice.address, bob.address]);
  });

  test('an open limit buy fills after the split at its limit divided by the ratio, within its cash lock', async () => {
    await depositUsdc(f, alice, usdc('1000'));
    const buy = await place(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('3'), price('150.01'), 0, deadline]);
    const lockBefore = (await getOrder(buy)).locked;
    await split(10n, 1n, 'AAPL-B');
    // 150.01 / 10 = 15.001, exact; a buy's limit rounds down, never above what the buyer agreed to.
    expect(await getOrder(buy)).toMatchObject({ quantity: shares('30'), price: price('15.001'), locked: lockBefore });
    await settle([{ orderId: buy, quantity: shares('30'), price: price('15.001') }], [{ orderId: buy, status: OrderStatus.Filled }]);
    expect(await stockOf(f, aapl, alice.address)).toMatchObject({ exchange: shares('30') });
    // 30 × 15.001 = 450.03, what 3 × 150.01 cost before the split.
    expect((await getOrder(buy)).filledNotional).toBe(musd('450.03'));
    expect((await mUsdOf(f, alice.address)).locked).toBe(0n);
  });

  test('a sell limit price that does not divide rounds up (the seller never receives less than asked)', async () => {
    await approveStock(f, bob, aapl, shares('1'));
    await depositStock(f, bob, aapl, shares('1'));
    const sell = await place(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('1'), 1000000000000000001n, 0, deadline]);
    await split(10n, 1n, 'AAPL-C');
    expect((await getOrder(sell)).price).toBe(100000000000000001n);
  });
});

describe('a reverse split and the rounding of amounts given in shares', () => {
  test('1:10 divides balances; a transfer gives its shares rounded up to base units and the recipient receives at least what was sent', async () => {
    const supplyBefore = await read<bigint>('totalSupply');
    await split(1n, 10n, 'AAPL-R');
    expect(await read<bigint>('multiplier')).toBe(ONE / 10n);
    expect(await read<bigint>('totalSupply')).toBe(supplyBefore / 10n);
    const aliceWallet = await read<bigint>('balanceOf', [alice.address]);
    const bobWallet = await read<bigint>('balanceOf', [bob.address]);
    // One share unit is ten base units now: sending 1 unit moves exactly 10 base units.
    await confirm(f, alice.wallet.writeContract({ address: aapl, abi: stockAbi, functionName: 'transfer', args: [bob.address, 1n] }));
    expect(await read<bigint>('balanceOf', [alice.address])).toBe(aliceWallet - 1n);
    expect(await read<bigint>('balanceOf', [bob.address])).toBe(bobWallet + 1n);
    expect(await read<bigint>('sharesToBase', [7n, true])).toBe(70n);
  });

  test('after a 3:1 split one share unit is a third of a base unit: a one-unit transfer costs the sender a whole base unit', async () => {
    await split(3n, 1n, 'AAPL-3');
    const before = await read<bigint>('balanceOf', [alice.address]);
    await confirm(f, alice.wallet.writeContract({ address: aapl, abi: stockAbi, functionName: 'transfer', args: [bob.address, 1n] }));
    expect(before - (await read<bigint>('balanceOf', [alice.address]))).toBe(3n);
    expect(await read<bigint>('sharesToBase', [1n, false])).toBe(0n);
  });
});

describe('refusals', () => {
  test('a zero or identity ratio, a replayed ref, and a caller other than the owner are refused', async () => {
    const call = (account: ChainUser['wallet']['account'], args: readonly unknown[]) => () =>
      f.publicClient.simulateContract({ account, address: aapl, abi: stockAbi, functionName: 'split', args } as never);
    await expectRevert(call(f.operator.account, [0n, 1n, ref('x')]), 'InvalidSplitRatio', [0n, 1n]);
    await expectRevert(call(f.operator.account, [10n, 0n, ref('x')]), 'InvalidSplitRatio', [10n, 0n]);
    await expectRevert(call(f.operator.account, [2n, 2n, ref('x')]), 'InvalidSplitRatio', [2n, 2n]);
    await split(2n, 1n, 'once');
    expect(await read<boolean>('splitApplied', [ref('once')])).toBe(true);
    await expectRevert(call(f.operator.account, [2n, 1n, ref('once')]), 'SplitAlreadyApplied', [ref('once')]);
    await expectRevert(call(alice.wallet.account, [2n, 1n, ref('y')]), 'OwnableUnauthorizedAccount', [alice.address]);
    await expectRevert(call(f.operator.account, [10n ** 13n, 1n, ref('z')]), 'MultiplierOutOfRange');
  });
});
