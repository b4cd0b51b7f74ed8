/**
 * Key-compromise drill: the guardian's key (docs/security.md, "Guardian"). The worst it can do is
 * pause the stock venue, and keep pausing: no money moves, every user still leaves with what is
 * theirs through the escape hatch (orders cancelled with their whole locks back at once, cash and
 * stock withdrawn), the pause is visible (`VenuePausedBy`) and the owner lifts it and names another
 * guardian, after which the stolen key can do nothing. A queued withdrawal waits for the hold
 * (`operatorSilence()` from the pause's start, 3 days; issue 60), which the stolen key cannot
 * restart by unpausing and pausing again: the pause is at worst an outage, never a lock.
 */
import { parseEventLogs, toHex, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import {
  approveStock,
  confirm,
  contracts,
  DAY,
  deadlineIn,
  depositStock,
  depositUsdc,
  expectCashInvariant,
  expectRevert,
  mUsdOf,
  price,
  routerCall,
  shares,
  Side,
  stockOf,
  usdc,
  usdcOf,
} from '../chain/chain-test-helpers.ts';

let f: ChainFixture;
let users: ChainUser[];
let stolen: ChainUser;
let aapl: Address;

beforeAll(async () => {
  f = await startChainFixture();
  users = f.users.slice(0, 3);
  stolen = f.users[3];
  aapl = contracts(f).stocks.AAPL;
  await confirm(f, f.operator.writeContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'setGuardian', args: [stolen.address] }));
});
afterAll(async () => {
  await f?.stop();
});

const router = () => contracts(f).stockRouter;
const as = (user: ChainUser, functionName: string, args: readonly unknown[] = []) =>
  user.wallet.writeContract({ address: router(), abi: stockRouterAbi, functionName: functionName as never, args: args as never });

