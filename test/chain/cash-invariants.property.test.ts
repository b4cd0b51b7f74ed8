/**
 * Property test of the money invariants on real contracts (anvil): fast-check drives random
 * sequences of deposits, withdrawals, stock moves, market and limit orders, cancels, operator fills
 * and closes, buffer changes and queued settlements; after every step
 *   cash tokens held by the Cashier (in mUSD) = Σ users' free + locked mUSD (treasury included)
 *                                             + fees + queued withdrawals + queued deposits,
 * each Stock contract holds exactly the sum of exchange balances (free + locked), and the locks
 * equal what the open orders still hold. At the end every order is closed and has exactly one final
 * state (one OrderClosed event per order).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, parseEventLogs, type Address, type Hex } from 'viem';
import { accountLensAbi, cashierAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { approveStock, approveUsdc, musd, OrderStatus, price, shares, Side, usdc, ANY_BUY_PRICE, ANY_SELL_PRICE, settle } from './chain-test-helpers.ts';

let f: ChainFixture;
let base: Hex;

beforeAll(async () => {
  f = await startChainFixture();
  const c = f.deployment.contracts;
  for (const u of f.users.slice(0, 4)) {
    await approveUsdc(f, u, 2n ** 255n);
    await approveStock(f, u, c.stocks.AAPL, 2n ** 255n);
  }
  base = await f.snapshot();
});
afterAll(async () => {
  await f?.stop();
});

type Cmd =
  | { op: 'deposit'; user: number; amount: number }
  | { op: 'withdraw'; user: number; amount: number }
  | { op: 'depositStock'; user: number; amount: number }
  | { op: 'withdrawStock'; user: number; amount: number }
  | { op: 'marketBuy'; user: number; notional: number }
  | { op: 'marketSell'; user: number; quantity: number }
  | { op: 'limit'; user: number; side: 0 | 1; quantity: number; price: number }
  | { op: 'cancel'; pick: number }
  | { op: 'fill'; pick: number; fraction: number; price: number; close: boolean }
  | { op: 'close'; pick: number; status: number }
  | { op: 'buffers'; credit: number; withdraw: number }
  | { op: 'settleQueued' };

/** Random steps use users 0..2; user 3 is kept for the fixed tail so its steps can't be starved by them. */
const user = fc.integer({ min: 0, max: 2 });
const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  w(2, fc.record({ op: fc.constant('deposit' as const), user, amount: fc.integer({ min: 1, max: 5_000 }) })),
  w(2, fc.record({ op: fc.constant('withdraw' as const), user, amount: fc.integer({ min: 1, max: 3_000 }) })),
  w(1, fc.record({ op: fc.constant('depositStock' as const), user, amount: fc.integer({ min: 1, max: 40 }) })),
  w(1, fc.record({ op: fc.constant('withdrawStock' as const), user, amount: fc.integer({ min: 1, max: 40 }) })),
  w(3, fc.record({ op: fc.constant('marketBuy' as const), user, notional: fc.integer({ min: 1, max: 2_000 }) })),
  w(2, fc.record({ op: fc.constant('marketSell' as const), user, quantity: fc.integer({ min: 1, max: 20 }) })),
  w(3, fc.record({ op: fc.constant('limit' as const), user, side: fc.constantFrom(0 as const, 1 as const), quantity: fc.integer({ min: 1, max: 20 }), price: fc.integer({ min: 100, max: 400 }) })),
  w(2, fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() })),
  w(4, fc.record({ op: fc.constant('fill' as const), pick: fc.nat(), fraction: fc.integer({ min: 1, max: 100 }), price: fc.integer({ min: 100, max: 400 }), close: fc.boolean() })),
  w(2, fc.record({ op: fc.constant('close' as const), pick: fc.nat(), status: fc.constantFrom(OrderStatus.Filled, OrderStatus.Canceled, OrderStatus.Expired, OrderStatus.Rejected) })),
  w(1, fc.record({ op: fc.constant('buffers' as const), credit: fc.integer({ min: 0, max: 10_000 }), withdraw: fc.integer({ min: 0, max: 5_000 }) })),
  w(1, fc.constant({ op: 'settleQueued' as const })),
);

