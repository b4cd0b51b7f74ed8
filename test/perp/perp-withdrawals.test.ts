/**
 * Withdrawals end to end on a real anvil (the MarginVault deployed with the perp operator), the perp
 * API over a real socket, a real sequencer journalling to SQLite (and PostgreSQL with DATABASE_URL)
 * and the withdrawal task paying with the perp operator's key: the wallet receives exactly the
 * amount, the engine's collateral and reserve are exact; every refusal has its code and reserves
 * nothing; racing requests never overdraw; a vault refusal releases the reserve once; and a crash
 * between the reservation and the payment, or between the broadcast and the receipt, still pays
 * exactly once (one `Withdrawn` log, one transaction of the operator).
 *
 * A "crash" is the sequencer abandoned as a kill would leave it (no flush, no snapshot) and the task
 * stopped with its chain waits abandoned; the restart is a new sequencer on the same database
 * (snapshot + journal) and a new task with a new sender (a new nonce manager), as a new process.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { createTxSender } from '../../src/chain/tx-sender.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { indexedBlockInfo, type PerpVenue } from '../../src/perp/perp-venue.ts';
import { createInProcessGateway, type EngineGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { findJournalByCommandIds } from '../../src/perp/store/engine-journal-store.ts';
import { getWithdrawal, insertWithdrawalIntent } from '../../src/perp/store/withdrawal-store.ts';
import { usd } from '../../src/perp/perp-views.ts';
import { withdrawalIdOf } from '../../src/perp/withdrawal-service.ts';
import { createWithdrawalTask, SETTLE_COMMAND_PREFIX, UNSIGNED_WITHDRAWAL_REASON, type WithdrawalTask } from '../../src/perp/workers/withdrawal-task.ts';
import type { PerpClient, PerpWithdrawal } from '@tokex/sdk';
import { startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';
import { deployPerpVenue, PERP_OPERATOR, signVaultWithdrawal, vaultDeposit, vaultWithdraw } from '../support/perp-venue.ts';
import { refused } from '../support/perp-refusal.ts';
import { until } from '../support/poll.ts';

const USDC = 1_000_000n;
const BTC = 'BTC-USD';
const ETH = 'ETH-USD';
const MAKER = `0x${'d'.repeat(40)}`;

/** A command without its id and time (filled in by `ok`). */
type Cmd = EngineCommand extends infer U ? (U extends EngineCommand ? Omit<U, 'id' | 'ts'> : never) : never;

