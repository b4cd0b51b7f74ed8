import { describe, expect, test } from 'vitest';
import { parseEventLogs, type Address, type ContractFunctionName } from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveStock, approveUsdc, ceilDiv, confirm, contracts, DAY, deadlineEachTest, deadlineIn, depositStock, depositUsdc, expectRevert, expectStockBacking, mUsdOf, musd, OrderStatus, OrderType, price, shares, Side, stockOf, usdc, usdcOf, ANY_BUY_PRICE, ANY_SELL_PRICE } from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let aapl: Address;
let router: Address;
let deadline: number;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  aapl = contracts(f).stocks.AAPL;
  router = contracts(f).stockRouter;
});
deadlineEachTest(f, (d) => (deadline = d));

type RouterFn = ContractFunctionName<typeof stockRouterAbi, 'nonpayable'>;

/** Simulates as `user` (proving the return value), sends, waits; returns the receipt and result. */
async function routerCall(user: ChainUser, functionName: RouterFn, args: readonly unknown[]) {
  // Loosely typed on purpose: the tests pass raw argument lists for many functions.
  const sim = await f.publicClient.simulateContract({
    account: user.wallet.account,
    address: router,
    abi: stockRouterAbi,
    functionName,
    args,
  } as never);
  const receipt = await confirm(f, user.wallet.writeContract(sim.request as never));
  return { receipt, result: sim.result as unknown };
}

function simulate(user: ChainUser, functionName: RouterFn, args: readonly unknown[]) {
  return () =>
    f.publicClient.simulateContract({ account: user.wallet.account, address: router, abi: stockRouterAbi, functionName, args } as never);
}

async function getOrder(orderId: bigint) {
  return f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [orderId] });
}

describe('placing orders locks the right amounts', () => {
  test('market buy locks its notional', async () => {
    await depositUsdc(f, alice, usdc('10000'));
    const { receipt, result } = await routerCall(alice, 'placeMarketOrder', [aapl, Side.Buy, 0n, musd('1000'), ANY_BUY_PRICE, deadline]);
    expect(result).toBe(1n);
    const [ev] = parseEventLogs({ abi: stockRouterAbi, logs: receipt.logs, eventName: 'OrderPlaced' });
    expect(ev.args).toEqual({
      orderId: 1n,
      user: alice.address,
      stock: aapl,
      side: Side.Buy,
      orderType: OrderType.Market,
      quantity: 0n,
      notional: musd('1000'),
      // A market order's price is its worst price.
      price: ANY_BUY_PRICE,
      timeInForce: DAY,
      deadline,
      locked: musd('1000'),
      multiplier: 10n ** 36n,
    });
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('9000'), locked: musd('1000') });
    const order = await getOrder(1n);
    expect(order).toMatchObject({ user: alice.address, stock: aapl, status: OrderStatus.Open, locked: musd('1000'), filledQuantity: 0n });
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'nextOrderId' })).toBe(2n);
  });

  test('market sell locks exchange stock', async () => {
    await depositStock(f, bob, aapl, shares('10'));
    await routerCall(bob, 'placeMarketOrder', [aapl, Side.Sell, shares('4'), 0n, ANY_SELL_PRICE, deadline]);
    expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: shares('90'), exchange: shares('6'), locked: shares('4') });
    expect((await getOrder(1n)).locked).toBe(shares('4'));
  });

  test('limit buy locks ceil(quantity * price) plus the limit fee, rounded up', async () => {
    await depositUsdc(f, alice, usdc('2000'));
    const q = 3_333_333_333_333_333_333n; // 3.333… shares
    const p = price('229.87');
    const cost = ceilDiv(q * p, 10n ** 18n);
    const lock = cost + ceilDiv(cost * 5n, 10_000n);
    expect(cost).toBe(766_233_333_333_333_333_257n); // 766.2333…257 rounded up
    await routerCall(alice, 'placeLimitOrder', [aapl, Side.Buy, q, p, DAY, deadline]);
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('2000') - lock, locked: lock });
    expect(await getOrder(1n)).toMatchObject({ quantity: q, price: p, notional: cost, locked: lock, orderType: OrderType.Limit });
  });

  test('limit sell locks its quantity', async () => {
    await depositStock(f, bob, aapl, shares('10'));
    await routerCall(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('2.5'), price('240'), DAY, deadline]);
    expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: shares('90'), exchange: shares('7.5'), locked: shares('2.5') });
    expect(await getOrder(1n)).toMatchObject({ notional: musd('600'), locked: shares('2.5') });
  });

  test('deposit-and-buy credits the deposit and locks in one transaction', async () => {
    const c = contracts(f);
    await approveUsdc(f, alice, usdc('3000'));
    const wallet = await usdcOf(f, alice.address);
    await routerCall(alice, 'depositAndMarketBuy', [c.cashToken, usdc('1000'), aapl, musd('800'), ANY_BUY_PRICE, deadline]);
    const lock = musd('460') + ceilDiv(musd('460') * 5n, 10_000n);
    const { result } = await routerCall(alice, 'depositAndLimitBuy', [c.cashToken, usdc('2000'), aapl, shares('2'), price('230'), DAY, deadline]);
    expect(result).toBe(2n);
    expect(await usdcOf(f, alice.address)).toBe(wallet - usdc('3000'));
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('3000') - musd('800') - lock, locked: musd('800') + lock });
  });

  test('deposit-and-sell moves wallet stock to the exchange and locks it', async () => {
    await approveStock(f, bob, aapl, shares('5'));
    await routerCall(bob, 'depositStockAndMarketSell', [aapl, shares('3'), ANY_SELL_PRICE, deadline]);
    await routerCall(bob, 'depositStockAndLimitSell', [aapl, shares('2'), price('235'), DAY, deadline]);
    expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: shares('95'), exchange: 0n, locked: shares('5') });
    await expectStockBacking(f, aapl, [bob.address]);
  });

  test('deposit-and-buy needs an instant deposit', async () => {
    const c = contracts(f);
    await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setCreditBuffer', args: [musd('100')] }));
    await approveUsdc(f, alice, usdc('1000'));
    await expectRevert(simulate(alice, 'depositAndMarketBuy', [c.cashToken, usdc('1000'), aapl, musd('500'), ANY_BUY_PRICE, deadline]), 'DepositNotInstant', []);
  });
});

