import { describe, expect, test } from 'vitest';
import { parseEventLogs, type Address, type ContractFunctionName } from 'viem';
import { accountLensAbi, cashierAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { confirm, contracts, DAY, deadlineEachTest, depositStock, depositUsdc, expectCashInvariant, expectRevert, expectStockBacking, mUsdOf, musd, OrderStatus, price, shares, Side, stockOf, usdc, ANY_BUY_PRICE, ANY_SELL_PRICE, settle as settleWithMargin } from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let carol: ChainUser;
let treasury: Address;
let stocks: Record<string, Address>;
let router: Address;
let deadline: number;

const f = useChainFixture(async () => {
  [alice, bob, carol] = f.users;
  stocks = contracts(f).stocks;
  router = contracts(f).stockRouter;
  treasury = f.operator.account.address;
});
deadlineEachTest(f, (d) => (deadline = d));

type RouterFn = ContractFunctionName<typeof stockRouterAbi, 'nonpayable'>;
interface Fill {
  orderId: bigint;
  quantity: bigint;
  price: bigint;
}
interface Close {
  orderId: bigint;
  status: number;
}

async function place(user: ChainUser, functionName: RouterFn, args: readonly unknown[]): Promise<bigint> {
  const sim = await f.publicClient.simulateContract({ account: user.wallet.account, address: router, abi: stockRouterAbi, functionName, args } as never);
  await confirm(f, user.wallet.writeContract((sim as { request: unknown }).request as never));
  return (sim as { result: bigint }).result;
}

async function settle(fills: Fill[], closes: Close[]) {
  return settleWithMargin(f, fills, closes);
}

function simulateSettle(fills: Fill[], closes: Close[], account = f.operator.account) {
  return () => f.publicClient.simulateContract({ account, address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, closes] });
}

async function cashierRead(functionName: 'feeBalance') {
  return f.publicClient.readContract({ address: contracts(f).cashier, abi: cashierAbi, functionName });
}

async function totalSupply(stock: Address) {
  return f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'totalSupply' });
}

