/**
 * An older epoch's proof at the escape hatch (issue 60, item 1; docs/security.md "Perpetual vault
 * escape hatch", docs/proof-of-reserves.md "Exits"), on a real anvil with the real engine, tree and
 * registry. A user kept the proof `GET account/proof` gave for epoch 1; the venue then trades,
 * credits a deposit, pays a withdrawal and posts epoch 2; after it the user deposits again and the
 * operator falls silent. The vault froze on epoch 2, so the kept proof of epoch 1 is refused (netting
 * it for the vault's flows since could not see the trading since: here 80 USDC of profit), and the
 * SDK turns it into the current one from the chain alone (`escapeCallFromChain` with the old proof's
 * own vault and account), which pays, to the unit, epoch 2's leaf plus the deposit made after it.
 */
import { escapeCallFromChain, escapeWithdrawArgs, MARGIN_VAULT_ESCAPE_ABI, type AccountProof } from '@tokex/sdk';
import { keccak256, parseEventLogs, toHex, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { EngineCommand, PlaceOrderAccepted } from '../../src/perp/engine/engine-types.ts';
import { PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import { snapshotLiabilities, type LiabilitiesSnapshot } from '../../src/perp/reserves/liabilities-snapshot.ts';
import { leafHash, proof } from '../../src/perp/reserves/merkle-sum-tree.ts';
import { expectRevert, usdc, usdcOf } from '../chain/chain-test-helpers.ts';
import { startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, postReservesRoot, registryLeaves, vaultDeposit, vaultWithdraw } from '../support/perp-venue.ts';
import { xUsdInstrument } from '../support/perp-test-instrument.ts';

/** 1 tick = 1 USD, 1 lot = 1 unit. */
const X = xUsdInstrument();

let f: ChainFixture;
let perp: PerpDeployment;
let a: ChainUser;
let b: ChainUser;
let engine: PerpEngine;
let epoch1: LiabilitiesSnapshot;
let epoch2: LiabilitiesSnapshot;
/** What a kept of epoch 1, as the API answered it. */
let keptProof: AccountProof;
let n = 0;
const run = (c: Record<string, unknown>) => engine.apply({ id: `c${++n}`, ts: 1_000 + n, ...c } as EngineCommand);
const vault = () => perp.contracts.marginVault;
const read = <T>(functionName: string, args: readonly unknown[] = []) =>
  f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
const leafOf = (snap: LiabilitiesSnapshot, account: Address) => snap.leaves.find((l) => l.account.toLowerCase() === account.toLowerCase())!;

/** The proof as `GET account/proof` answers it for `epoch` (src/perp/reserves/proof-service.ts reads the same stored nodes). */
function proofOf(snap: LiabilitiesSnapshot, epoch: number, account: Address): AccountProof {
  const leaf = leafOf(snap, account);
  return {
    epoch, account: account.toLowerCase(), leafIndex: leaf.leafIndex, salt: leaf.salt, equity: leaf.equity.toString(),
    pendingWithdrawals: leaf.pendingWithdrawals.toString(), deposited: leaf.deposited!.toString(), withdrawn: leaf.withdrawn!.toString(),
    value: (leaf.equity + leaf.pendingWithdrawals).toString(), leafHash: leafHash(leaf),
    path: proof(snap.tree, leaf.leafIndex).map((s) => ({ hash: s.hash, sum: s.sum.toString(), side: s.side })), root: snap.tree.root,
    total: snap.tree.total.toString(), leafCount: snap.leaves.length, badDebt: '0', snapshotTs: 1, decimals: 6, chainId: f.chainId,
    reserveRegistry: perp.contracts.reserveRegistry!, vault: vault(), collateralToken: perp.contracts.collateralToken, txHash: null, vaultBalance: null, solvent: null,
  } as AccountProof;
}

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
  perp = await deployPerpVenue(f, { demoDeposit: false });
  [a, b] = f.users;
  engine = new PerpEngine({ instruments: [X] });
  for (const u of [a, b]) {
    await vaultDeposit(f, perp, u, usdc('5000'));
    run({ kind: 'deposit', account: u.address, amount: usdc('5000') });
  }
  // a buys 10 at 100 from b; the mark moves to 112.
  run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
  expect((run({ kind: 'placeOrder', account: b.address, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', priceTicks: 100, sizeLots: 10 }) as PlaceOrderAccepted).ok).toBe(true);
  expect((run({ kind: 'placeOrder', account: a.address, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 10 }) as PlaceOrderAccepted).fills).toHaveLength(1);
  run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 112, indexPriceTicks: 112 });
  // Epoch 1, posted with its leaves; a keeps its proof.
  epoch1 = snapshotLiabilities(engine);
  await postReservesRoot(f, perp, 1n, registryLeaves(epoch1.leaves));
  keptProof = proofOf(epoch1, 1, a.address);

  // Between the roots: a deposits 300 (credited), the mark moves to 120 (a +80, b −80), a is paid 400.
  await vaultDeposit(f, perp, a, usdc('300'));
  run({ kind: 'deposit', account: a.address, amount: usdc('300') });
  run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 120, indexPriceTicks: 120 });
  expect(run({ kind: 'requestWithdrawal', account: a.address, withdrawalId: 'wa', amount: usdc('400') }).ok).toBe(true);
  await vaultWithdraw(f, perp, a, usdc('400'), keccak256(toHex('wa')));
  expect(run({ kind: 'settleWithdrawal', withdrawalId: 'wa', outcome: 'PAID' }).ok).toBe(true);
  epoch2 = snapshotLiabilities(engine);
  await postReservesRoot(f, perp, 2n, registryLeaves(epoch2.leaves));

  // After the last root a deposits 50 more, which the engine never credits; then the operator is silent.
  await vaultDeposit(f, perp, a, usdc('50'));
  const openAt = await read<bigint>('freezableAt');
  await f.testClient.setNextBlockTimestamp({ timestamp: openAt });
  await f.testClient.mine({ blocks: 1 });
  await f.publicClient.waitForTransactionReceipt({ hash: await b.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'freeze' }) });
}, 120_000);

