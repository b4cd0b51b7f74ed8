/**
 * The perpetual vault's escape hatch (docs/security.md, "Perpetual vault escape hatch"), on a real
 * anvil with the real engine, tree and registry: accounts trade, deposit and withdraw; the venue
 * posts its liabilities root; then the operator falls silent. The guardian's pause stops payments
 * but traps nobody: after the silence anyone freezes the vault, and each account takes back, to the
 * unit, its equity and pending withdrawals at the snapshot plus what it deposited since, less what
 * the vault paid it since; with the proof the API's `GET account/proof` answers (built here by the
 * same code), through the SDK's `escapeWithdrawArgs`.
 */
import { escapeWithdrawArgs, MARGIN_VAULT_ESCAPE_ABI, type AccountProof } from '@tokex/sdk';
import { keccak256, parseEventLogs, toHex, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { marginVaultAbi, reserveRegistryAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { createChainWallet } from '../../src/chain/chain-client.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { EngineCommand, PlaceOrderAccepted } from '../../src/perp/engine/engine-types.ts';
import type { InstrumentConfig } from '../../src/perp/engine/instruments.ts';
import { PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import { snapshotLiabilities, type LiabilitiesSnapshot } from '../../src/perp/reserves/liabilities-snapshot.ts';
import { leafHash, proof } from '../../src/perp/reserves/merkle-sum-tree.ts';
import { expectRevert, usdc, usdcOf } from '../chain/chain-test-helpers.ts';
import { testWallet, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, perpOperatorWallet, vaultDeposit, vaultWithdraw } from '../support/perp-venue.ts';

/** 1 tick = 1 USD, 1 lot = 1 unit. */
const X: InstrumentConfig = {
  symbol: 'X-USD', tickSize: '1', lotSize: '1', minSizeLots: 1, maxSizeLots: 1_000_000, maxPriceTicks: 1_000_000,
  maxLeverage: 20, initialMarginRatioPpm: 50_000, maintenanceMarginRatioPpm: 25_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 3_600_000, priceBandPpm: 0,
};
const THREE_DAYS = 3n * 86_400n;

let f: ChainFixture;
let perp: PerpDeployment;
let a: ChainUser;
let b: ChainUser;
let outsider: ChainUser;
let engine: PerpEngine;
let snap: LiabilitiesSnapshot;
let postedAt: bigint;
/** The operator's last act: b's payment after the post (later than the post). */
let silentFrom: bigint;
let n = 0;
const run = (c: Record<string, unknown>) => engine.apply({ id: `c${++n}`, ts: 1_000 + n, ...c } as EngineCommand);

const vault = () => perp.contracts.marginVault;
const guardian = () => testWallet(ANVIL_ACCOUNTS[4].privateKey, f.chain, f.rpcUrl);
const mined = async (hash: Hex) => {
  const r = await f.publicClient.waitForTransactionReceipt({ hash });
  expect(r.status).toBe('success');
  return r;
};
const read = <T>(functionName: string, args: readonly unknown[] = []) =>
  f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
const warpTo = async (timestamp: bigint) => {
  await f.testClient.setNextBlockTimestamp({ timestamp });
  await f.testClient.mine({ blocks: 1 });
};

/** The proof as `GET account/proof` answers it (src/perp/reserves/proof-service.ts reads the same stored nodes). */
function proofOf(account: Address): AccountProof {
  const leaf = snap.leaves.find((l) => l.account.toLowerCase() === account.toLowerCase())!;
  const path = proof(snap.tree, leaf.leafIndex);
  return {
    epoch: 1, account: account.toLowerCase(), leafIndex: leaf.leafIndex, salt: leaf.salt, equity: leaf.equity.toString(),
    pendingWithdrawals: leaf.pendingWithdrawals.toString(), deposited: leaf.deposited!.toString(), withdrawn: leaf.withdrawn!.toString(),
    value: (leaf.equity + leaf.pendingWithdrawals).toString(), leafHash: leafHash(leaf),
    path: path.map((s) => ({ hash: s.hash, sum: s.sum.toString(), side: s.side })), root: snap.tree.root, total: snap.tree.total.toString(),
    leafCount: snap.leaves.length, badDebt: '0', snapshotTs: 1, decimals: 6, chainId: f.chainId, reserveRegistry: perp.contracts.reserveRegistry!,
    vault: vault(), collateralToken: perp.contracts.collateralToken, txHash: null, vaultBalance: null, solvent: null,
  } as AccountProof;
}

const escape = (user: ChainUser, p: AccountProof) =>
  user.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeWithdraw', args: escapeWithdrawArgs(p) as never });

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
  perp = await deployPerpVenue(f, { demoDeposit: false });
  [, a, b, outsider] = f.users;
  // The owner names the guardian (the embedded stack's deployment does it at once).
  await mined(await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setGuardian', args: [ANVIL_ACCOUNTS[4].address] }));
  engine = new PerpEngine({ instruments: [X] });
  // Setting the registry (at the deployment here; at the first start of an upgraded vault) starts
  // the silence clock: a vault whose registry's earlier posts carry no time is never freezable at once.
  const setAt = await read<bigint>('lastOperatorActivity');
  expect(setAt).toBeGreaterThan(0n);
  // The clock's start is the block that set the registry; the deployment's batch can span blocks
  // of different seconds, so that block is found by its event rather than taken as the section's last.
  const [registrySet] = await f.publicClient.getContractEvents({
    address: vault(), abi: marginVaultAbi, eventName: 'ReserveRegistrySet',
    fromBlock: BigInt(perp.firstBlockNumber ?? '0'), toBlock: BigInt(perp.blockNumber),
  });
  expect(registrySet!.args.registry!.toLowerCase()).toBe(perp.contracts.reserveRegistry!.toLowerCase());
  expect(setAt).toBe((await f.publicClient.getBlock({ blockNumber: registrySet!.blockNumber })).timestamp);

  // Both deposit 5,000 on chain; the engine credits it, as the collateral task does.
  for (const u of [a, b]) {
    await vaultDeposit(f, perp, u, usdc('5000'));
    run({ kind: 'deposit', account: u.address, amount: usdc('5000') });
  }
  // They trade: a buys 10 at 100 from b, and the mark moves to 112 (a +120, b −120, less fees).
  run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
  expect((run({ kind: 'placeOrder', account: b.address, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', priceTicks: 100, sizeLots: 10 }) as PlaceOrderAccepted).ok).toBe(true);
  expect((run({ kind: 'placeOrder', account: a.address, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 10 }) as PlaceOrderAccepted).fills).toHaveLength(1);
  run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 112, indexPriceTicks: 112 });
  // a withdraws 1,000, paid and settled before the snapshot; b asks for 500, still pending at it.
  expect(run({ kind: 'requestWithdrawal', account: a.address, withdrawalId: 'wa', amount: usdc('1000') }).ok).toBe(true);
  await vaultWithdraw(f, perp, a, usdc('1000'), keccak256(toHex('wa')));
  expect(run({ kind: 'settleWithdrawal', withdrawalId: 'wa', outcome: 'PAID' }).ok).toBe(true);
  expect(run({ kind: 'requestWithdrawal', account: b.address, withdrawalId: 'wb', amount: usdc('500') }).ok).toBe(true);

  // The venue posts the snapshot's root, as the reserves task does each funding interval.
  snap = snapshotLiabilities(engine);
  const operator = perpOperatorWallet(f);
  const posted = await mined(await operator.writeContract({
    address: perp.contracts.reserveRegistry!, abi: reserveRegistryAbi, functionName: 'postReserves',
    args: [1n, snap.tree.root, snap.tree.total, BigInt(snap.leaves.length), 1n],
  }));
  postedAt = (await f.publicClient.getBlock({ blockNumber: posted.blockNumber })).timestamp;

  // After the snapshot: b's pending 500 is paid on chain (the engine is not told), and a deposits
  // 200 more, which the engine never credits.
  const paid = await vaultWithdraw(f, perp, b, usdc('500'), keccak256(toHex('wb')));
  silentFrom = (await f.publicClient.getBlock({ blockNumber: paid.blockNumber })).timestamp;
  await vaultDeposit(f, perp, a, usdc('200'));
});
afterAll(async () => {
  await f?.stop();
});

describe('the perpetual vault escape hatch', () => {
  test('the leaf commits equity, pending withdrawals and the vault flows the engine knew at the snapshot', () => {
    const leafA = snap.leaves.find((l) => l.account === a.address)!;
    const leafB = snap.leaves.find((l) => l.account === b.address)!;
    const mA = engine.marginSummary(a.address)!;
    const mB = engine.marginSummary(b.address)!;
    expect(leafA).toMatchObject({ equity: mA.equity, pendingWithdrawals: 0n, deposited: usdc('5000'), withdrawn: usdc('1000') });
    expect(leafB).toMatchObject({ equity: mB.equity, pendingWithdrawals: usdc('500'), deposited: usdc('5000'), withdrawn: 0n });
    // Trading moved value between them: a gained 120 less the taker fee (0.05 % of 1,000), b lost 120 less nothing (maker fee 0.02 %).
    expect(mA.equity).toBe(usdc('5000') - usdc('1000') + usdc('120') - usdc('0.5'));
    expect(mB.equity).toBe(usdc('5000') - usdc('500') - usdc('120') - usdc('0.2'));
  });

  test('a guardian pause stops payments, traps nobody yet, and only the guardian or owner can pause', async () => {
    await expectRevert(() => outsider.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'pause' }), 'NotGuardian', [outsider.address]);
    const pausing = await mined(await guardian().writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'pause' }));
    expect(parseEventLogs({ abi: marginVaultAbi, logs: pausing.logs, eventName: 'VaultPausedBy' })[0].args.by).toBe(ANVIL_ACCOUNTS[4].address);
    expect(await read<boolean>('paused')).toBe(true);
    // The operator's path is stopped: a valid signed request is refused while paused.
    await expect(vaultWithdraw(f, perp, a, usdc('1'), keccak256(toHex('paused')))).rejects.toThrow(/VenuePaused/);
    // Before the silence has run, the vault cannot be frozen and nothing escapes.
    // The silence runs from the operator's last act, a payment or a root: here b's payment.
    expect(silentFrom).toBeGreaterThanOrEqual(postedAt);
    expect(await read<bigint>('lastOperatorActivity')).toBe(silentFrom);
    const openAt = silentFrom + THREE_DAYS;
    expect(await read<bigint>('freezableAt')).toBe(openAt);
    await expectRevert(() => outsider.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freeze' }), 'OperatorNotSilent', [openAt]);
    await expectRevert(() => escape(a, proofOf(a.address)), 'VaultNotFrozen');
  });

  test('after the silence anyone freezes the vault, fixing the latest root; payments and deposits stop for good', async () => {
    await warpTo(silentFrom + THREE_DAYS);
    const freezing = await mined(await outsider.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freeze' }));
    const [ev] = parseEventLogs({ abi: marginVaultAbi, logs: freezing.logs, eventName: 'VaultFrozenBy' });
    expect(ev.args).toMatchObject({ by: outsider.address, epoch: 1n, root: snap.tree.root, total: snap.tree.total });
    const [epoch, root, total] = await read<readonly [bigint, Hex, bigint, bigint]>('escapeRoot');
    expect([epoch, root, total]).toEqual([1n, snap.tree.root, snap.tree.total]);
    // A root posted after the freeze changes nothing the hatch pays against.
    await mined(await perpOperatorWallet(f).writeContract({
      address: perp.contracts.reserveRegistry!, abi: reserveRegistryAbi, functionName: 'postReserves', args: [2n, keccak256(toHex('forged')), usdc('999999'), 1n, 2n],
    }));
    expect((await read<readonly [bigint, Hex, bigint, bigint]>('escapeRoot'))[1]).toBe(snap.tree.root);
    await mined(await guardian().writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'unpause' }));
    await expect(vaultWithdraw(f, perp, a, usdc('1'), keccak256(toHex('frozen')))).rejects.toThrow(/VaultFrozen/);
    await expect(vaultDeposit(f, perp, a, usdc('1'))).rejects.toThrow(/VaultFrozen/);
    await expectRevert(() => outsider.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freeze' }), 'VaultFrozen');
  });

  test('each account takes its leaf plus deposits since, less payments since, to the unit, once', async () => {
    const held = await usdcOf(f, vault());
    const leafA = snap.leaves.find((l) => l.account === a.address)!;
    const leafB = snap.leaves.find((l) => l.account === b.address)!;
    // a: equity at the snapshot + the 200 deposited after it; b: equity + pending − the 500 paid after it.
    const owedA = leafA.equity + usdc('200');
    const owedB = leafB.equity + leafB.pendingWithdrawals - usdc('500');
    expect(owedB).toBe(leafB.equity);

    // Someone else's proof, or an altered leaf, is refused.
    await expectRevert(() => escape(outsider, proofOf(a.address)), 'InvalidEscapeProof');
    await expectRevert(() => escape(a, { ...proofOf(a.address), equity: (leafA.equity + 1n).toString() }), 'InvalidEscapeProof');
    await expectRevert(() => escape(a, { ...proofOf(a.address), withdrawn: (leafA.withdrawn! + 1n).toString() }), 'InvalidEscapeProof');

    for (const [user, owed] of [[a, owedA], [b, owedB]] as const) {
      const before = await usdcOf(f, user.address);
      const r = await mined(await escape(user, proofOf(user.address)));
      expect(await usdcOf(f, user.address)).toBe(before + owed);
      const [ev] = parseEventLogs({ abi: marginVaultAbi, logs: r.logs, eventName: 'EscapeWithdrawn' });
      expect(ev.args).toEqual({ account: user.address, amount: owed, epoch: 1n });
      // Once: the payment counts in withdrawnOf, so the same leaf now gives nothing.
      await expectRevert(() => escape(user, proofOf(user.address)), 'NothingToEscape', [user.address]);
    }
    // What stays in the vault is the fee account's leaf: the fees the two paid at the trade.
    expect(await usdcOf(f, vault())).toBe(held - owedA - owedB);
    expect(held - owedA - owedB).toBe(usdc('0.7'));
    const fees = snap.leaves.filter((l) => l.account !== a.address && l.account !== b.address).reduce((s, l) => s + l.equity + l.pendingWithdrawals, 0n);
    expect(fees).toBe(usdc('0.7'));
  });
});
