/**
 * `OneClickRouter.migrateDelegations` never revives a spent delegation signature (issue 60): on a real
 * anvil, a new venue whose migration window is open (as `src/chain/legacy-migration.ts` deploys it)
 * takes users' delegations and nonces from the 0.1.0 snapshot. A user who acted on the new router
 * during the window (delegated, undelegated) keeps what they did there and their nonce never goes
 * down, so a signature they spent there cannot be replayed; a delegatee that refused a user there is
 * not handed the delegation back; a rerun of the import changes nothing a user did in between.
 */
import { parseEventLogs, recoverTypedDataAddress, zeroAddress, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { oneClickRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { delegateTypedData, oneClickDomain } from '../../src/chain/one-click-typed-data.ts';
import { revertEachTest, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { confirm, contracts, deadlineIn, expectRevert } from './chain-test-helpers.ts';

let f: ChainFixture;
let alice: ChainUser;
let bob: ChainUser;
let carol: ChainUser;
/** The delegatee of the snapshot and of the new router (the relayer's role); any address works. */
let relayer: ChainUser;
let oneClick: Address;

const LIFETIME = 30n * 86_400n;

beforeAll(async () => {
  // The new venue of a migration: its windows open, nothing minted to the demo wallets.
  f = await startChainFixture({ deployOptions: { migrating: true, treasuryFunding: 0n, walletCash: 0n, walletStock: 0n } });
  [alice, bob, carol, relayer] = f.users;
  oneClick = contracts(f).oneClickRouter;
});
afterAll(async () => {
  await f?.stop();
});
revertEachTest(() => f);

const read = <T>(functionName: string, args: readonly unknown[]) =>
  f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
const nonceOf = (user: Address) => read<bigint>('nonces', [user]);
const delegateOf = (user: Address) => read<Address>('delegateOf', [user]);
const expiresAtOf = (user: Address) => read<bigint>('delegationExpiresAt', [user]);

/** `user` signs `Delegate(user, relayer, nonce, deadline)` for the new router. */
async function sign(user: ChainUser, nonce: bigint): Promise<{ deadline: number; signature: Hex }> {
  const deadline = await deadlineIn(f, 600);
  const signature = await user.wallet.signTypedData(delegateTypedData(oneClickDomain(f.chainId, oneClick), { user: user.address, delegatee: relayer.address, nonce, deadline }));
  return { deadline, signature };
}
const submit = (user: Address, deadline: number, signature: Hex) =>
  f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [user, relayer.address, deadline, signature] });
const migrate = (users: Address[], delegatees: Address[], nonces: bigint[]) =>
  confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'migrateDelegations', args: [users, delegatees, nonces] }));
const as = (user: ChainUser, functionName: 'undelegate' | 'refuseDelegation', args: readonly unknown[] = []) =>
  confirm(f, user.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: functionName as never, args: args as never }));
