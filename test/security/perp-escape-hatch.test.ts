/**
 * The perpetual vault's escape hatch (docs/security.md, "Perpetual vault escape hatch"), on a real
 * anvil with the real engine, tree and registry: accounts trade, deposit and withdraw; the venue
 * posts its liabilities root; then the operator falls silent. The guardian's pause stops payments
 * but traps nobody: after the silence anyone freezes the vault, and each account takes back, to the
 * unit, its equity and pending withdrawals at the snapshot plus what it deposited since, less what
 * the vault paid it since; with the proof the API's `GET account/proof` answers (built here by the
 * same code), through the SDK's `escapeWithdrawArgs`, or with no saved proof at all: the SDK
 * rebuilds it from the leaves the registry published (`escapeCallFromChain`). A liquidity provider
 * takes its share of the pool back in its own leaf, and an account that deposited after the root
 * (no leaf) shows its absence with its two neighbours and takes its deposit back (issue 60).
 */
import { escapeCallFromChain, escapeWithdrawArgs, MARGIN_VAULT_ESCAPE_ABI, type AccountProof } from '@tokex/sdk';
import { keccak256, parseEventLogs, toHex, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { marginVaultAbi, reserveRegistryAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { createChainWallet } from '../../src/chain/chain-client.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { EngineCommand, PlaceOrderAccepted } from '../../src/perp/engine/engine-types.ts';
import { PerpEngine, POOL_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';
import { snapshotLiabilities, type LiabilitiesSnapshot } from '../../src/perp/reserves/liabilities-snapshot.ts';
import { leafHash, proof } from '../../src/perp/reserves/merkle-sum-tree.ts';
import { expectRevert, usdc, usdcOf } from '../chain/chain-test-helpers.ts';
import { testWallet, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, postReservesRoot, registryLeaves, vaultDeposit, vaultWithdraw } from '../support/perp-venue.ts';
import { xUsdInstrument } from '../support/perp-test-instrument.ts';

/** 1 tick = 1 USD, 1 lot = 1 unit. */
const X = xUsdInstrument();
const THREE_DAYS = 3n * 86_400n;

let f: ChainFixture;
let perp: PerpDeployment;
let a: ChainUser;
let b: ChainUser;
let lp: ChainUser;
/** Deposits only after the root: no leaf. */
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
  [lp, a, b, outsider] = f.users;
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

  // A liquidity provider deposits 1,000 and puts 800 of it in the pool, which took b's side of the trade.
  await vaultDeposit(f, perp, lp, usdc('1000'));
  run({ kind: 'deposit', account: lp.address, amount: usdc('1000') });
  expect(run({ kind: 'addLiquidity', account: lp.address, amount: usdc('800'), lockupMs: 0 }).ok).toBe(true);

  // The venue posts the snapshot's root with its leaves, as the reserves task does each funding interval.
  snap = snapshotLiabilities(engine);
  const posted = await postReservesRoot(f, perp, 1n, registryLeaves(snap.leaves));
  postedAt = (await f.publicClient.getBlock({ blockNumber: posted.blockNumber })).timestamp;

  // After the snapshot: b's pending 500 is paid on chain (the engine is not told), and a deposits
  // 200 more, which the engine never credits.
  const paid = await vaultWithdraw(f, perp, b, usdc('500'), keccak256(toHex('wb')));
  silentFrom = (await f.publicClient.getBlock({ blockNumber: paid.blockNumber })).timestamp;
  await vaultDeposit(f, perp, a, usdc('200'));
  // The outsider's first deposit comes after the root too: it has no leaf.
  await vaultDeposit(f, perp, outsider, usdc('500'));
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
    await postReservesRoot(f, perp, 2n, [{ salt: keccak256(toHex('forged')), account: outsider.address, equity: usdc('999999'), pendingWithdrawals: 0n, deposited: 0n, withdrawn: 0n }]);
    expect((await read<readonly [bigint, Hex, bigint, bigint]>('escapeRoot'))[1]).toBe(snap.tree.root);
    await mined(await guardian().writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'unpause' }));
    await expect(vaultWithdraw(f, perp, a, usdc('1'), keccak256(toHex('frozen')))).rejects.toThrow(/VaultFrozen/);
    await expect(vaultDeposit(f, perp, a, usdc('1'))).rejects.toThrow(/VaultFrozen/);
    await expectRevert(() => outsider.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freeze' }), 'VaultFrozen');
  });

  test('each account takes its leaf plus deposits since, less payments since, to the unit, once: with a kept proof or from the chain alone', async () => {
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

    // a uses the proof it kept from the API; b kept nothing: the SDK rebuilds its call from the chain.
    const fromChain = (user: ChainUser) => escapeCallFromChain(f.publicClient, { vault: vault(), account: user.address });
    const callB = await fromChain(b);
    expect(callB.functionName).toBe('escapeWithdraw');
    expect(callB.epoch).toBe(1n);
    expect(callB.args).toEqual(escapeWithdrawArgs(proofOf(b.address)));
    const sendFromChain = async (user: ChainUser) => {
      const call = await fromChain(user);
      return user.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: call.functionName, args: call.args as never });
    };
    for (const [user, owed, send] of [[a, owedA, () => escape(a, proofOf(a.address))], [b, owedB, () => sendFromChain(b)]] as const) {
      const before = await usdcOf(f, user.address);
      const r = await mined(await send());
      expect(await usdcOf(f, user.address)).toBe(before + owed);
      const [ev] = parseEventLogs({ abi: marginVaultAbi, logs: r.logs, eventName: 'EscapeWithdrawn' });
      expect(ev.args).toEqual({ account: user.address, amount: owed, epoch: 1n });
      // Once: the payment counts in withdrawnOf, so the same leaf now gives nothing.
      await expectRevert(() => escape(user, proofOf(user.address)), 'NothingToEscape', [user.address]);
    }
    const paidOut = owedA + owedB;
    expect(await usdcOf(f, vault())).toBe(held - paidOut);
  });

  test("a liquidity provider takes its share of the pool back in its own leaf; the pool's synthetic account keeps only dust", async () => {
    const lpLeaf = snap.leaves.find((l) => l.account === lp.address)!;
    const share = engine.lpPosition(lp.address)!.value;
    // 800 into an empty pool that has not traded since: its shares are worth the 800 exactly.
    expect(share).toBe(usdc('800'));
    expect(lpLeaf.equity).toBe(usdc('200') + share);
    const poolLeaf = snap.leaves.find((l) => l.account.toLowerCase() === POOL_ACCOUNT)!;
    expect(poolLeaf.equity).toBe(0n);
    const call = await escapeCallFromChain(f.publicClient, { vault: vault(), account: lp.address });
    expect(call.functionName).toBe('escapeWithdraw');
    const before = await usdcOf(f, lp.address);
    await mined(await lp.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: call.functionName, args: call.args as never }));
    expect(await usdcOf(f, lp.address)).toBe(before + usdc('1000'));
  });

  test('an account with no leaf (its first deposit came after the root) shows its absence and takes its deposit back, once', async () => {
    // A leaf holder cannot pass for absent: no two adjacent leaves bracket an address that has one.
    const holder = await escapeCallFromChain(f.publicClient, { vault: vault(), account: a.address });
    expect(holder.functionName).toBe('escapeWithdraw');
    const leaves = [...snap.leaves].sort((x, y) => (BigInt(x.account) < BigInt(y.account) ? -1 : 1));
    const i = leaves.findIndex((l) => l.account === a.address);
    const stepsOf = (k: number) => proof(snap.tree, k).map((st) => ({ hash: st.hash, sum: st.sum, left: st.side === 'left' }));
    const asNeighbour = (k: number) => ({ leaf: registryLeaves([leaves[k]!])[0]!, path: stepsOf(k) });
    const around = [i - 1, i + 1].filter((k) => k >= 0 && k < leaves.length).map(asNeighbour);
    await expectRevert(() => a.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeUnlisted', args: [around] }), 'InvalidAbsenceProof');
    // Its own leaf given as a neighbour: not strictly around it.
    await expectRevert(() => a.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeUnlisted', args: [[asNeighbour(i)]] }), 'InvalidAbsenceProof');

    const call = await escapeCallFromChain(f.publicClient, { vault: vault(), account: outsider.address });
    expect(call.functionName).toBe('escapeUnlisted');
    expect(call.leaf).toBeNull();
    // A non-adjacent pair around the outsider is refused too (a gap hides leaves).
    if (leaves.length >= 3) {
      const wide = [asNeighbour(0), asNeighbour(leaves.length - 1)];
      await expectRevert(() => outsider.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeUnlisted', args: [wide] }), 'InvalidAbsenceProof');
    }
    const before = await usdcOf(f, outsider.address);
    const r = await mined(await outsider.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeUnlisted', args: call.args as never }));
    expect(await usdcOf(f, outsider.address)).toBe(before + usdc('500'));
    expect(parseEventLogs({ abi: marginVaultAbi, logs: r.logs, eventName: 'EscapeWithdrawn' })[0]!.args).toEqual({ account: outsider.address, amount: usdc('500'), epoch: 1n });
    await expectRevert(() => outsider.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeUnlisted', args: call.args as never }), 'NothingToEscape', [outsider.address]);
    // What stays in the vault is the fee account's leaf: the fees a and b paid at the trade.
    expect(await usdcOf(f, vault())).toBe(usdc('0.7'));
    const synthetic = snap.leaves.filter((l) => ![a.address, b.address, lp.address].includes(l.account)).reduce((sum, l) => sum + l.equity + l.pendingWithdrawals, 0n);
    expect(synthetic).toBe(usdc('0.7'));
  });
});