afterAll(async () => {
  await f?.stop();
});

test("a kept proof of an older epoch is refused; the SDK turns it into the frozen epoch's call, which pays that leaf and the deposit after it, to the unit", async () => {
  const [frozenEpoch, root] = await read<readonly [bigint, Hex, bigint, bigint]>('escapeRoot');
  expect([frozenEpoch, root]).toEqual([2n, epoch2.tree.root]);
  const [leafA1, leafA2, leafB2] = [leafOf(epoch1, a.address), leafOf(epoch2, a.address), leafOf(epoch2, b.address)];
  // Epoch 2's leaf is epoch 1's plus what moved in between: +300 credited, +80 of trading, −400 paid.
  expect(leafA2).toMatchObject({ equity: leafA1.equity + usdc('300') + usdc('80') - usdc('400'), pendingWithdrawals: 0n, deposited: usdc('5300'), withdrawn: usdc('400') });
  expect(leafA1).toMatchObject({ equity: usdc('5000') + usdc('120') - usdc('0.5'), deposited: usdc('5000'), withdrawn: 0n });

  // The kept proof of epoch 1 does not pay: the vault pays only against the root it froze on.
  const old = () => a.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeWithdraw', args: escapeWithdrawArgs(keptProof) as never });
  await expectRevert(old, 'InvalidEscapeProof');
  // Netted for the vault's flows since, it would have said 80 too little: the trading since is in no flow.
  const owed = leafA2.equity + usdc('50');
  const nettedOld = leafA1.equity + ((await read<bigint>('depositedOf', [a.address])) - leafA1.deposited!) - ((await read<bigint>('withdrawnOf', [a.address])) - leafA1.withdrawn!);
  expect(owed - nettedOld).toBe(usdc('80'));

  // The SDK turns the kept proof into the current one from its own vault and account, with a node alone.
  const call = await escapeCallFromChain(f.publicClient, { vault: keptProof.vault as Address, account: keptProof.account as Address });
  expect(call.functionName).toBe('escapeWithdraw');
  expect(call.epoch).toBe(2n);
  expect(call.args).toEqual(escapeWithdrawArgs(proofOf(epoch2, 2, a.address)));
  const before = await usdcOf(f, a.address);
  const r = await f.publicClient.waitForTransactionReceipt({
    hash: await a.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: call.functionName, args: call.args as never }),
  });
  expect(r.status).toBe('success');
  expect(await usdcOf(f, a.address)).toBe(before + owed);
  expect(parseEventLogs({ abi: marginVaultAbi, logs: r.logs, eventName: 'EscapeWithdrawn' })[0]!.args).toEqual({ account: a.address, amount: owed, epoch: 2n });
  // Paid once: the kept proof and the current one both give nothing more.
  await expectRevert(old, 'InvalidEscapeProof');
  await expectRevert(() => a.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeWithdraw', args: call.args as never }), 'NothingToEscape', [a.address]);

  // b kept nothing: its epoch 2 leaf (the 80 it lost since epoch 1 included), from the chain.
  expect(leafB2.equity).toBe(leafOf(epoch1, b.address).equity - usdc('80'));
  const callB = await escapeCallFromChain(f.publicClient, { vault: vault(), account: b.address });
  const beforeB = await usdcOf(f, b.address);
  await f.publicClient.waitForTransactionReceipt({
    hash: await b.wallet.writeContract({ address: vault(), abi: MARGIN_VAULT_ESCAPE_ABI, functionName: callB.functionName, args: callB.args as never }),
  });
  expect(await usdcOf(f, b.address)).toBe(beforeB + leafB2.equity);
  // Left in the vault: the fee account's leaf, the fees of the one trade (0.5 + 0.2).
  expect(await usdcOf(f, vault())).toBe(usdc('0.7'));
});