/** Successful steps per kind over the whole run: the property must not pass by everything reverting. */
const succeeded = new Map<string, number>();
let current = '';

/** Sends a transaction; a revert (simulation or on chain) is an allowed outcome that must change nothing. */
async function attempt(send: () => Promise<Hex>): Promise<boolean> {
  try {
    const hash = await send();
    const r = await f.publicClient.waitForTransactionReceipt({ hash });
    if (r.status === 'success') succeeded.set(current, (succeeded.get(current) ?? 0) + 1);
    return r.status === 'success';
  } catch (err) {
    if (process.env.PROPERTY_DEBUG) console.log(current, (err as Error).message.split('\n').slice(0, 3).join(' | '));
    return false;
  }
}

async function openOrders(): Promise<Array<{ id: bigint; o: any }>> {
  const c = f.deployment.contracts;
  const next = await f.publicClient.readContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' });
  const ids = Array.from({ length: Number(next) - 1 }, (_, i) => BigInt(i + 1));
  if (ids.length === 0) return [];
  const orders = await f.publicClient.readContract({ address: c.accountLens, abi: accountLensAbi, functionName: 'getOrders', args: [ids] });
  return orders.map((o: any, i: number) => ({ id: ids[i], o })).filter((x) => x.o.status === OrderStatus.Open || x.o.status === OrderStatus.Canceling);
}

async function checkInvariants(): Promise<void> {
  const c = f.deployment.contracts;
  const read = (address: Address, abi: any, functionName: string, args: unknown[] = []) => f.publicClient.readContract({ address, abi, functionName, args } as any) as Promise<bigint>;
  const holders = [...f.users.slice(0, 4).map((u) => u.address), f.operator.account.address];
  let free = 0n;
  let locked = 0n;
  for (const h of holders) {
    free += await read(c.cashier, cashierAbi, 'balanceOf', [h]);
    locked += await read(c.cashier, cashierAbi, 'lockedOf', [h]);
  }
  const fees = await read(c.cashier, cashierAbi, 'feeBalance');
  const queuedW = await read(c.cashier, cashierAbi, 'totalQueuedWithdrawals');
  const queuedD = await read(c.cashier, cashierAbi, 'totalQueuedDeposits');
  const held = (await read(c.cashToken, erc20Abi, 'balanceOf', [c.cashier])) * 10n ** 12n;
  expect(held).toBe(free + locked + fees + queuedW + queuedD);

  // Stock custody: the contract's own balance is the sum of exchange balances.
  let exchange = 0n;
  let lockedStock = 0n;
  for (const h of holders) {
    exchange += await read(c.stocks.AAPL, stockAbi, 'stockBalance', [h]);
    lockedStock += await read(c.stocks.AAPL, stockAbi, 'lockedStockBalance', [h]);
  }
  expect(await read(c.stocks.AAPL, erc20Abi, 'balanceOf', [c.stocks.AAPL])).toBe(exchange + lockedStock);

  // Locks are exactly what open orders still hold.
  const open = await openOrders();
  const buyLocks = open.filter((x) => x.o.side === Side.Buy).reduce((s, x) => s + x.o.locked, 0n);
  const sellLocks = open.filter((x) => x.o.side === Side.Sell).reduce((s, x) => s + x.o.locked, 0n);
  expect(locked).toBe(buyLocks);
  expect(lockedStock).toBe(sellLocks);
}

/** A negative pick means the newest open order (the fixed tail acts on the order it just placed). */
function pick<T>(open: T[], n: number): T {
  return n < 0 ? open[open.length - 1] : open[n % open.length];
}

