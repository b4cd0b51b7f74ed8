/**
 * Queued cash operations: with small Cashier buffers a deposit and a withdrawal are queued, and the
 * executor settles each `cashSettleDelayMs` after first seeing it — not before — and keeps its
 * cursors across a restart.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveUsdc, confirm, depositUsdc, expectCashInvariant, mUsdOf, musd, usdc, usdcOf } from '../chain/chain-test-helpers.ts';
import { makeExecutor, openDb } from './executor-test-support.ts';

let alice: ChainUser;
let bob: ChainUser;
let db: Db;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  await depositUsdc(f, bob, usdc('800')); // instant: within the 1,000 mUSD credit buffer
}, { deployOptions: { creditBuffer: musd('1000'), withdrawBuffer: usdc('100') } });
beforeEach(async () => {
  db = await openDb();
});
afterEach(async () => {
  await db.close();
});

const c = () => f.deployment.contracts;

async function queueDeposit(user: ChainUser, amount: bigint): Promise<bigint> {
  await approveUsdc(f, user, amount);
  const receipt = await confirm(f, user.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c().cashToken, amount] }));
  const [queued] = parseEventLogs({ abi: cashierAbi, eventName: 'DepositQueued', logs: receipt.logs });
  return queued.args.queueId;
}

async function queueWithdrawal(user: ChainUser, amount: bigint): Promise<bigint> {
  const receipt = await confirm(f, user.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'withdraw', args: [c().cashToken, amount] }));
  const [queued] = parseEventLogs({ abi: cashierAbi, eventName: 'WithdrawalQueued', logs: receipt.logs });
  return queued.args.queueId;
}

const depositStatus = async (id: bigint) =>
  (await f.publicClient.readContract({ address: c().cashier, abi: cashierAbi, functionName: 'queuedDeposit', args: [id] })).status;
const withdrawalStatus = async (id: bigint) =>
  (await f.publicClient.readContract({ address: c().cashier, abi: cashierAbi, functionName: 'queuedWithdrawal', args: [id] })).status;

describe('queued cash operations', () => {
  it('settles a queued deposit and a queued withdrawal after the delay, not before', async () => {
    const aliceBefore = await mUsdOf(f, alice.address);
    const bobWalletBefore = await usdcOf(f, bob.address);
    const depositId = await queueDeposit(alice, usdc('5000'));
    const withdrawalId = await queueWithdrawal(bob, usdc('300'));
    expect([await depositStatus(depositId), await withdrawalStatus(withdrawalId)]).toEqual([1, 1]);
    expect((await mUsdOf(f, bob.address)).free).toBe(musd('500')); // debited at once

    const clock = { now: Date.now() };
    const { executor } = makeExecutor(f, db, { clock, cashSettleDelayMs: 5_000 });
    expect(await executor.runOnce()).toMatchObject({ cashDeposits: 0, cashWithdrawals: 0 });
    clock.now += 4_999;
    expect(await executor.runOnce()).toMatchObject({ cashDeposits: 0, cashWithdrawals: 0 });
    expect([await depositStatus(depositId), await withdrawalStatus(withdrawalId)]).toEqual([1, 1]);
    expect(await mUsdOf(f, alice.address)).toEqual(aliceBefore);

    clock.now += 1;
    expect(await executor.runOnce()).toMatchObject({ cashDeposits: 1, cashWithdrawals: 1 });
    expect([await depositStatus(depositId), await withdrawalStatus(withdrawalId)]).toEqual([2, 2]);
    expect((await mUsdOf(f, alice.address)).free).toBe(aliceBefore.free + musd('5000'));
    expect(await usdcOf(f, bob.address)).toBe(bobWalletBefore + usdc('300'));
    await expectCashInvariant(f, [alice.address, bob.address]);

    // Settled once: nothing more to do, and the cursors moved past both.
    expect(await executor.runOnce()).toMatchObject({ cashDeposits: 0, cashWithdrawals: 0 });
    expect(await getMeta(db, 'executor.cash.depositCursor')).toBe((depositId + 1n).toString());
    expect(await getMeta(db, 'executor.cash.withdrawalCursor')).toBe((withdrawalId + 1n).toString());
  });

  it('picks queued operations up again after a restart, from its cursors', async () => {
    const clock = { now: Date.now() };
    const first = makeExecutor(f, db, { clock, cashSettleDelayMs: 5_000 });
    const settled = await queueDeposit(alice, usdc('2000'));
    await first.executor.runOnce();
    clock.now += 5_000;
    expect(await first.executor.runOnce()).toMatchObject({ cashDeposits: 1 });
    const pending = await queueDeposit(alice, usdc('3000'));
    await first.executor.runOnce(); // seen pending; the process then dies before the delay is over

    const second = makeExecutor(f, db, { clock, cashSettleDelayMs: 5_000 });
    clock.now += 5_000;
    // The first-seen time is memory only: the new process waits its own delay from now.
    expect(await second.executor.runOnce()).toMatchObject({ cashDeposits: 0 });
    expect(await depositStatus(pending)).toBe(1);
    clock.now += 5_000;
    expect(await second.executor.runOnce()).toMatchObject({ cashDeposits: 1 });
    expect([await depositStatus(settled), await depositStatus(pending)]).toEqual([2, 2]);
    expect(await getMeta(db, 'executor.cash.depositCursor')).toBe((pending + 1n).toString());
  });
});