test('a batch of fills, partial fills and closes moves balances and fees exactly', async () => {
  const { AAPL, TSLA, NVDA } = stocks;
  await depositUsdc(f, alice, usdc('50000'));
  await depositUsdc(f, carol, usdc('10000'));
  await depositStock(f, bob, AAPL, shares('50'));
  await depositStock(f, bob, TSLA, shares('20'));
  const treasuryStart = (await mUsdOf(f, treasury)).free;
  expect(treasuryStart).toBe(musd('5000000'));

  const o1 = await place(alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('5000'), ANY_BUY_PRICE, deadline]);
  const o2 = await place(alice, 'placeLimitOrder', [TSLA, Side.Buy, shares('10'), price('250'), DAY, deadline]);
  const o3 = await place(bob, 'placeMarketOrder', [AAPL, Side.Sell, shares('5'), 0n, ANY_SELL_PRICE, deadline]);
  const o4 = await place(bob, 'placeLimitOrder', [TSLA, Side.Sell, shares('8'), price('251'), DAY, deadline]);
  const o5 = await place(carol, 'placeLimitOrder', [AAPL, Side.Buy, shares('7'), price('230'), DAY, deadline]);
  const o6 = await place(carol, 'placeMarketOrder', [NVDA, Side.Buy, 0n, musd('1000'), ANY_BUY_PRICE, deadline]);
  expect([o1, o2, o3, o4, o5, o6]).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
  // Limit buy locks: 2500 + 1.25 fee; 1610 + 0.805 fee.
  expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('42498.75'), locked: musd('7501.25') });
  expect(await mUsdOf(f, carol.address)).toEqual({ free: musd('7389.195'), locked: musd('2610.805') });

  const batch1 = await settle(
    [
      { orderId: o1, quantity: shares('21.5'), price: price('229.91') }, // cost 4943.065, fee 4.943065
      { orderId: o2, quantity: shares('4'), price: price('249.50') }, // cost 998, fee 0.499
      { orderId: o2, quantity: shares('3'), price: price('249.75') }, // cost 749.25, fee 0.374625
      { orderId: o3, quantity: shares('5'), price: price('229.83') }, // proceeds 1149.15, fee 1.14915
      { orderId: o4, quantity: shares('3'), price: price('251.10') }, // proceeds 753.30, fee 0.37665
      { orderId: o5, quantity: shares('7'), price: price('229.99') }, // cost 1609.93, fee 0.804965
      { orderId: o6, quantity: shares('7.6'), price: price('131.30') }, // cost 997.88, fee 0.99788
    ],
    [
      { orderId: o1, status: OrderStatus.Filled },
      { orderId: o3, status: OrderStatus.Filled },
      { orderId: o5, status: OrderStatus.Filled },
      { orderId: o6, status: OrderStatus.Filled },
    ],
  );

  const fills = parseEventLogs({ abi: stockRouterAbi, logs: batch1.logs, eventName: 'OrderFilled' });
  expect(fills.map((e) => [e.args.orderId, e.args.notional, e.args.fee])).toEqual([
    [o1, musd('4943.065'), musd('4.943065')],
    [o2, musd('998'), musd('0.499')],
    [o2, musd('749.25'), musd('0.374625')],
    [o3, musd('1149.15'), musd('1.14915')],
    [o4, musd('753.30'), musd('0.37665')],
    [o5, musd('1609.93'), musd('0.804965')],
    [o6, musd('997.88'), musd('0.99788')],
  ]);
  const closes = parseEventLogs({ abi: stockRouterAbi, logs: batch1.logs, eventName: 'OrderClosed' });
  expect(closes.map((e) => [e.args.orderId, e.args.status, e.args.released])).toEqual([
    [o1, OrderStatus.Filled, musd('51.991935')], // 5000 - 4948.008065
    [o3, OrderStatus.Filled, 0n],
    [o5, OrderStatus.Filled, musd('0.070035')], // 1610.805 - 1610.734965
    [o6, OrderStatus.Filled, musd('1.12212')], // 1000 - 998.87788
  ]);

  expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('42550.741935'), locked: musd('753.126375') });
  expect(await mUsdOf(f, bob.address)).toEqual({ free: musd('1900.9242'), locked: 0n }); // 1148.00085 + 752.92335
  expect(await mUsdOf(f, carol.address)).toEqual({ free: musd('7390.387155'), locked: 0n });
  expect((await mUsdOf(f, treasury)).free).toBe(musd('5007395.675')); // + 9298.125 bought − 1902.45 sold
  expect(await cashierRead('feeBalance')).toBe(musd('9.145335'));
  expect(await stockOf(f, AAPL, alice.address)).toEqual({ wallet: shares('100'), exchange: shares('21.5'), locked: 0n });
  expect(await stockOf(f, TSLA, alice.address)).toEqual({ wallet: shares('100'), exchange: shares('7'), locked: 0n });
  expect(await stockOf(f, AAPL, bob.address)).toEqual({ wallet: shares('50'), exchange: shares('45'), locked: 0n });
  expect(await stockOf(f, TSLA, bob.address)).toEqual({ wallet: shares('80'), exchange: shares('12'), locked: shares('5') });
  expect(await stockOf(f, NVDA, carol.address)).toEqual({ wallet: shares('100'), exchange: shares('7.6'), locked: 0n });
  expect(await totalSupply(AAPL)).toBe(shares('423.5')); // 400 + 21.5 + 7 − 5
  const order2 = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [o2] });
  expect(order2).toMatchObject({
    status: OrderStatus.Open,
    filledQuantity: shares('7'),
    filledNotional: musd('1747.25'),
    fees: musd('0.873625'),
    locked: musd('753.126375'),
  });
  const everyone = [alice.address, bob.address, carol.address];
  await expectCashInvariant(f, everyone);
  for (const s of [AAPL, TSLA, NVDA]) await expectStockBacking(f, s, everyone);

  // Batch 2: alice cancels o2; a late fill still lands while Canceling, then the close releases the rest.
  await place(alice, 'cancelLimitOrder', [o2]);
  const batch2 = await settle(
    [{ orderId: o2, quantity: shares('2'), price: price('250') }],
    [
      { orderId: o2, status: OrderStatus.Canceled },
      { orderId: o4, status: OrderStatus.Expired },
    ],
  );
  const closes2 = parseEventLogs({ abi: stockRouterAbi, logs: batch2.logs, eventName: 'OrderClosed' });
  expect(closes2.map((e) => [e.args.orderId, e.args.status, e.args.released])).toEqual([
    [o2, OrderStatus.Canceled, musd('252.876375')], // 753.126375 − 500.25
    [o4, OrderStatus.Expired, shares('5')],
  ]);
  expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('42803.61831'), locked: 0n });
  expect(await stockOf(f, TSLA, bob.address)).toEqual({ wallet: shares('80'), exchange: shares('17'), locked: 0n });
  expect(await cashierRead('feeBalance')).toBe(musd('9.395335'));
  expect((await mUsdOf(f, treasury)).free).toBe(musd('5007895.675'));
  expect(await totalSupply(TSLA)).toBe(shares('406'));
  await expectCashInvariant(f, everyone);
  for (const s of [AAPL, TSLA, NVDA]) await expectStockBacking(f, s, everyone);

  // The lens reads the same figures in one call.
  const config = await f.publicClient.readContract({ address: contracts(f).accountLens, abi: accountLensAbi, functionName: 'getMarketConfig' });
  expect(config).toMatchObject({
    feeBalance: musd('9.395335'),
    treasury,
    treasuryBalance: musd('5007895.675'),
    marketFeeBps: 10,
    limitFeeBps: 5,
    totalQueuedDeposits: 0n,
    totalQueuedWithdrawals: 0n,
    creditBuffer: musd('1000000') - musd('60000'),
  });
  expect(config.cashTokens).toEqual([
    {
      token: contracts(f).cashToken,
      symbol: 'USDC',
      decimals: 6,
      enabled: true,
      minAmount: usdc('1'),
      withdrawBuffer: usdc('250000'),
      cashierTokenBalance: usdc('5060000'),
    },
  ]);
  expect(config.stocks.map((s) => [s.symbol, s.totalSupply])).toEqual([
    ['AAPL', shares('423.5')],
    ['TSLA', shares('406')],
    ['NVDA', shares('407.6')],
    ['MSFT', shares('400')],
    ['SPY', shares('400')],
  ]);
  const orders = await f.publicClient.readContract({ address: contracts(f).accountLens, abi: accountLensAbi, functionName: 'getOrders', args: [[o1, o2, 99n]] });
  expect(orders.map((o) => o.status)).toEqual([OrderStatus.Filled, OrderStatus.Canceled, OrderStatus.None]);
});