/**
 * Ends every sequence: user 3 (untouched by the random steps) makes each kind of step succeed once,
 * including the queued deposit and withdrawal and their settlement, so the property can't pass
 * vacuously because a rare kind of step never happened to succeed.
 */
const TAIL: Cmd[] = [
  { op: 'buffers', credit: 10_000, withdraw: 0 },
  { op: 'deposit', user: 3, amount: 5_000 },
  { op: 'depositStock', user: 3, amount: 10 },
  { op: 'withdraw', user: 3, amount: 100 },
  { op: 'withdrawStock', user: 3, amount: 1 },
  { op: 'buffers', credit: 0, withdraw: 0 },
  { op: 'deposit', user: 3, amount: 100 },
  { op: 'limit', user: 3, side: 0, quantity: 1, price: 100 },
  { op: 'cancel', pick: -1 },
  { op: 'marketBuy', user: 3, notional: 100 },
  { op: 'close', pick: -1, status: OrderStatus.Expired },
  { op: 'marketSell', user: 3, quantity: 1 },
  { op: 'fill', pick: -1, fraction: 100, price: 200, close: true },
  { op: 'settleQueued' },
];

async function run(cmds: Cmd[]): Promise<void> {
  const c = f.deployment.contracts;
  const u = (i: number) => f.users[i];
  const deadline = async () => Number((await f.publicClient.getBlock()).timestamp) + 3600;
  const router = { address: c.stockRouter, abi: stockRouterAbi } as const;
  for (const k of cmds) {
    current = k.op;
    switch (k.op) {
      case 'deposit':
        await attempt(() => u(k.user).wallet.writeContract({ ...router, functionName: 'deposit', args: [c.cashToken, usdc(String(k.amount))] }));
        break;
      case 'withdraw':
        await attempt(() => u(k.user).wallet.writeContract({ ...router, functionName: 'withdraw', args: [c.cashToken, usdc(String(k.amount))] }));
        break;
      case 'depositStock':
        await attempt(() => u(k.user).wallet.writeContract({ ...router, functionName: 'depositStock', args: [c.stocks.AAPL, shares(String(k.amount))] }));
        break;
      case 'withdrawStock':
        await attempt(() => u(k.user).wallet.writeContract({ ...router, functionName: 'withdrawStock', args: [c.stocks.AAPL, shares(String(k.amount))] }));
        break;
      case 'marketBuy':
        await attempt(async () => u(k.user).wallet.writeContract({ ...router, functionName: 'placeMarketOrder', args: [c.stocks.AAPL, Side.Buy, 0n, musd(String(k.notional)), ANY_BUY_PRICE, await deadline()] }));
        break;
      case 'marketSell':
        await attempt(async () => u(k.user).wallet.writeContract({ ...router, functionName: 'placeMarketOrder', args: [c.stocks.AAPL, Side.Sell, shares(String(k.quantity)), 0n, ANY_SELL_PRICE, await deadline()] }));
        break;
      case 'limit':
        await attempt(async () =>
          u(k.user).wallet.writeContract({ ...router, functionName: 'placeLimitOrder', args: [c.stocks.AAPL, k.side, shares(String(k.quantity)), price(String(k.price)), 0, await deadline()] }),
        );
        break;
      case 'cancel': {
        // Only limit orders can be cancelled by their owner; picking a market order would just revert.
        const open = (await openOrders()).filter((x) => x.o.orderType === 1 && x.o.status === OrderStatus.Open);
        if (open.length === 0) break;
        const { id, o } = pick(open, k.pick);
        const owner = f.users.find((x) => x.address.toLowerCase() === o.user.toLowerCase())!;
        await attempt(() => owner.wallet.writeContract({ ...router, functionName: 'cancelLimitOrder', args: [id] }));
        break;
      }
      case 'fill': {
        const open = await openOrders();
        if (open.length === 0) break;
        const { id, o } = pick(open, k.pick);
        const p = o.orderType === 1 ? o.price : price(String(k.price));
        let q: bigint;
        if (o.side === Side.Buy && o.orderType === 0) q = (((o.locked * 10n ** 18n) / p) * 9_000n) / 10_000n; // leave room for the fee
        else q = (o.quantity as bigint) - (o.filledQuantity as bigint);
        q = (q * BigInt(k.fraction)) / 100n;
        const fills = q > 0n ? [{ orderId: id, quantity: q, price: p }] : [];
        const closes = k.close ? [{ orderId: id, status: OrderStatus.Filled }] : [];
        await attempt(() => f.operator.writeContract({ ...router, functionName: 'settleOrders', args: [fills, closes] }));
        break;
      }
      case 'close': {
        const open = await openOrders();
        if (open.length === 0) break;
        const { id } = pick(open, k.pick);
        await attempt(() => f.operator.writeContract({ ...router, functionName: 'settleOrders', args: [[], [{ orderId: id, status: k.status }]] }));
        break;
      }
      case 'buffers':
        await attempt(() => f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setCreditBuffer', args: [musd(String(k.credit))] }));
        await attempt(() => f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setWithdrawBuffer', args: [c.cashToken, usdc(String(k.withdraw))] }));
        break;
      case 'settleQueued': {
        const nd = await f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'nextDepositQueueId' });
        for (let id = 1n; id < nd; id++) await attempt(() => f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'settleDeposit', args: [id] }));
        const nw = await f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'nextWithdrawalQueueId' });
        for (let id = 1n; id < nw; id++) await attempt(() => f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'settleWithdrawal', args: [id] }));
        break;
      }
    }
    await checkInvariants();
  }

  // Close everything still open; then every order has exactly one final state.
  current = 'final';
  const open = await openOrders();
  if (open.length > 0) {
    // Must succeed (the assertion below needs it): with the tests' settlement margin, not viem's exact estimate.
    await settle(f, [], open.map((x) => ({ orderId: x.id, status: OrderStatus.Expired })));
  }
  await checkInvariants();
  expect(await openOrders()).toEqual([]);
  const logs = await f.publicClient.getLogs({ address: c.stockRouter, fromBlock: 0n });
  const closed = parseEventLogs({ abi: stockRouterAbi, logs, eventName: 'OrderClosed' });
  const placed = parseEventLogs({ abi: stockRouterAbi, logs, eventName: 'OrderPlaced' });
  const perOrder = new Map<bigint, number>();
  for (const e of closed) perOrder.set(e.args.orderId, (perOrder.get(e.args.orderId) ?? 0) + 1);
  expect(perOrder.size).toBe(placed.length);
  for (const n of perOrder.values()) expect(n).toBe(1);
}

