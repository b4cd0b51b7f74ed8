/**
 * Forced withdrawals (issue 60; docs/security.md "Forced withdrawals"), on a real anvil with the real
 * engine, reserves tree and registry. A censoring operator that keeps posting roots but pays nobody
 * no longer keeps the vault alive: an account files its withdrawal on chain, and once it is overdue
 * anyone freezes the vault. A venue that runs answers every request: the forced-withdrawal task pays
 * it (even when the account's margin holds it, up to its equity), rejects it with the account's leaf
 * when the account asked for more than it holds, and releases a reservation whose request was
 * cancelled.
 */
import { keccak256, parseEventLogs, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { createTxSender } from '../../src/chain/tx-sender.ts';
import type { EngineCommand, PlaceOrderAccepted } from '../../src/perp/engine/engine-types.ts';
import { PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import { snapshotLiabilities } from '../../src/perp/reserves/liabilities-snapshot.ts';
import { proof } from '../../src/perp/reserves/merkle-sum-tree.ts';
import type { EngineGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { createForcedWithdrawalTask, forcedWithdrawalIdOf } from '../../src/perp/workers/forced-withdrawal-task.ts';
import { createReservesTask } from '../../src/perp/workers/reserves-task.ts';
import type { Db } from '../../src/storage/database.ts';
import { expectRevert, usdc, usdcOf } from '../chain/chain-test-helpers.ts';
import { startChainFixture, testWallet, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, PERP_OPERATOR, postReservesRoot, registryLeaves, vaultDeposit } from '../support/perp-venue.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import { xUsdInstrument } from '../support/perp-test-instrument.ts';

/** 1 tick = 1 USD, 1 lot = 1 unit; 5 % initial margin. */
const X = xUsdInstrument();
const DAY = 86_400n;

let f: ChainFixture;
let perp: PerpDeployment;
let db: Db;
let engine: PerpEngine;
let trader: ChainUser;
let maker: ChainUser;
let greedy: ChainUser;
let n = 0;
const run = (c: Record<string, unknown>) => engine.apply({ id: `c${++n}`, ts: 1_000 + n, ...c } as EngineCommand);
/** The real engine behind the gateway's interface (the journal is the sequencer's concern, not this test's). */
const gateway: Pick<EngineGateway, 'submit'> = { submit: async (cmd) => ({ ...engine.apply(cmd), journalSeq: null }) };
const vault = () => perp.contracts.marginVault;
const mined = async (hash: Hex) => {
  const r = await f.publicClient.waitForTransactionReceipt({ hash });
  expect(r.status).toBe('success');
  return r;
};
const forcedOf = (account: `0x${string}`) =>
  f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: 'forcedWithdrawal', args: [account] });
const request = (user: ChainUser, amount: bigint) =>
  user.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'requestForcedWithdrawal', args: [amount] }).then(mined);
const chainNow = async () => (await f.publicClient.getBlock()).timestamp;
const sender = () => createTxSender({ publicClient: f.publicClient, account: privateKeyToAccount(PERP_OPERATOR.privateKey) });
const forcedTask = () =>
  createForcedWithdrawalTask({ db, gateway, engine: () => engine, publicClient: f.publicClient, sender: sender(), marginVault: vault(), fromBlock: BigInt(perp.blockNumber) });
const reservesTask = (at: () => number) =>
  createReservesTask({
    db, engine: () => engine, publicClient: f.publicClient, sender: sender(), chainId: f.chainId, registry: perp.contracts.reserveRegistry!,
    vault: vault(), collateralToken: perp.contracts.collateralToken, intervalMs: 60_000, now: at,
  });