describe('rounding', () => {
  test('one-unit fills: buyer pays rounded up, seller receives rounded down, fee rounded up', async () => {
    const { AAPL } = stocks;
    await depositUsdc(f, alice, usdc('10'));
    await depositStock(f, bob, AAPL, shares('1'));
    const buy = await place(alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('1'), ANY_BUY_PRICE, deadline]);
    const sell = await place(bob, 'placeMarketOrder', [AAPL, Side.Sell, 1n, 0n, ANY_SELL_PRICE, deadline]);
    const receipt = await settle(
      [
        { orderId: buy, quantity: 1n, price: price('229.87') },
        { orderId: sell, quantity: 1n, price: price('229.87') },
      ],
      [],
    );
    const ev = parseEventLogs({ abi: stockRouterAbi, logs: receipt.logs, eventName: 'OrderFilled' });
    expect(ev.map((e) => [e.args.notional, e.args.fee])).toEqual([
      [230n, 1n], // ceil(229.87), ceil(0.23)
      [229n, 1n], // floor(229.87), ceil(0.229)
    ]);
    expect((await mUsdOf(f, bob.address)).free).toBe(228n);
  });

  test('a limit buy filled in many tiny parts never outgrows its lock', async () => {
    const { AAPL } = stocks;
    await depositUsdc(f, alice, usdc('10'));
    const p = 10n ** 18n + 1n; // 1.000000000000000001 mUSD per share
    const id = await place(alice, 'placeLimitOrder', [AAPL, Side.Buy, 3n, p, DAY, deadline]);
    // lock = ceil(3.000000000000000003) = 4, fee ceil(4 * 5 / 10_000) = 1.
    expect((await mUsdOf(f, alice.address)).locked).toBe(5n);
    // Rounded per fill this would cost 2 + 2 + 2 plus 1 + 1 + 1 in fees; on the running total it is 4 + 1.
    const receipt = await settle(
      [1n, 1n, 1n].map((quantity) => ({ orderId: id, quantity, price: p })),
      [{ orderId: id, status: OrderStatus.Filled }],
    );
    const ev = parseEventLogs({ abi: stockRouterAbi, logs: receipt.logs, eventName: 'OrderFilled' });
    expect(ev.map((e) => [e.args.notional, e.args.fee])).toEqual([
      [2n, 1n],
      [1n, 0n],
      [1n, 0n],
    ]);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('10') - 5n, locked: 0n });
  });
});