describe('cash and stock invariants under random sequences', () => {
  it('hold after every step', async () => {
    const runs = Number(process.env.PROPERTY_RUNS ?? 12);
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 5, maxLength: 25 }), async (cmds) => {
        await f.revert(base);
        base = await f.snapshot();
        // Every sequence starts from funded exchange accounts so orders and fills can happen.
        const funded: Cmd[] = [0, 1, 2].flatMap((user) => [
          { op: 'deposit' as const, user, amount: 5_000 },
          { op: 'depositStock' as const, user, amount: 30 },
        ]);
        // Tight buffers from here on, so deposits and withdrawals also take the queued path.
        funded.push({ op: 'buffers', credit: 3_000, withdraw: 200 });
        await run([...funded, ...cmds, ...TAIL]);
      }),
      { numRuns: runs, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
    );
    if (process.env.PROPERTY_DEBUG) console.log(JSON.stringify([...succeeded]));
    for (const op of ['deposit', 'withdraw', 'depositStock', 'withdrawStock', 'marketBuy', 'marketSell', 'limit', 'cancel', 'fill', 'close', 'settleQueued']) {
      expect(succeeded.get(op) ?? 0, `too few successful ${op} steps`).toBeGreaterThanOrEqual(runs);
    }
  }, 300_000);
});