beforeAll(async () => {
  f = await startChainFixture();
  perp = await deployPerpVenue(f, { demoDeposit: false });
  db = await openTestSqlite();
  [, trader, maker, greedy] = f.users;
  engine = new PerpEngine({ instruments: [X] });
  for (const u of [trader, maker, greedy]) {
    await vaultDeposit(f, perp, u, usdc('1000'));
    run({ kind: 'deposit', account: u.address, amount: usdc('1000') });
  }
  // The trader holds a long whose margin (600 of 1,000) keeps most of its collateral.
  run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
  expect((run({ kind: 'placeOrder', account: maker.address, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', priceTicks: 100, sizeLots: 60 }) as PlaceOrderAccepted).ok).toBe(true);
  expect((run({ kind: 'placeOrder', account: trader.address, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 60 }) as PlaceOrderAccepted).fills).toHaveLength(1);
}, 120_000);
afterAll(async () => {
  await db?.close();
  await f?.stop();
});

describe('forced withdrawals', () => {
  test('only an account that deposited files one, one at a time, for a positive amount', async () => {
    const stranger = testWallet(ANVIL_ACCOUNTS[7].privateKey, f.chain, f.rpcUrl);
    await expectRevert(() => stranger.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'requestForcedWithdrawal', args: [1n] }), 'NothingDeposited', [ANVIL_ACCOUNTS[7].address]);
    await expectRevert(() => greedy.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'requestForcedWithdrawal', args: [0n] }), 'ZeroAmount');
    await expectRevert(() => greedy.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payForcedWithdrawal', args: [greedy.address, keccak256(toHex('x'))] }), 'NotOperator', [greedy.address]);
  });

  test('the venue pays a forced withdrawal the engine owes, even when the margin of an open position holds it, to the account itself', async () => {
    const m = engine.marginSummary(trader.address)!;
    // 1,000 − 3 taker fee; 600 of margin (10x on 6,000) leaves under 400 withdrawable.
    expect(m.equity).toBe(usdc('997'));
    expect(m.withdrawable).toBeLessThan(usdc('400'));
    const filed = await request(trader, usdc('400'));
    const [ev] = parseEventLogs({ abi: marginVaultAbi, logs: filed.logs, eventName: 'ForcedWithdrawalRequested' });
    const requestedAt = (await f.publicClient.getBlock({ blockNumber: filed.blockNumber })).timestamp;
    expect(ev!.args).toEqual({ account: trader.address, amount: usdc('400'), dueAt: requestedAt + 3n * DAY });
    await expectRevert(() => request(trader, 1n), 'ForcedWithdrawalPending', [trader.address]);
    const before = await usdcOf(f, trader.address);
    await forcedTask().runOnce();
    expect(await usdcOf(f, trader.address)).toBe(before + usdc('400'));
    expect(await forcedOf(trader.address)).toEqual([0n, 0n, 0n]);
    const id = forcedWithdrawalIdOf(trader.address, requestedAt);
    expect(engine.withdrawal(id)).toMatchObject({ account: trader.address.toLowerCase(), amount: usdc('400'), status: 'PAID' });
    expect(await f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: 'withdrawalPaid', args: [id] })).toBe(true);
    expect(engine.marginSummary(trader.address)!.equity).toBe(usdc('597'));
    // Nothing is open: nobody can freeze the vault on its account.
    await expectRevert(() => maker.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freezeOverdue', args: [trader.address] }), 'NoForcedWithdrawal', [trader.address]);
  });

  test('a request for more than the account holds is rejected with its leaf of a root posted after it', async () => {
    const filed = await request(greedy, usdc('5000'));
    const task = forcedTask();
    // No root since the request: the engine refused, the task waits.
    await task.runOnce();
    expect((await forcedOf(greedy.address))[0]).toBe(usdc('5000'));
    const t = Number(await chainNow()) * 1000;
    expect((await reservesTask(() => t).runEpoch())?.status).toBe('POSTED');
    await task.runOnce();
    expect(await forcedOf(greedy.address)).toEqual([0n, 0n, 0n]);
    const logs = await f.publicClient.getContractEvents({ address: vault(), abi: marginVaultAbi, eventName: 'ForcedWithdrawalRejected', fromBlock: filed.blockNumber });
    expect(logs.map((l) => l.args)).toEqual([{ account: greedy.address, amount: usdc('5000'), available: usdc('1000'), epoch: BigInt(Math.floor(t / 60_000) * 60_000) }]);
    // The operator cannot reject what the account does hold: its leaf shows 1,000 ≥ 900.
    await request(greedy, usdc('900'));
    const snap = snapshotLiabilities(engine);
    const i = snap.leaves.findIndex((l) => l.account === greedy.address);
    await f.testClient.mine({ blocks: 1 });
    await postReservesRoot(f, perp, BigInt(Math.floor(t / 60_000) * 60_000 + 60_000), registryLeaves(snap.leaves));
    const leafProof = { leaf: registryLeaves([snap.leaves[i]!])[0]!, path: proof(snap.tree, i).map((s) => ({ hash: s.hash, sum: s.sum, left: s.side === 'left' })) };
    const operator = testWallet(PERP_OPERATOR.privateKey, f.chain, f.rpcUrl);
    await expectRevert(
      () => operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'rejectForcedWithdrawal', args: [greedy.address, leafProof] }),
      'ForcedWithdrawalCovered',
      [usdc('1000'), usdc('900')],
    );
    // Another account's leaf does not do either.
    await expectRevert(
      () => operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'rejectForcedWithdrawal', args: [maker.address, leafProof] }),
      'NoForcedWithdrawal',
      [maker.address],
    );
    await greedy.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'cancelForcedWithdrawal' }).then(mined);
  });

  test('a reservation whose request the account cancelled while payments were paused is given back', async () => {
    const guardian = testWallet(ANVIL_ACCOUNTS[4].privateKey, f.chain, f.rpcUrl);
    await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setGuardian', args: [ANVIL_ACCOUNTS[4].address] }).then(mined);
    await guardian.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'pause' }).then(mined);
    const filed = await request(maker, usdc('100'));
    const requestedAt = (await f.publicClient.getBlock({ blockNumber: filed.blockNumber })).timestamp;
    const id = forcedWithdrawalIdOf(maker.address, requestedAt);
    const task = forcedTask();
    const equity = engine.marginSummary(maker.address)!.equity;
    await task.runOnce();
    // Reserved, not paid: the pause holds the payment.
    expect(engine.withdrawal(id)?.status).toBe('PENDING');
    expect(engine.marginSummary(maker.address)!.pendingWithdrawals).toBe(usdc('100'));
    await maker.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'cancelForcedWithdrawal' }).then(mined);
    await task.runOnce();
    expect(engine.withdrawal(id)?.status).toBe('FAILED');
    expect(engine.marginSummary(maker.address)!.equity).toBe(equity);
    await guardian.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'unpause' }).then(mined);
  });

  test('a censoring operator that keeps posting roots and pays nothing: once overdue, anyone freezes the vault', async () => {
    // No task answers now. The operator posts a fresh root every day, so silence never opens the hatch.
    const filed = await request(trader, usdc('100'));
    const requestedAt = (await f.publicClient.getBlock({ blockNumber: filed.blockNumber })).timestamp;
    const dueAt = requestedAt + 3n * DAY;
    let epoch = 0n;
    for (let day = 1n; day <= 3n; day++) {
      await f.testClient.setNextBlockTimestamp({ timestamp: requestedAt + day * DAY - 10n });
      await f.testClient.mine({ blocks: 1 });
      epoch = (requestedAt + day * DAY - 10n) * 1000n;
      await postReservesRoot(f, perp, epoch, registryLeaves(snapshotLiabilities(engine).leaves));
    }
    const freezableAt = await f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: 'freezableAt' });
    expect(freezableAt).toBeGreaterThan(dueAt);
    await expectRevert(() => maker.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freeze' }), 'OperatorNotSilent', [freezableAt]);
    await expectRevert(() => maker.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freezeOverdue', args: [trader.address] }), 'ForcedWithdrawalNotDue', [trader.address, dueAt]);
    await f.testClient.setNextBlockTimestamp({ timestamp: dueAt });
    const frozen = await maker.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freezeOverdue', args: [trader.address] }).then(mined);
    expect(parseEventLogs({ abi: marginVaultAbi, logs: frozen.logs, eventName: 'VaultFrozenBy' })[0]!.args).toMatchObject({ by: maker.address, epoch });
    await expectRevert(() => request(maker, 1n), 'VaultFrozen');
  });
});