describe('settlement reverts', () => {
  test('prices outside the limit or a market order\'s worst price, oversized fills, short locks, bad closes, non-operators', async () => {
    const { AAPL } = stocks;
    await depositUsdc(f, alice, usdc('1000'));
    await depositStock(f, bob, AAPL, shares('5'));
    const limitBuy = await place(alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    const limitSell = await place(bob, 'placeLimitOrder', [AAPL, Side.Sell, shares('1'), price('100'), DAY, deadline]);
    const marketSell = await place(bob, 'placeMarketOrder', [AAPL, Side.Sell, shares('1'), 0n, ANY_SELL_PRICE, deadline]);
    const marketBuy = await place(alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('100'), ANY_BUY_PRICE, deadline]);

    await expectRevert(simulateSettle([{ orderId: limitBuy, quantity: shares('1'), price: price('100.01') }], []), 'PriceOutsideLimit', [limitBuy]);
    await expectRevert(simulateSettle([{ orderId: limitSell, quantity: shares('1'), price: price('99.99') }], []), 'PriceOutsideLimit', [limitSell]);
    await expectRevert(simulateSettle([{ orderId: limitBuy, quantity: shares('1.5'), price: price('90') }], []), 'FillExceedsOrder', [limitBuy]);
    await expectRevert(simulateSettle([{ orderId: marketSell, quantity: shares('1.01'), price: price('90') }], []), 'FillExceedsOrder', [marketSell]);
    // 1 share at 100 costs 100 plus a 0.1 fee: more than the 100 locked.
    await expectRevert(simulateSettle([{ orderId: marketBuy, quantity: shares('1'), price: price('100') }], []), 'LockInsufficient', [marketBuy]);
    await expectRevert(simulateSettle([{ orderId: limitBuy, quantity: 0n, price: price('100') }], []), 'ZeroQuantity', []);
    await expectRevert(simulateSettle([{ orderId: 42n, quantity: 1n, price: 1n }], []), 'OrderNotOpen', [42n]);
    await expectRevert(simulateSettle([], [{ orderId: limitBuy, status: OrderStatus.Open }]), 'InvalidCloseStatus', []);
    await expectRevert(simulateSettle([], [{ orderId: limitBuy, status: OrderStatus.Canceling }]), 'InvalidCloseStatus', []);
    await expectRevert(
      simulateSettle([], [{ orderId: limitBuy, status: OrderStatus.Filled }, { orderId: limitBuy, status: OrderStatus.Filled }]),
      'OrderNotOpen',
      [limitBuy],
    );
    await expectRevert(simulateSettle([], [], alice.wallet.account), 'NotOperator', [alice.address]);

    // A market order's worst price bounds its fills as a limit does; a market order without one is refused.
    const boundBuy = await place(alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('300'), price('120'), deadline]);
    const boundSell = await place(bob, 'placeMarketOrder', [AAPL, Side.Sell, shares('1'), 0n, price('80'), deadline]);
    await expectRevert(simulateSettle([{ orderId: boundBuy, quantity: shares('1'), price: price('120.000000000000000001') }], []), 'PriceOutsideLimit', [boundBuy]);
    await expectRevert(simulateSettle([{ orderId: boundSell, quantity: shares('1'), price: price('79.999999999999999999') }], []), 'PriceOutsideLimit', [boundSell]);
    await simulateSettle([{ orderId: boundBuy, quantity: shares('1'), price: price('120') }, { orderId: boundSell, quantity: shares('1'), price: price('80') }], [])();
    await expectRevert(() => place(alice, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('10'), 0n, deadline]), 'ZeroPrice', []);

    // A treasury that cannot pay a sell.
    const empty = f.users[3].address;
    await confirm(f, f.operator.writeContract({ address: contracts(f).cashier, abi: cashierAbi, functionName: 'setTreasury', args: [empty] }));
    await expectRevert(simulateSettle([{ orderId: limitSell, quantity: shares('1'), price: price('100') }], []), 'TreasuryInsufficient', [0n, musd('100')]);
  });
});