const blockTime = async (receipt: { blockNumber: bigint }) => (await f.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp;

describe('migrateDelegations', () => {
  test('a nonce advanced on the new router during the window stays: the spent signature cannot be replayed', async () => {
    expect(await read<boolean>('migrating', [])).toBe(true);
    // In the window, Alice delegates on the new router (nonce 0 → 1), then undelegates (→ 2).
    const spent = await sign(alice, 0n);
    await confirm(f, submit(alice.address, spent.deadline, spent.signature));
    expect(await delegateOf(alice.address)).toBe(relayer.address);
    await as(alice, 'undelegate');
    expect(await nonceOf(alice.address)).toBe(2n);
    // The import then carries her 0.1.0 delegation with the snapshot's (lower) nonce 0.
    const receipt = await migrate([alice.address], [relayer.address], [0n]);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'DelegationMigrationKept' }).map((e) => e.args)).toEqual([
      { user: alice.address, carriedNonce: 0n, nonce: 2n },
    ]);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'DelegationMigrated' })).toEqual([]);
    // Her nonce stays, her undelegate stands.
    expect(await nonceOf(alice.address)).toBe(2n);
    expect(await delegateOf(alice.address)).toBe(zeroAddress);
    expect(await expiresAtOf(alice.address)).toBe(0n);
    // Anyone replaying the spent signature: it is checked against nonce 2 and recovers to someone else.
    const recovered = await recoverTypedDataAddress({
      ...delegateTypedData(oneClickDomain(f.chainId, oneClick), { user: alice.address, delegatee: relayer.address, nonce: 2n, deadline: spent.deadline }),
      signature: spent.signature,
    });
    expect(recovered).not.toBe(alice.address);
    await expectRevert(() => submit(alice.address, spent.deadline, spent.signature), 'InvalidSigner', [recovered, alice.address]);
    expect(await delegateOf(alice.address)).toBe(zeroAddress);
  });

  test('a carried nonce above the current one is taken, and the delegation made in the window is kept', async () => {
    // Bob delegates on the new router (nonce 0 → 1); the snapshot had him at nonce 5 with another delegatee.
    const s = await sign(bob, 0n);
    const delegated = await confirm(f, submit(bob.address, s.deadline, s.signature));
    const expiresAt = (await blockTime(delegated)) + LIFETIME;
    const receipt = await migrate([bob.address], [carol.address], [5n]);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'DelegationMigrationKept' }).map((e) => e.args)).toEqual([
      { user: bob.address, carriedNonce: 5n, nonce: 5n },
    ]);
    expect(await nonceOf(bob.address)).toBe(5n);
    expect(await delegateOf(bob.address)).toBe(relayer.address);
    expect(await expiresAtOf(bob.address)).toBe(expiresAt);
  });

  test('a user who did nothing in the window is carried as before; a rerun after their undelegate changes nothing', async () => {
    const receipt = await migrate([carol.address], [relayer.address], [3n]);
    const at = await blockTime(receipt);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'DelegationMigrated' }).map((e) => e.args)).toEqual([
      { user: carol.address, delegatee: relayer.address, nonce: 3n, expiresAt: at + LIFETIME },
    ]);
    expect([await nonceOf(carol.address), await delegateOf(carol.address), await expiresAtOf(carol.address)]).toEqual([3n, relayer.address, at + LIFETIME]);
    // Carol ends it; a rerun of the import (a migration resumed after a crash sends its imports again)
    // neither lowers her nonce nor hands the delegation back.
    await as(carol, 'undelegate');
    const rerun = await migrate([carol.address], [relayer.address], [3n]);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: rerun.logs, eventName: 'DelegationMigrationKept' }).map((e) => e.args)).toEqual([
      { user: carol.address, carriedNonce: 3n, nonce: 4n },
    ]);
    expect([await nonceOf(carol.address), await delegateOf(carol.address), await expiresAtOf(carol.address)]).toEqual([4n, zeroAddress, 0n]);
  });

  test("a delegatee that refused the user on the new router (the API's 1ct/disable) is not handed the delegation back; the nonce is carried", async () => {
    await as(relayer, 'refuseDelegation', [alice.address]);
    expect(await read<bigint>('nonceOffset', [alice.address, relayer.address])).toBe(1n);
    const receipt = await migrate([alice.address], [relayer.address], [2n]);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'DelegationMigrated' }).map((e) => e.args)).toEqual([
      { user: alice.address, delegatee: zeroAddress, nonce: 2n, expiresAt: 0n },
    ]);
    expect([await nonceOf(alice.address), await delegateOf(alice.address), await expiresAtOf(alice.address)]).toEqual([2n, zeroAddress, 0n]);
  });

  test('only the upgrader, only while the window is open', async () => {
    await expectRevert(
      () => alice.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'migrateDelegations', args: [[alice.address], [alice.address], [0n]] }),
      'NotMigrating',
      [alice.address],
    );
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'finishMigration' }));
    await expectRevert(() => f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'migrateDelegations', args: [[bob.address], [relayer.address], [0n]] }), 'NotMigrating', [f.operator.account.address]);
  });
});