describe('cancel', () => {
  test('cancel → Canceling → operator close Canceled releases the lock', async () => {
    await depositUsdc(f, alice, usdc('1000'));
    await routerCall(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('2'), price('200'), DAY, deadline]);
    const lock = musd('400') + musd('0.2');
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('1000') - lock, locked: lock });

    const { receipt } = await routerCall(alice, 'cancelLimitOrder', [1n]);
    expect(parseEventLogs({ abi: stockRouterAbi, logs: receipt.logs, eventName: 'OrderCancelRequested' })[0].args).toEqual({ orderId: 1n, user: alice.address });
    expect((await getOrder(1n)).status).toBe(OrderStatus.Canceling);
    // Still locked until the operator closes it.
    expect((await mUsdOf(f, alice.address)).locked).toBe(lock);

    const closed = await confirm(
      f,
      f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[], [{ orderId: 1n, status: OrderStatus.Canceled }]] }),
    );
    expect(parseEventLogs({ abi: stockRouterAbi, logs: closed.logs, eventName: 'OrderClosed' })[0].args).toEqual({
      orderId: 1n,
      user: alice.address,
      status: OrderStatus.Canceled,
      released: lock,
    });
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('1000'), locked: 0n });
    expect(await getOrder(1n)).toMatchObject({ status: OrderStatus.Canceled, locked: 0n });
  });

  test('a canceled limit sell returns the stock to the free exchange balance', async () => {
    await depositStock(f, bob, aapl, shares('3'));
    await routerCall(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('3'), price('250'), DAY, deadline]);
    await routerCall(bob, 'cancelLimitOrder', [1n]);
    await confirm(
      f,
      f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[], [{ orderId: 1n, status: OrderStatus.Canceled }]] }),
    );
    expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: shares('97'), exchange: shares('3'), locked: 0n });
  });
});