describe.each(perpHarnessVariants())('perp withdrawals on anvil ($name)', (variant) => {
  let f: ChainFixture;
  let perp: PerpDeployment;
  let h: PerpHarness;
  let seq: EngineSequencer;
  let gateway: EngineGateway;
  let task: WithdrawalTask | undefined;
  let n = 0;
  // The API reaches whichever sequencer runs now (a restart replaces it).
  const venue: PerpVenue = {
    gateway: { submit: (c) => gateway.submit(c), subscribe: (from, l, e) => gateway.subscribe(from, l, e) },
    engine: () => seq.engine,
    blockInfo: () => indexedBlockInfo(h.db),
  };

  const engine = () => seq.engine;
  const ok = async (cmd: Cmd & { ts?: number }) => {
    const r = await gateway.submit({ id: `test:${++n}-${randomBytes(4).toString('hex')}`, ts: Date.now(), ...cmd } as EngineCommand);
    if (!r.ok) throw new Error(`${cmd.kind}: ${r.code} ${r.message}`);
    return r;
  };
  /** Credits the engine as the collateral task does for an indexed vault deposit. */
  const credit = (account: string, amount: bigint) => ok({ kind: 'deposit', account: account.toLowerCase(), amount });
  /** A real vault deposit, credited. */
  const fund = async (user: ChainUser, amount: bigint) => {
    await vaultDeposit(f, perp, user, amount);
    await credit(user.address, amount);
  };
  const mark = (symbol: string, ticks: number, ts = Date.now()) =>
    ok({ kind: 'setMarkPrice', symbol, markPriceTicks: ticks, indexPriceTicks: ticks, indexTs: ts, ts });
  const tokenBalance = (a: string) => f.publicClient.readContract({ address: perp.contracts.collateralToken, abi: erc20Abi, functionName: 'balanceOf', args: [a as Address] });
  const vaultBalance = () => tokenBalance(perp.contracts.marginVault);
  const operatorNonce = () => f.publicClient.getTransactionCount({ address: PERP_OPERATOR.address });
  const withdrawnLogs = (id: string) =>
    f.publicClient.getContractEvents({ address: perp.contracts.marginVault, abi: marginVaultAbi, eventName: 'Withdrawn', args: { withdrawalId: id as Hex }, fromBlock: 0n });
  const acct = (a: string) => engine().getAccount(a.toLowerCase());
  /** The wallet's own key: the vault pays only what it signed. */
  const signer = (u: { privateKey: Hex }) => privateKeyToAccount(u.privateKey);
  const keyFor = async (address: string, permissions: Array<'READ' | 'TRADE' | 'TRANSFER'> = ['READ', 'TRANSFER']) => (await h.key({ userAddress: address, permissions })).client;

  const startTask = (logger?: Parameters<typeof createWithdrawalTask>[0]['logger']) => {
    // A new process: its own sender, so its own nonce manager.
    const sender = createTxSender({ publicClient: f.publicClient, account: privateKeyToAccount(PERP_OPERATOR.privateKey), rebroadcastMs: 300 });
    task = createWithdrawalTask({ db: h.db, gateway: venue.gateway, engine, publicClient: f.publicClient, sender, marginVault: perp.contracts.marginVault, pollMs: 50, retryMs: 200, logger });
    task.start();
  };
  const stopTask = async () => {
    await task?.stop();
    task = undefined;
  };
  const startEngine = async () => {
    seq = new EngineSequencer({ db: h.db, snapshotEvery: 50 });
    await seq.start();
    gateway = createInProcessGateway(seq, { serialize: true });
  };
  /** Kills engine and task (nothing flushed, no snapshot), then starts both again from the database. */
  const crashAndRestart = async (between?: () => Promise<void>) => {
    await stopTask();
    await seq.abandon();
    await between?.();
    await startEngine();
    startTask();
  };
  const listed = async (api: PerpClient, clientWithdrawalId: string) => (await api.listWithdrawals({ limit: 100 })).rows.find((w) => w.clientWithdrawalId === clientWithdrawalId);
  const settledAs = (api: PerpClient, clientWithdrawalId: string, status: 'COMPLETED' | 'FAILED') =>
    until(() => listed(api, clientWithdrawalId), (w) => w?.status === status) as Promise<PerpWithdrawal>;

  beforeAll(async () => {
    f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
    perp = await deployPerpVenue(f, { demoDeposit: false });
    h = await variant.start({ limit: 10_000, api: () => ({ venue, marginVault: perp.contracts.marginVault }) });
    await startEngine();
    await credit(MAKER, 10_000_000n * USDC);
  }, 120_000);
  afterAll(async () => {
    await stopTask();
    await seq?.stop();
    await h?.stop();
    await f?.stop();
  });

  it('pays a withdrawal to the key\'s wallet: exact token balance, exact engine collateral, COMPLETED; the same id answers it again', async () => {
    const user = f.users[0];
    const api = await keyFor(user.address);
    await fund(user, 1_000n * USDC);
    const walletBefore = await tokenBalance(user.address);
    const vaultBefore = await vaultBalance();

    const w = await api.withdraw(signer(user), { amount: '250.5', clientWithdrawalId: 'payout-1' });
    const id = withdrawalIdOf(user.address, 'payout-1');
    expect(w).toMatchObject({
      withdrawalId: id, clientWithdrawalId: 'payout-1', address: user.address.toLowerCase(), asset: 'USDC', amount: '250.5', status: 'PENDING', txHash: null, duplicate: false,
    });
    expect(id).toMatch(/^0x[0-9a-f]{64}$/);
    // Reserved at once: out of the balance, into the pending reserve; nothing paid yet (no task runs).
    expect(acct(user.address)).toMatchObject({ collateral: 749_500_000n, pendingWithdrawals: 250_500_000n, withdrawn: 0n });
    expect(await api.get('account')).toMatchObject({ balance: '749.5', withdrawable: '749.5', pendingWithdrawals: '250.5' });
    expect(await api.get('account/assets')).toEqual([expect.objectContaining({ asset: 'USDC', balance: '749.5', withdrawable: '749.5', pendingWithdrawals: '250.5' })]);
    expect(await vaultBalance()).toBe(vaultBefore);

    startTask();
    const done = await settledAs(api, 'payout-1', 'COMPLETED');
    expect(await tokenBalance(user.address)).toBe(walletBefore + 250_500_000n);
    expect(await vaultBalance()).toBe(vaultBefore - 250_500_000n);
    expect(acct(user.address)).toMatchObject({ collateral: 749_500_000n, pendingWithdrawals: 0n, withdrawn: 250_500_000n });
    expect(engine().withdrawal(id)).toMatchObject({ status: 'PAID', amount: 250_500_000n });
    expect(await api.get('account')).toMatchObject({ balance: '749.5', withdrawable: '749.5', pendingWithdrawals: '0', withdrawn: '250.5' });
    // The vault paid the wallet under the id, in the recorded transaction.
    const logs = await withdrawnLogs(id);
    expect(logs).toHaveLength(1);
    expect(logs[0].args).toMatchObject({ account: user.address, amount: 250_500_000n, withdrawalId: id });
    expect(done).toMatchObject({ withdrawalId: id, amount: '250.5', status: 'COMPLETED', txHash: logs[0].transactionHash, blockNumber: String(logs[0].blockNumber), reason: null });
    expect(await f.publicClient.readContract({ address: perp.contracts.marginVault, abi: marginVaultAbi, functionName: 'withdrawalPaid', args: [id] })).toBe(true);

    // The same clientWithdrawalId: the original, nothing new; another amount under it: 51021.
    expect(await api.withdraw(signer(user), { amount: '250.50', clientWithdrawalId: 'payout-1' })).toMatchObject({ withdrawalId: id, status: 'COMPLETED', duplicate: true });
    expect(await refused(api.withdraw(signer(user), { amount: '10', clientWithdrawalId: 'payout-1' }))).toMatchObject({ code: 51021, httpStatus: 400 });
    await stopTask();
    expect(await tokenBalance(user.address)).toBe(walletBefore + 250_500_000n);
    expect(acct(user.address)).toMatchObject({ collateral: 749_500_000n, pendingWithdrawals: 0n });
    const page = await api.listWithdrawals();
    expect(page.total).toBe(1);
    expect(page.rows[0]).toMatchObject({ withdrawalId: id, status: 'COMPLETED' });
    expect((await api.listWithdrawals({ status: 'PENDING' })).total).toBe(0);
  });

  it('refuses, reserving nothing: above withdrawable (unrealised profit excluded), READ and TRADE-only keys, a body that names a payee or a bad amount', async () => {
    const user = f.users[1];
    const api = await keyFor(user.address);
    await fund(user, 5_000n * USDC);
    // A long of 0.1 BTC at 100,000 (10x), the mark then at 110,000: 1,000 of unrealised profit.
    await mark(BTC, 1_000_000);
    await ok({ kind: 'setLeverage', account: user.address.toLowerCase(), symbol: BTC, leverage: 10 });
    await ok({ kind: 'placeOrder', account: MAKER, symbol: BTC, side: 'SELL', type: 'LIMIT', priceTicks: 1_000_000, sizeLots: 1_000 });
    await ok({ kind: 'placeOrder', account: user.address.toLowerCase(), symbol: BTC, side: 'BUY', type: 'LIMIT', priceTicks: 1_000_000, sizeLots: 1_000 });
    await mark(BTC, 1_100_000);
    const m = engine().marginSummary(user.address.toLowerCase())!;
    expect(m.crossUnrealisedPnl).toBe(1_000n * USDC);
    // Binance's rule: min(balance, balance + uPnL) − IM − order margin; the profit is not withdrawable.
    const withdrawable = m.collateral - m.crossInitialMargin - m.orderReserve;
    expect(m.withdrawable).toBe(withdrawable);
    const view = await api.get<Record<string, string>>('account');
    expect(view.withdrawable).toBe(usd(withdrawable));
    const overText = usd(withdrawable + 1n);
    // What the profit would allow (free collateral counts it) is more than what is withdrawable.
    expect(Number(view.freeCollateral)).toBeGreaterThan(Number(overText));

    const before = { ...acct(user.address)! };
    const hash = engine().stateHash();
    const nothingReserved = async () => {
      expect(acct(user.address)).toMatchObject({ collateral: before.collateral, pendingWithdrawals: 0n });
      expect(engine().pendingWithdrawals().filter((w) => w.account === user.address.toLowerCase())).toEqual([]);
      expect((await api.listWithdrawals()).total).toBe(0);
    };
    expect(await refused(api.withdraw(signer(user), { amount: overText, clientWithdrawalId: 'big' }))).toMatchObject({ code: 51002, httpStatus: 400 });
    expect(engine().stateHash()).toBe(hash);
    await nothingReserved();
    // Not even the API's note of the request is left.
    expect(await getWithdrawal(h.db, withdrawalIdOf(user.address, 'big'))).toBeUndefined();

    const reader = await keyFor(user.address, ['READ']);
    const trader = await keyFor(user.address, ['READ', 'TRADE']);
    for (const k of [reader, trader]) {
      expect(await refused(k.withdraw(signer(user), { amount: '1', clientWithdrawalId: 'nope' }))).toMatchObject({ code: 30001, httpStatus: 403 });
    }
    // The payee is the key's wallet, never the body's: a body naming one is refused.
    const r = await refused(
      api.post('account/withdrawals', { amount: '1', clientWithdrawalId: 'to-other', deadline: Math.floor(Date.now() / 1000) + 3_600, signature: `0x${'11'.repeat(65)}`, address: f.users[2].address }),
    );
    expect(r).toMatchObject({ code: 10000 });
    // Well-formed signed fields, so that each body is refused for the field it gets wrong.
    const signedFields = { deadline: Math.floor(Date.now() / 1000) + 3_600, signature: `0x${'11'.repeat(65)}` };
    for (const [body, field] of [
      [{ amount: '0', clientWithdrawalId: 'zero' }, 'amount'],
      [{ amount: '1.0000001', clientWithdrawalId: 'fine' }, 'amount'],
      [{ amount: '-1', clientWithdrawalId: 'neg' }, 'amount'],
      [{ amount: '1' }, 'clientWithdrawalId'],
      [{ amount: '1', clientWithdrawalId: 'x'.repeat(65) }, 'clientWithdrawalId'],
    ] as const) {
      const e = await refused(api.post('account/withdrawals', { ...body, ...signedFields }));
      expect(e.code).toBe(10000);
      expect(e.msg).toContain(field);
    }
    expect(engine().stateHash()).toBe(hash);
    await nothingReserved();

    // A refused id reserved nothing, so it stays free: judged again, and taken at the exact limit.
    const exact = usd(withdrawable);
    expect(await refused(api.withdraw(signer(user), { amount: overText, clientWithdrawalId: 'big' }))).toMatchObject({ code: 51002 });
    const w = await api.withdraw(signer(user), { amount: exact, clientWithdrawalId: 'big' });
    expect(w).toMatchObject({ status: 'PENDING', amount: exact });
    expect(acct(user.address)).toMatchObject({ collateral: before.collateral - withdrawable, pendingWithdrawals: withdrawable });
    expect((await api.get<Record<string, string>>('account')).withdrawable).toBe('0');
    // And refused with another amount from now on, however small.
    expect(await refused(api.withdraw(signer(user), { amount: '1', clientWithdrawalId: 'big' }))).toMatchObject({ code: 51021 });
    expect(acct(user.address)).toMatchObject({ pendingWithdrawals: withdrawable });
    // Back to the balance, through the engine's settlement the task would make on a failure.
    await ok({ kind: 'settleWithdrawal', withdrawalId: w.withdrawalId, outcome: 'FAILED' });
    expect(acct(user.address)).toMatchObject({ collateral: before.collateral, pendingWithdrawals: 0n });
  });

  it('pauses withdrawals while an account holds open bad debt (51020, nothing reserved), and takes the same request once it is resolved', async () => {
    const user = f.users[2];
    const api = await keyFor(user.address);
    await fund(user, 100n * USDC);
    // B: 1,000 USDC, 22.5 ETH long at 2,000 (50x). Funding of 10 % on an index 40 s old takes 4,500:
    // its equity goes negative, and a stale index pauses its liquidation: open bad debt.
    const B = `0x${randomBytes(20).toString('hex')}`;
    await credit(B, 1_000n * USDC);
    const t = Date.now();
    await mark(ETH, 200_000, t);
    await ok({ kind: 'setLeverage', account: B, symbol: ETH, leverage: 50 });
    await ok({ kind: 'placeOrder', account: MAKER, symbol: ETH, side: 'SELL', type: 'LIMIT', priceTicks: 200_000, sizeLots: 22_500 });
    await ok({ kind: 'placeOrder', account: B, symbol: ETH, side: 'BUY', type: 'LIMIT', priceTicks: 200_000, sizeLots: 22_500 });
    await ok({ kind: 'applyFunding', symbol: ETH, rateE9: 100_000_000n, ts: t + 40_000 });
    expect(acct(B)!.collateral < 0n).toBe(true);
    expect(engine().insuranceFund().openBadDebt).toEqual([B]);

    const before = acct(user.address)!.collateral;
    expect(await refused(api.withdraw(signer(user), { amount: '10', clientWithdrawalId: 'paused' }))).toMatchObject({ code: 51020, httpStatus: 400 });
    expect(acct(user.address)).toMatchObject({ collateral: before, pendingWithdrawals: 0n });
    expect((await api.listWithdrawals()).total).toBe(0);

    // A fresh index: B is closed (ADL against the maker), its debt resolved, withdrawals resume.
    await mark(ETH, 200_000, t + 41_000);
    expect(engine().insuranceFund().openBadDebt).toEqual([]);
    expect(await api.withdraw(signer(user), { amount: '10', clientWithdrawalId: 'paused' })).toMatchObject({ status: 'PENDING', amount: '10', duplicate: false });
    expect(acct(user.address)).toMatchObject({ collateral: before - 10n * USDC, pendingWithdrawals: 10n * USDC });
    startTask();
    await settledAs(api, 'paused', 'COMPLETED');
    await stopTask();
    expect(acct(user.address)).toMatchObject({ collateral: before - 10n * USDC, pendingWithdrawals: 0n, withdrawn: 10n * USDC });
  });

  it('requests racing for one balance never overdraw it; each accepted one is paid once', async () => {
    const user = f.users[3];
    const api = await keyFor(user.address);
    await fund(user, 100n * USDC);
    const walletBefore = await tokenBalance(user.address);
    const answers = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => api.withdraw(signer(user), { amount: '30', clientWithdrawalId: `race-${i}` }, { retries: 0 })));
    const accepted = answers.filter((a): a is PromiseFulfilledResult<PerpWithdrawal> => a.status === 'fulfilled').map((a) => a.value);
    const refusals = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected').map((a) => (a.reason as { code: number }).code);
    expect(accepted).toHaveLength(3);
    expect(refusals).toEqual(Array(7).fill(51002));
    expect(acct(user.address)).toMatchObject({ collateral: 10n * USDC, pendingWithdrawals: 90n * USDC });
    // The same id twice at once: one withdrawal.
    const twins = await Promise.all([api.withdraw(signer(user), { amount: '5', clientWithdrawalId: 'twin' }), api.withdraw(signer(user), { amount: '5', clientWithdrawalId: 'twin' })]);
    expect(twins[0].withdrawalId).toBe(twins[1].withdrawalId);
    expect(acct(user.address)).toMatchObject({ collateral: 5n * USDC, pendingWithdrawals: 95n * USDC });

    startTask();
    for (const w of [...accepted, twins[0]]) await settledAs(api, w.clientWithdrawalId!, 'COMPLETED');
    await stopTask();
    expect(await tokenBalance(user.address)).toBe(walletBefore + 95n * USDC);
    expect(acct(user.address)).toMatchObject({ collateral: 5n * USDC, pendingWithdrawals: 0n, withdrawn: 95n * USDC });
    expect((await api.listWithdrawals({ status: 'COMPLETED' })).total).toBe(4);
  });

  it("only the wallet's own signature of exactly the built withdrawal is taken: a session key's, another amount's, a stale deadline's are refused, reserving nothing", async () => {
    const user = f.users[2];
    const api = await keyFor(user.address);
    await fund(user, 100n * USDC);
    const before = { ...acct(user.address)! };
    const built = await api.buildWithdrawal({ amount: '12.5', clientWithdrawalId: 'signed-1', deadline: Math.floor(Date.now() / 1000) + 3_600 });
    expect(built.withdrawalId).toBe(withdrawalIdOf(user.address, 'signed-1'));
    expect(built.typedData).toMatchObject({
      domain: { name: 'TokexPerp', version: '1', chainId: f.chainId, verifyingContract: getAddress(perp.contracts.marginVault) },
      primaryType: 'Withdrawal',
      message: { account: getAddress(user.address), recipient: getAddress(user.address), amount: '12500000', withdrawalId: built.withdrawalId },
    });
    const td = built.typedData as unknown as Parameters<ReturnType<typeof signer>['signTypedData']>[0];
    const deadline = Number((built.typedData.message as { deadline: string }).deadline);
    const post = (body: Record<string, unknown>) => api.post('account/withdrawals', { amount: '12.5', clientWithdrawalId: 'signed-1', deadline, ...body });
    // A One-Click session key (or any other key) signing for the wallet.
    const session = privateKeyToAccount(generatePrivateKey());
    expect(await refused(post({ signature: await session.signTypedData(td) }))).toMatchObject({ code: 10000, httpStatus: 400 });
    // The wallet's signature, but of another amount or deadline than the body's.
    const other = { ...td, message: { ...td.message, amount: 12_500_001n } } as typeof td;
    expect(await refused(post({ signature: await signer(user).signTypedData(other) }))).toMatchObject({ code: 10000 });
    const good = await signer(user).signTypedData(td);
    expect(await refused(post({ signature: good, deadline: deadline + 1 }))).toMatchObject({ code: 10000 });
    // A deadline that leaves the vault less than a minute.
    const late = await api.buildWithdrawal({ amount: '12.5', clientWithdrawalId: 'signed-late', deadline: Math.floor(Date.now() / 1000) + 600 }).catch((e: unknown) => e);
    expect(late).toMatchObject({ typedData: expect.anything() });
    const tooSoon = Math.floor(Date.now() / 1000) + 30;
    expect(await refused(post({ signature: good, deadline: tooSoon }))).toMatchObject({ code: 10000 });
    expect(await refused(api.buildWithdrawal({ amount: '1', clientWithdrawalId: 'x', deadline: Math.floor(Date.now() / 1000) + 8 * 86_400 }))).toMatchObject({ code: 10000 });
    expect(acct(user.address)).toMatchObject({ collateral: before.collateral, pendingWithdrawals: 0n });
    expect(await getWithdrawal(h.db, built.withdrawalId)).toBeUndefined();

    // The genuine one: reserved, its signature kept for the task, paid by the vault.
    const w = (await post({ signature: good })) as PerpWithdrawal & { duplicate: boolean };
    expect(w).toMatchObject({ withdrawalId: built.withdrawalId, status: 'PENDING', amount: '12.5', duplicate: false });
    expect((await getWithdrawal(h.db, built.withdrawalId))?.signed).toEqual({ recipient: user.address.toLowerCase(), deadline, signature: good });
    const walletBefore = await tokenBalance(user.address);
    startTask();
    await settledAs(api, 'signed-1', 'COMPLETED');
    await stopTask();
    expect(await tokenBalance(user.address)).toBe(walletBefore + 12_500_000n);
  });

  it("a reservation the wallet never signed (from before 0.2.0) and one above the vault's cap FAIL, the amount back in the account", async () => {
    // An account of its own: its collateral is exactly what this test credits.
    const key = generatePrivateKey();
    const user = { privateKey: key, address: privateKeyToAccount(key).address };
    const api = await keyFor(user.address);
    await credit(user.address, 50n * USDC);
    // The engine holds a reservation with no signed row (what a 0.1.0 request left).
    const unsignedId = withdrawalIdOf(user.address, 'from-0.1.0');
    await ok({ kind: 'requestWithdrawal', account: user.address.toLowerCase(), withdrawalId: unsignedId, amount: 20n * USDC });
    // Credited beyond the cap of a day (1,000,000): asked as one withdrawal, it can never be paid.
    await credit(user.address, 1_000_001n * USDC);
    const above = await api.withdraw(signer(user), { amount: '1000000.5', clientWithdrawalId: 'above-cap' });
    expect(acct(user.address)).toMatchObject({ pendingWithdrawals: 20n * USDC + 1_000_000_500_000n });
    const nonce = await operatorNonce();
    startTask();
    const failed = await settledAs(api, 'above-cap', 'FAILED');
    await until(() => getWithdrawal(h.db, unsignedId), (r) => r?.status === 'FAILED');
    await stopTask();
    expect(failed).toMatchObject({ withdrawalId: above.withdrawalId, txHash: null });
    expect(failed.reason).toContain('WithdrawalAboveCap');
    expect((await getWithdrawal(h.db, unsignedId))?.reason).toBe(UNSIGNED_WITHDRAWAL_REASON);
    expect(acct(user.address)).toMatchObject({ collateral: 50n * USDC + 1_000_001n * USDC, pendingWithdrawals: 0n });
    expect(await operatorNonce()).toBe(nonce);
  });

  it('a payment the vault cannot make FAILS without a transaction and gives the reserve back exactly once', async () => {
    // Credited in the engine beyond what the vault holds (no vault deposit backs it).
    const user = { privateKey: generatePrivateKey() };
    const payee = privateKeyToAccount(user.privateKey).address;
    const api = await keyFor(payee);
    await credit(payee, 5_000_000n * USDC);
    const nonce = await operatorNonce();
    // Under the vault's cap of a day (1,000,000), beyond what it holds.
    const w = await api.withdraw(signer(user), { amount: '900000', clientWithdrawalId: 'too-much' });
    expect(acct(payee)).toMatchObject({ collateral: 4_100_000n * USDC, pendingWithdrawals: 900_000n * USDC });
    startTask();
    const failed = await settledAs(api, 'too-much', 'FAILED');
    await stopTask();
    expect(failed).toMatchObject({ withdrawalId: w.withdrawalId, txHash: null });
    expect(failed.reason).toContain('InsufficientVaultBalance');
    expect(acct(payee)).toMatchObject({ collateral: 5_000_000n * USDC, pendingWithdrawals: 0n, withdrawn: 0n });
    expect(engine().withdrawal(w.withdrawalId)?.status).toBe('FAILED');
    expect(await operatorNonce()).toBe(nonce);
    expect(await tokenBalance(payee)).toBe(0n);
    // Settled once: one journalled settlement; another is refused and changes nothing.
    expect(await findJournalByCommandIds(h.db, [`${SETTLE_COMMAND_PREFIX}${w.withdrawalId}`])).toHaveLength(1);
    const again = await gateway.submit({ kind: 'settleWithdrawal', id: `test:settle-again-${randomBytes(4).toString('hex')}`, ts: Date.now(), withdrawalId: w.withdrawalId, outcome: 'FAILED' });
    expect(again).toMatchObject({ ok: false, code: 'WITHDRAWAL_NOT_PENDING' });
    expect(acct(payee)).toMatchObject({ collateral: 5_000_000n * USDC, pendingWithdrawals: 0n });
  });

  it('a crash between the reservation and the payment: paid exactly once after the restart', async () => {
    const user = f.users[0];
    const api = await keyFor(user.address);
    await fund(user, 100n * USDC);
    const walletBefore = await tokenBalance(user.address);
    const collateral = acct(user.address)!.collateral;
    const w = await api.withdraw(signer(user), { amount: '40', clientWithdrawalId: 'crash-reserved' });
    expect((await getWithdrawal(h.db, w.withdrawalId))?.status).toBe('PENDING');
    // The API answered; the engine dies before any payment, and restarts from its journal.
    await crashAndRestart();
    expect(engine().withdrawal(w.withdrawalId)).toMatchObject({ status: expect.stringMatching(/PENDING|PAID/) });
    await settledAs(api, 'crash-reserved', 'COMPLETED');
    await stopTask();
    expect(await withdrawnLogs(w.withdrawalId)).toHaveLength(1);
    expect(await tokenBalance(user.address)).toBe(walletBefore + 40n * USDC);
    expect(acct(user.address)).toMatchObject({ collateral: collateral - 40n * USDC, pendingWithdrawals: 0n });
  });

  it('a reservation whose API answer was lost (its signed note still REQUESTED): the task pays it, and the client\'s retry finds it', async () => {
    const user = f.users[0];
    const api = await keyFor(user.address);
    const walletBefore = await tokenBalance(user.address);
    const id = withdrawalIdOf(user.address, 'answer-lost');
    // The API wrote its signed note, sent the reservation to the engine, and was gone before it
    // recorded the answer: the row is still REQUESTED.
    const signed = await api.signWithdrawal(signer(user), { amount: '7', clientWithdrawalId: 'answer-lost' });
    expect(signed.withdrawalId).toBe(id);
    const t = Date.now();
    await insertWithdrawalIntent(h.db, { withdrawalId: id, account: user.address, clientWithdrawalId: 'answer-lost', amount: 7n * USDC, createdAt: t, signed: { recipient: user.address, deadline: signed.deadline, signature: signed.signature as Hex } }, t);
    await ok({ kind: 'requestWithdrawal', account: user.address.toLowerCase(), withdrawalId: id, amount: 7n * USDC });
    expect((await getWithdrawal(h.db, id))?.status).toBe('REQUESTED');
    startTask();
    await until(() => getWithdrawal(h.db, id), (r) => r?.status === 'COMPLETED');
    await stopTask();
    expect(await tokenBalance(user.address)).toBe(walletBefore + 7n * USDC);
    const retry = await api.withdraw(signer(user), { amount: '7', clientWithdrawalId: 'answer-lost' });
    expect(retry).toMatchObject({ withdrawalId: id, clientWithdrawalId: 'answer-lost', status: 'COMPLETED', duplicate: true });
    expect(await withdrawnLogs(id)).toHaveLength(1);
  });

  it("a retry of a request whose note never reached the engine is paid under the retry's signature, not the note's run-out deadline", async () => {
    const user = f.users[0];
    const api = await keyFor(user.address);
    await fund(user, 10n * USDC);
    const walletBefore = await tokenBalance(user.address);
    const id = withdrawalIdOf(user.address, 'stale-note');
    // The first attempt wrote its signed note and was gone before the engine heard of it; its
    // deadline has run out since.
    const chainNow = (await f.publicClient.getBlock()).timestamp;
    const stale = { account: user.address, recipient: user.address, amount: 5n * USDC, withdrawalId: id as Hex, deadline: chainNow - 60n };
    const t = Date.now();
    await insertWithdrawalIntent(h.db, { withdrawalId: id, account: user.address, clientWithdrawalId: 'stale-note', amount: 5n * USDC, createdAt: t, signed: { recipient: user.address, deadline: Number(stale.deadline), signature: await signVaultWithdrawal(f, perp, user.privateKey, stale) } }, t);
    expect(engine().withdrawal(id)).toBeUndefined();
    // The client retries with a fresh signature: that one is relayed.
    const w = await api.withdraw(signer(user), { amount: '5', clientWithdrawalId: 'stale-note' });
    expect(w).toMatchObject({ withdrawalId: id, status: 'PENDING' });
    expect((await getWithdrawal(h.db, id))?.signed?.deadline).toBeGreaterThan(Number(chainNow));
    startTask();
    await settledAs(api, 'stale-note', 'COMPLETED');
    await stopTask();
    expect(await tokenBalance(user.address)).toBe(walletBefore + 5n * USDC);
    expect(await withdrawnLogs(id)).toHaveLength(1);
  });

  for (const dropped of [false, true]) {
    it(`a crash between the broadcast and the receipt${dropped ? ', the transaction lost by the node' : ''}: the recorded transaction is followed, never a second`, async () => {
      const user = f.users[0];
      const api = await keyFor(user.address);
      const walletBefore = await tokenBalance(user.address);
      const collateral = acct(user.address)!.collateral;
      const cid = `crash-sent-${dropped}`;
      const nonce = await operatorNonce();
      await f.testClient.setAutomine(false);
      try {
        const w = await api.withdraw(signer(user), { amount: '3.25', clientWithdrawalId: cid });
        startTask();
        // Signed, recorded, broadcast: in the node's pool, not mined.
        const sent = (await until(() => getWithdrawal(h.db, w.withdrawalId), (r) => r?.status === 'SENT' && r.txHash !== null))!;
        await until(() => f.publicClient.getTransaction({ hash: sent.txHash as Hex }).then(() => true, () => false), (x) => x);
        await crashAndRestart(async () => {
          if (!dropped) return;
          await f.testClient.dropTransaction({ hash: sent.txHash as Hex });
          // A new fee market: a payment signed afresh now would not be the recorded bytes.
          const { baseFeePerGas } = await f.publicClient.getBlock();
          await f.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: (baseFeePerGas! * 3n) / 2n });
          await f.testClient.mine({ blocks: 1 });
        });
        // The restarted task resumes the recorded bytes (re-broadcast if the node lost them).
        await until(() => f.publicClient.getTransaction({ hash: sent.txHash as Hex }).then(() => true, () => false), (x) => x);
        await f.testClient.mine({ blocks: 1 });
        const done = await settledAs(api, cid, 'COMPLETED');
        expect(done.txHash).toBe(sent.txHash);
      } finally {
        await f.testClient.setAutomine(true);
      }
      await stopTask();
      expect(await operatorNonce()).toBe(nonce + 1);
      const id = withdrawalIdOf(user.address, cid);
      expect(await withdrawnLogs(id)).toHaveLength(1);
      expect(await tokenBalance(user.address)).toBe(walletBefore + 3_250_000n);
      expect(acct(user.address)).toMatchObject({ collateral: collateral - 3_250_000n, pendingWithdrawals: 0n });
    });
  }

  it('a withdrawal the vault already paid (a crash after the payment landed, before it was recorded) is settled without a new transaction', async () => {
    const user = f.users[0];
    const api = await keyFor(user.address);
    const walletBefore = await tokenBalance(user.address);
    const w = await api.withdraw(signer(user), { amount: '2', clientWithdrawalId: 'paid-before' });
    const receipt = await vaultWithdraw(f, perp, user, 2n * USDC, w.withdrawalId as Hex);
    const nonce = await operatorNonce();
    startTask();
    const done = await settledAs(api, 'paid-before', 'COMPLETED');
    await stopTask();
    expect(done.txHash).toBe(receipt.transactionHash);
    expect(await operatorNonce()).toBe(nonce);
    expect(await withdrawnLogs(w.withdrawalId)).toHaveLength(1);
    expect(await tokenBalance(user.address)).toBe(walletBefore + 2n * USDC);
    expect(acct(user.address)).toMatchObject({ pendingWithdrawals: 0n });
  });

  it("a pause of the vault's payments holds a withdrawal PENDING without failing it; lifted, it is paid once", async () => {
    const user = f.users[2];
    const api = await keyFor(user.address);
    await fund(user, 100n * USDC);
    const walletBefore = await tokenBalance(user.address);
    const collateralBefore = acct(user.address)!.collateral;
    const pauseWith = async (functionName: 'pause' | 'unpause') =>
      f.publicClient.waitForTransactionReceipt({ hash: await f.operator.writeContract({ address: perp.contracts.marginVault, abi: marginVaultAbi, functionName }) });
    await pauseWith('pause');
    try {
      await api.withdraw(signer(user), { amount: '40', clientWithdrawalId: 'while-paused' });
      const waits: string[] = [];
      const note = (fields: object) => void waits.push(JSON.stringify(fields));
      startTask({ info: () => {}, warn: note, error: note } as never);
      // The task tries, is refused VenuePaused, and retries: nothing paid, nothing failed, the reserve kept.
      await until(async () => waits.filter((w) => w.includes('paused by its guardian')).length, (n) => n >= 2);
      expect(await listed(api, 'while-paused')).toMatchObject({ status: 'PENDING', txHash: null });
      expect(acct(user.address)).toMatchObject({ collateral: collateralBefore - 40_000_000n, pendingWithdrawals: 40_000_000n });
    } finally {
      await pauseWith('unpause');
    }
    await settledAs(api, 'while-paused', 'COMPLETED');
    expect(await tokenBalance(user.address)).toBe(walletBefore + 40_000_000n);
    expect(acct(user.address)).toMatchObject({ collateral: collateralBefore - 40_000_000n, pendingWithdrawals: 0n });
    expect(await withdrawnLogs(withdrawalIdOf(user.address, 'while-paused'))).toHaveLength(1);
    await stopTask();
  });
});
