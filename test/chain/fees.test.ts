/**
 * Trading fees on a real anvil (issue 43, items 3 and 6): an order pays the fee rate of its
 * placement whatever `setFeeConfig` does while it is open, and the fees collected leave the
 * Cashier's fee balance only by the owner's `sweepFees`, into the treasury's free balance.
 */
import { describe, expect, test } from 'vitest';
import { parseEventLogs, type Address } from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { confirm, contracts, DAY, deadlineIn, depositStock, depositUsdc, expectCashInvariant, expectRevert, mUsdOf, musd, OrderStatus, OrderType, price, routerCall, settle, shares, Side, usdc, ANY_BUY_PRICE, ANY_SELL_PRICE } from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let router: Address;
let cashier: Address;
let AAPL: Address;

const feeBalance = () => f.publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'feeBalance' });
const feeRates = (ids: bigint[]) => f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'orderFeeBps', args: [ids] });
const setFees = (marketFeeBps: number, limitFeeBps: number) =>
  confirm(f, f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'setFeeConfig', args: [{ marketFeeBps, limitFeeBps }] }));
const getOrder = (id: bigint) => f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [id] });

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  router = contracts(f).stockRouter;
  cashier = contracts(f).cashier;
  AAPL = contracts(f).stocks.AAPL;
  await depositUsdc(f, alice, usdc('10000'));
  await depositStock(f, bob, AAPL, shares('20'));
}, {}, 60_000);

describe('fees are fixed per order at placement', () => {
  test('a fee raised to 10% (or cut to 0) while orders are open charges them their placement rate; new orders pay the new one', async () => {
    // The demo's rates: market 10 bps, limit 5 bps.
    const deadline = await deadlineIn(f, 3600);
    const limitBuy = (await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('10'), price('100'), DAY, deadline])).result;
    const marketSell = (await routerCall<bigint>(f, bob, 'placeMarketOrder', [AAPL, Side.Sell, shares('5'), 0n, ANY_SELL_PRICE, deadline])).result;
    // The buy locked 1,000 mUSD and the 5 bps on it.
    expect((await getOrder(limitBuy)).locked).toBe(musd('1000.5'));
    await setFees(1000, 1000);
    const later = (await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('100'), DAY, deadline])).result;
    expect(await feeRates([limitBuy, marketSell, later])).toEqual([5, 10, 1000]);

    const fees0 = await feeBalance();
    const alice0 = await mUsdOf(f, alice.address);
    const bob0 = await mUsdOf(f, bob.address);
    await settle(f, [
      { orderId: limitBuy, quantity: shares('10'), price: price('100') },
      { orderId: marketSell, quantity: shares('5'), price: price('100') },
      { orderId: later, quantity: shares('1'), price: price('100') },
    ], []);
    const buy = await getOrder(limitBuy);
    // 5 bps of 1,000 = 0.5: the lock pays exactly cost and fee, nothing left (at 10% it would have fallen 99.5 short).
    expect([buy.filledNotional, buy.fees, buy.locked]).toEqual([musd('1000'), musd('0.5'), 0n]);
    // 10 bps of 500 = 0.5 out of bob's proceeds.
    expect((await getOrder(marketSell)).fees).toBe(musd('0.5'));
    expect((await mUsdOf(f, bob.address)).free - bob0.free).toBe(musd('499.5'));
    // The order placed after the change pays 10% of 100 = 10 on top of its 100 (its lock: 110).
    expect((await getOrder(later)).fees).toBe(musd('10'));
    expect(alice0.locked - (await mUsdOf(f, alice.address)).locked).toBe(musd('1000.5') + musd('110'));
    expect((await feeBalance()) - fees0).toBe(musd('0.5') + musd('0.5') + musd('10'));

    // Cut to zero: an order placed before still pays its rate.
    const second = (await routerCall<bigint>(f, bob, 'placeMarketOrder', [AAPL, Side.Sell, shares('1'), 0n, ANY_SELL_PRICE, deadline])).result;
    await setFees(0, 0);
    expect(await feeRates([second])).toEqual([1000]);
    await settle(f, [{ orderId: second, quantity: shares('1'), price: price('100') }], [{ orderId: second, status: OrderStatus.Filled }]);
    expect((await getOrder(second)).fees).toBe(musd('10'));
    // An id not placed yet answers what a limit order placed now would pay.
    expect(await feeRates([10_000n])).toEqual([0]);
    await expectCashInvariant(f, [alice.address, bob.address]);
    expect((await getOrder(second)).orderType).toBe(OrderType.Market);
  });
});

describe('sweepFees', () => {
  test('the owner moves collected fees to the treasury\'s free balance, exactly, with an event; the cash invariant holds', async () => {
    const deadline = await deadlineIn(f, 3600);
    const buy = (await routerCall<bigint>(f, alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('2002'), ANY_BUY_PRICE, deadline])).result;
    await settle(f, [{ orderId: buy, quantity: shares('20'), price: price('100') }], [{ orderId: buy, status: OrderStatus.Filled }]);
    // 10 bps of 2,000.
    expect(await feeBalance()).toBe(musd('2'));
    const treasury = await f.publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'treasury' });
    const sim = (amount: bigint, account: Address = f.operator.account.address) =>
      () => f.publicClient.simulateContract({ account, address: cashier, abi: cashierAbi, functionName: 'sweepFees', args: [amount] });
    await expectRevert(sim(musd('1'), alice.address), 'OwnableUnauthorizedAccount', [alice.address]);
    await expectRevert(sim(0n), 'ZeroAmount');
    await expectRevert(sim(musd('2') + 1n), 'InsufficientBalance', [musd('2'), musd('2') + 1n]);

    const before = await mUsdOf(f, treasury);
    const r = await confirm(f, f.operator.writeContract({ address: cashier, abi: cashierAbi, functionName: 'sweepFees', args: [musd('1.5')] }));
    expect(parseEventLogs({ abi: cashierAbi, logs: r.logs, eventName: 'FeesSwept' }).map((l) => l.args)).toEqual([{ treasury, musdAmount: musd('1.5') }]);
    expect(await feeBalance()).toBe(musd('0.5'));
    expect((await mUsdOf(f, treasury)).free - before.free).toBe(musd('1.5'));
    await expectCashInvariant(f, [alice.address, bob.address]);
    // The rest, once more: the fee balance is empty and a further sweep has nothing to take.
    await confirm(f, f.operator.writeContract({ address: cashier, abi: cashierAbi, functionName: 'sweepFees', args: [musd('0.5')] }));
    expect(await feeBalance()).toBe(0n);
    expect((await mUsdOf(f, treasury)).free - before.free).toBe(musd('2'));
    await expectRevert(sim(1n), 'InsufficientBalance', [0n, 1n]);
    await expectCashInvariant(f, [alice.address, bob.address]);
  });
});