describe('every revert of seed §7A, decoded with the StockRouter ABI', () => {
  test('plain buy with insufficient mUSD → InsufficientBalance', async () => {
    await depositUsdc(f, alice, usdc('100'));
    await expectRevert(simulate(alice, 'placeMarketOrder', [aapl, Side.Buy, 0n, musd('100.01'), ANY_BUY_PRICE, deadline]), 'InsufficientBalance', [
      musd('100'),
      musd('100.01'),
    ]);
    await expectRevert(simulate(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('100'), DAY, deadline]), 'InsufficientBalance', [
      musd('100'),
      musd('100.05'),
    ]);
  });

  test('plain sell with insufficient exchange balance → InsufficientStockBalance', async () => {
    // Bob holds 100 AAPL in his wallet but none on the exchange.
    await expectRevert(simulate(bob, 'placeMarketOrder', [aapl, Side.Sell, shares('1'), 0n, ANY_SELL_PRICE, deadline]), 'InsufficientStockBalance', [0n, shares('1')]);
    await depositStock(f, bob, aapl, shares('2'));
    await expectRevert(
      simulate(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('2.5'), price('200'), DAY, deadline]),
      'InsufficientStockBalance',
      [shares('2'), shares('2.5')],
    );
  });

  test('deposit-and-sell lacking stock allowance → ERC20InsufficientAllowance', async () => {
    await expectRevert(simulate(bob, 'depositStockAndMarketSell', [aapl, shares('1'), ANY_SELL_PRICE, deadline]), 'ERC20InsufficientAllowance', [router, 0n, shares('1')]);
    await approveStock(f, bob, aapl, shares('1'));
    await expectRevert(
      simulate(bob, 'depositStockAndLimitSell', [aapl, shares('2'), price('200'), DAY, deadline]),
      'ERC20InsufficientAllowance',
      [router, shares('1'), shares('2')],
    );
  });

  test('deposit-and-sell lacking wallet stock → ERC20InsufficientBalance', async () => {
    await approveStock(f, bob, aapl, shares('1000'));
    await expectRevert(simulate(bob, 'depositStockAndMarketSell', [aapl, shares('100.5'), ANY_SELL_PRICE, deadline]), 'ERC20InsufficientBalance', [
      bob.address,
      shares('100'),
      shares('100.5'),
    ]);
  });

  test('deposit-and-buy lacking cash allowance or balance → ERC20 errors', async () => {
    const c = contracts(f);
    await expectRevert(simulate(alice, 'depositAndMarketBuy', [c.cashToken, usdc('10'), aapl, musd('10'), ANY_BUY_PRICE, deadline]), 'ERC20InsufficientAllowance', [
      router,
      0n,
      usdc('10'),
    ]);
    await approveUsdc(f, alice, usdc('200000'));
    await expectRevert(
      simulate(alice, 'depositAndLimitBuy', [c.cashToken, usdc('200000'), aapl, shares('1'), price('10'), DAY, deadline]),
      'ERC20InsufficientBalance',
      [alice.address, usdc('100000'), usdc('200000')],
    );
  });

  test('cancel of an order that is not open, or already canceling → OrderNotOpen', async () => {
    await depositUsdc(f, alice, usdc('1000'));
    await routerCall(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    await routerCall(alice, 'cancelLimitOrder', [1n]);
    await expectRevert(simulate(alice, 'cancelLimitOrder', [1n]), 'OrderNotOpen', [1n]);
    await confirm(
      f,
      f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [[], [{ orderId: 1n, status: OrderStatus.Canceled }]] }),
    );
    await expectRevert(simulate(alice, 'cancelLimitOrder', [1n]), 'OrderNotOpen', [1n]);
    // A closed (filled) order.
    await routerCall(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    await confirm(
      f,
      f.operator.writeContract({
        address: router,
        abi: stockRouterAbi,
        functionName: 'settleOrders',
        args: [[{ orderId: 2n, quantity: shares('1'), price: price('100') }], [{ orderId: 2n, status: OrderStatus.Filled }]],
      }),
    );
    await expectRevert(simulate(alice, 'cancelLimitOrder', [2n]), 'OrderNotOpen', [2n]);
    // An order that does not exist.
    await expectRevert(simulate(alice, 'cancelLimitOrder', [99n]), 'OrderNotOpen', [99n]);
  });

  test('cancel by someone else → NotOrderOwner; of a market order → NotLimitOrder', async () => {
    await depositUsdc(f, alice, usdc('1000'));
    await routerCall(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    await routerCall(alice, 'placeMarketOrder', [aapl, Side.Buy, 0n, musd('100'), ANY_BUY_PRICE, deadline]);
    await expectRevert(simulate(bob, 'cancelLimitOrder', [1n]), 'NotOrderOwner', [1n]);
    await expectRevert(simulate(alice, 'cancelLimitOrder', [2n]), 'NotLimitOrder', [2n]);
  });

  test('expired deadline → DeadlineExpired; one years ahead is accepted', async () => {
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('1000'));
    await depositStock(f, bob, aapl, shares('1'));
    const past = await deadlineIn(f, -10);
    // The uint32's last second: Anchored's documented deadlines are years ahead.
    const far = 4_294_967_295;
    await expectRevert(simulate(alice, 'placeMarketOrder', [aapl, Side.Buy, 0n, musd('10'), ANY_BUY_PRICE, past]), 'DeadlineExpired', [past]);
    await expectRevert(simulate(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('10'), DAY, past]), 'DeadlineExpired', [past]);
    await expectRevert(simulate(bob, 'placeMarketOrder', [aapl, Side.Sell, shares('1'), 0n, ANY_SELL_PRICE, past]), 'DeadlineExpired', [past]);
    await expectRevert(simulate(alice, 'depositAndMarketBuy', [c.cashToken, usdc('10'), aapl, musd('10'), ANY_BUY_PRICE, past]), 'DeadlineExpired', [past]);
    await expectRevert(simulate(bob, 'depositStockAndMarketSell', [aapl, shares('1'), ANY_SELL_PRICE, past]), 'DeadlineExpired', [past]);
    const accepted = (await simulate(alice, 'placeMarketOrder', [aapl, Side.Buy, 0n, musd('10'), ANY_BUY_PRICE, far])()) as { result: unknown };
    expect(typeof accepted.result).toBe('bigint');
  });

  test('limit order with a non-DAY timeInForce → InvalidTimeInForce', async () => {
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('1000'));
    await depositStock(f, bob, aapl, shares('1'));
    await expectRevert(simulate(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), price('10'), 1, deadline]), 'InvalidTimeInForce', [1]);
    await expectRevert(simulate(bob, 'placeLimitOrder', [aapl, Side.Sell, shares('1'), price('10'), 3, deadline]), 'InvalidTimeInForce', [3]);
    await expectRevert(
      simulate(alice, 'depositAndLimitBuy', [c.cashToken, usdc('10'), aapl, shares('1'), price('1'), 2, deadline]),
      'InvalidTimeInForce',
      [2],
    );
    await expectRevert(simulate(bob, 'depositStockAndLimitSell', [aapl, shares('1'), price('10'), 1, deadline]), 'InvalidTimeInForce', [1]);
  });

  test('missing notional, quantity or price, and unlisted stocks', async () => {
    await depositUsdc(f, alice, usdc('1000'));
    const unlisted = contracts(f).cashToken;
    await expectRevert(simulate(alice, 'placeMarketOrder', [aapl, Side.Buy, shares('1'), 0n, ANY_BUY_PRICE, deadline]), 'ZeroNotional', []);
    await expectRevert(simulate(alice, 'placeMarketOrder', [aapl, Side.Sell, 0n, musd('1'), ANY_SELL_PRICE, deadline]), 'ZeroQuantity', []);
    await expectRevert(simulate(alice, 'placeLimitOrder', [aapl, Side.Buy, shares('1'), 0n, DAY, deadline]), 'ZeroPrice', []);
    await expectRevert(simulate(alice, 'placeLimitOrder', [aapl, Side.Buy, 0n, price('1'), DAY, deadline]), 'ZeroQuantity', []);
    await expectRevert(simulate(alice, 'placeMarketOrder', [unlisted, Side.Buy, 0n, musd('1'), ANY_BUY_PRICE, deadline]), 'StockNotListed', [unlisted]);
  });
});