describe('the guardian key, stolen', () => {
  test('pauses the venue and can take nothing; every user still leaves with everything; the owner replaces it', async () => {
    const deadline = await deadlineIn(f, 3600);
    // Each user: cash deposited, a resting buy (cash locked) and a resting sell (stock locked).
    const orders: Array<{ user: ChainUser; buy: bigint; sell: bigint }> = [];
    for (const user of users) {
      await depositUsdc(f, user, usdc('1000'));
      await approveStock(f, user, aapl, shares('3'));
      await depositStock(f, user, aapl, shares('3'));
      const buy = (await routerCall<bigint>(f, user, 'placeLimitOrder', [aapl, Side.Buy, shares('2'), price('100'), DAY, deadline])).result;
      const sell = (await routerCall<bigint>(f, user, 'placeLimitOrder', [aapl, Side.Sell, shares('3'), price('900'), DAY, deadline])).result;
      orders.push({ user, buy, sell });
    }
    // The last user also has a large withdrawal queued for the operator (buffer 5,000 USDC).
    const c = contracts(f);
    await confirm(f, f.operator.writeContract({ address: c.cashier, abi: cashierAbi, functionName: 'setWithdrawBuffer', args: [c.cashToken, usdc('5000')] }));
    const big = users[2];
    await depositUsdc(f, big, usdc('40000'));
    const [instant, queueId] = (await routerCall<[boolean, bigint]>(f, big, 'withdraw', [c.cashToken, usdc('40000')])).result;
    expect(instant).toBe(false);
    const before = await Promise.all(users.map(async (u) => ({ cash: await mUsdOf(f, u.address), stock: await stockOf(f, aapl, u.address), wallet: await usdcOf(f, u.address) })));

    // The worst: pause, and nothing else it is allowed.
    const paused = await confirm(f, as(stolen, 'pause'));
    expect(parseEventLogs({ abi: stockRouterAbi, logs: paused.logs, eventName: 'VenuePausedBy' }).map((e) => e.args)).toEqual([{ by: stolen.address }]);
    for (const [fn, args] of [
      ['setGuardian', [stolen.address]],
      ['setOperator', [stolen.address, true]],
      ['setOperatorSilence', [86_400]],
      ['setFeeConfig', [{ marketFeeBps: 1_000, limitFeeBps: 1_000 }]],
    ] as const) {
      await expectRevert(() => as(stolen, fn, args), 'OwnableUnauthorizedAccount', [stolen.address]);
    }
    await expectRevert(() => as(stolen, 'settleOrders', [[], []]), 'NotOperator', [stolen.address]);
    await expectRevert(() => as(stolen, 'emergencyCancel', [orders[0].buy]), 'NotOrderOwner', [orders[0].buy]);

    // The queued withdrawal is held from the pause's start; the stolen key cannot restart the hold.
    const pausedAt = (await f.publicClient.getBlock({ blockNumber: paused.blockNumber })).timestamp;
    const opensAt = pausedAt + 3n * 86_400n + 1n;
    await expectRevert(() => as(big, 'emergencySettleWithdrawal', [queueId]), 'QueuedCashHatchClosed', [opensAt]);
    await confirm(f, as(stolen, 'unpause'));
    await confirm(f, as(stolen, 'pause'));
    await confirm(f, as(stolen, 'pause'));
    expect(await f.publicClient.readContract({ address: router(), abi: stockRouterAbi, functionName: 'pausedSince' })).toBe(pausedAt);
    expect(await f.publicClient.readContract({ address: router(), abi: stockRouterAbi, functionName: 'queuedCashHatchOpensAt' })).toBe(opensAt);

    // Every user leaves: orders cancelled through the hatch, then cash and stock out to the wallet.
    for (const [i, { user, buy, sell }] of orders.entries()) {
      await confirm(f, as(user, 'emergencyCancel', [buy]));
      await confirm(f, as(user, 'emergencyCancel', [sell]));
      const cash = await mUsdOf(f, user.address);
      expect(cash).toEqual({ free: before[i].cash.free + before[i].cash.locked, locked: 0n });
      const stock = await stockOf(f, aapl, user.address);
      expect(stock).toEqual({ wallet: before[i].stock.wallet, exchange: before[i].stock.exchange + before[i].stock.locked, locked: 0n });
      await routerCall(f, user, 'withdraw', [contracts(f).cashToken, cash.free / 10n ** 12n]);
      await routerCall(f, user, 'withdrawStock', [aapl, stock.exchange]);
      expect(await usdcOf(f, user.address)).toBe(before[i].wallet + cash.free / 10n ** 12n);
      expect(await stockOf(f, aapl, user.address)).toEqual({ wallet: before[i].stock.wallet + stock.exchange, exchange: 0n, locked: 0n });
    }
    await expectCashInvariant(f, users.map((u) => u.address));

    // Worst case, the owner not back in time: the hold ends operatorSilence() after the first pause.
    const now = (await f.publicClient.getBlock()).timestamp;
    await f.publicClient.request({ method: 'evm_increaseTime' as never, params: [toHex(opensAt - now)] as never });
    await f.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    await expectRevert(() => as(stolen, 'emergencySettleWithdrawal', [queueId]), 'NotQueuedOpOwner', [queueId, stolen.address]);
    const wallet = await usdcOf(f, big.address);
    await confirm(f, as(big, 'emergencySettleWithdrawal', [queueId]));
    expect(await usdcOf(f, big.address)).toBe(wallet + usdc('40000'));
    await expectCashInvariant(f, users.map((u) => u.address));

    // The owner lifts the pause and names another guardian: the stolen key is powerless.
    await confirm(f, f.operator.writeContract({ address: router(), abi: stockRouterAbi, functionName: 'setGuardian', args: [users[0].address] }));
    await confirm(f, f.operator.writeContract({ address: router(), abi: stockRouterAbi, functionName: 'unpause' }));
    await expectRevert(() => as(stolen, 'pause'), 'NotGuardian', [stolen.address]);
    expect(await f.publicClient.readContract({ address: router(), abi: stockRouterAbi, functionName: 'paused' })).toBe(false);
  });
});