test('cash invariant holds through a mixed sequence of cash, stock and order operations', async () => {
  const c = contracts(f);
  const { AAPL, MSFT } = stocks;
  const everyone = f.users.map((u) => u.address);
  // Small buffers so that both instant and queued paths are taken.
  await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setCreditBuffer', args: [musd('3000')] }));
  await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setWithdrawBuffer', args: [c.cashToken, usdc('500')] }));

  await depositUsdc(f, alice, usdc('2000')); // instant
  await depositUsdc(f, bob, usdc('1500')); // queued (buffer 1000 left)
  await depositUsdc(f, carol, usdc('999.999999')); // instant
  const queued = (functionName: 'totalQueuedDeposits' | 'totalQueuedWithdrawals') =>
    f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName });
  expect(await queued('totalQueuedDeposits')).toBe(musd('1500'));
  await expectCashInvariant(f, everyone);

  await depositStock(f, bob, AAPL, shares('3'));
  const b1 = await place(alice, 'placeLimitOrder', [MSFT, Side.Buy, shares('2.123456789012345678'), price('418.16'), DAY, deadline]);
  const s1 = await place(bob, 'placeMarketOrder', [AAPL, Side.Sell, shares('3'), 0n, ANY_SELL_PRICE, deadline]);
  const b2 = await place(carol, 'placeMarketOrder', [AAPL, Side.Buy, 0n, musd('700'), ANY_BUY_PRICE, deadline]);
  await expectCashInvariant(f, everyone);

  await settle(
    [
      { orderId: b1, quantity: shares('1.000000000000000001'), price: price('417.99') },
      { orderId: s1, quantity: shares('3'), price: price('229.123456789012345678') },
      { orderId: b2, quantity: shares('3.03'), price: price('230.01') },
    ],
    [
      { orderId: s1, status: OrderStatus.Filled },
      { orderId: b2, status: OrderStatus.Filled },
    ],
  );
  await expectCashInvariant(f, everyone);

  await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'settleDeposit', args: [1n] }));
  await confirm(f, alice.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('400')] })); // instant
  await confirm(f, alice.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('300')] })); // queued
  await confirm(f, bob.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('100')] })); // instant (100 left)
  expect(await queued('totalQueuedDeposits')).toBe(0n);
  expect(await queued('totalQueuedWithdrawals')).toBe(musd('300'));
  await expectCashInvariant(f, everyone);

  await place(alice, 'cancelLimitOrder', [b1]);
  await settle([], [{ orderId: b1, status: OrderStatus.Canceled }]);
  await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'settleWithdrawal', args: [1n] }));
  await expectCashInvariant(f, everyone);
  for (const u of everyone) expect((await mUsdOf(f, u)).locked).toBe(0n);
  for (const s of [AAPL, MSFT]) await expectStockBacking(f, s, everyone);
});
