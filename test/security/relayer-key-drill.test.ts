/**
 * Key-compromise drill (issue 43 §7): the One Click relayer's key. On a real anvil with the venue's
 * contracts, an attacker holding the embedded stack's relayer key (anvil account 7, the delegatee
 * users sign for) does the worst the contracts allow, and the documented bound holds
 * (docs/security.md, "Relayer"):
 * - it acts only for users whose delegation to it is live, only as those users (value never
 *   leaves a user's own accounts: its wallet and its exchange balance), never as owner or operator;
 * - not for a user who disabled (`undelegate`, or the API's `refuseDelegation`), not on an expired
 *   delegation, not with a signature the user or the disable invalidated, not with a forged one;
 * - the user can still cancel their orders and end the delegation themselves;
 * - what it did shows in the events an operator alerts on (`Executed` naming it as delegatee).
 */
import { describe, expect, test } from 'vitest';
import { encodeFunctionData, parseEventLogs, type Address, type Hex } from 'viem';
import { oneClickRouterAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { type ChainWalletClient } from '../../src/chain/chain-client.ts';
import { delegateTypedData, oneClickDomain } from '../../src/chain/one-click-typed-data.ts';
import { SENDER_ROLE_SPECS } from '../../src/chain/operator-roles.ts';
import { testWallet, useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveUsdc, confirm, contracts, deadlineIn, depositUsdc, expectRevert, mUsdOf, musd, OrderStatus, Side, usdc, usdcOf } from '../chain/chain-test-helpers.ts';

const RELAYER_KEY = SENDER_ROLE_SPECS.relayer.devAccount;
const DAY = 86_400;
const ZERO = '0x0000000000000000000000000000000000000000';

let alice: ChainUser;
let bob: ChainUser;
let carol: ChainUser;
let attacker: ChainWalletClient;
let oneClick: Address;
let router: Address;
/** OneClickRouter's ABI with the StockRouter's errors, so forwarded reverts decode by name. */
const abi = [...oneClickRouterAbi, ...stockRouterAbi.filter((e) => e.type === 'error')] as const;

const f = useChainFixture(async () => {
  [alice, bob, carol] = f.users;
  attacker = testWallet(RELAYER_KEY.privateKey, f.chain, f.rpcUrl);
  oneClick = contracts(f).oneClickRouter;
  router = contracts(f).stockRouter;
});

const nonceFor = (user: Address) =>
  f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegationNonce', args: [user, RELAYER_KEY.address] });

/** `user` signs a delegation to the relayer (not submitted). */
async function sign(user: ChainUser, validFor = 600) {
  const deadline = await deadlineIn(f, validFor);
  const nonce = await nonceFor(user.address);
  const signature = await user.wallet.signTypedData(delegateTypedData(oneClickDomain(f.chainId, oneClick), { user: user.address, delegatee: RELAYER_KEY.address, nonce, deadline }));
  return { deadline, signature };
}

const submitArgs = (user: Address, s: { deadline: number; signature: Hex }) => [user, RELAYER_KEY.address, s.deadline, s.signature] as const;

async function delegate(user: ChainUser, s?: { deadline: number; signature: Hex }) {
  const signed = s ?? (await sign(user));
  return confirm(f, attacker.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: submitArgs(user.address, signed) }));
}

const asRelayer = (user: Address, data: Hex) => () =>
  f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi, functionName: 'execute', args: [user, data] });

async function execAsRelayer(user: Address, data: Hex) {
  const { request } = await asRelayer(user, data)();
  return confirm(f, attacker.writeContract(request));
}

describe('relayer key drill', () => {
  test('with a live delegation the relayer acts only as the user: nothing reaches the relayer, and every call is an Executed event naming it', async () => {
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('1000'));
    await delegate(alice);
    const relayerUsdc = await usdcOf(f, RELAYER_KEY.address);
    const relayerMusd = await mUsdOf(f, RELAYER_KEY.address);
    const aliceTotal = async () => (await usdcOf(f, alice.address)) * 10n ** 12n + (await mUsdOf(f, alice.address)).free + (await mUsdOf(f, alice.address)).locked;
    const before = await aliceTotal();

    // The worst it can take: withdraw everything, which pays the user's own wallet.
    const w = await execAsRelayer(alice.address, encodeFunctionData({ abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc('1000')] }));
    // A limit order for the user locks the user's own balance.
    const deadline = await deadlineIn(f, 3600);
    await approveUsdc(f, alice, usdc('100'));
    await execAsRelayer(alice.address, encodeFunctionData({ abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, usdc('100')] }));
    const placed = await execAsRelayer(alice.address, encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [c.stocks.AAPL, Side.Buy, 10n ** 17n, 200n * 10n ** 18n, 0, deadline] }));
    const orderId = parseEventLogs({ abi: stockRouterAbi, logs: placed.logs, eventName: 'OrderPlaced' })[0].args.orderId;
    expect((await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [orderId] })).user).toBe(alice.address);

    // Bound: value extracted by the relayer = 0, to the unit; the user's value is all still hers.
    expect(await usdcOf(f, RELAYER_KEY.address)).toBe(relayerUsdc);
    expect(await mUsdOf(f, RELAYER_KEY.address)).toEqual(relayerMusd);
    expect(await aliceTotal()).toBe(before);
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: w.logs, eventName: 'Executed' }).map((l) => l.args)).toEqual([
      { user: alice.address, delegatee: RELAYER_KEY.address, selector: '0xf3fef3a3' },
    ]);

    // Never owner or operator through a delegation, nor of the router itself.
    await expectRevert(asRelayer(alice.address, encodeFunctionData({ abi: stockRouterAbi, functionName: 'settleOrders', args: [[], []] })), 'NotOperator');
    await expectRevert(asRelayer(alice.address, encodeFunctionData({ abi: stockRouterAbi, functionName: 'listStock', args: [RELAYER_KEY.address] })), 'OwnableUnauthorizedAccount');
    await expectRevert(() => f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'setStockRouter', args: [RELAYER_KEY.address] }), 'OwnableUnauthorizedAccount');

    // The user exits on her own: cancels the order the relayer placed and ends the delegation.
    await confirm(f, alice.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [orderId] }));
    expect((await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [orderId] })).status).toBe(OrderStatus.Canceling);
    await confirm(f, alice.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'undelegate' }));
    await expectRevert(asRelayer(alice.address, encodeFunctionData({ abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, 1n] })), 'NotDelegatee', [alice.address, RELAYER_KEY.address]);
    // The lock (0.1 AAPL at 200 plus the 0.05 % fee) stays hers until the executor closes the cancel.
    expect((await mUsdOf(f, alice.address)).locked).toBe(musd('20.01'));
  });

  test('cannot act for a user who disabled (1ct/disable = refuseDelegation), nor re-enable them with what they signed before', async () => {
    const pending = await sign(bob); // signed, never submitted, in the attacker's hands
    await delegate(bob);
    // The API's disable while the relayer key was still the operator's: ends it and refuses the rest.
    await confirm(f, attacker.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [bob.address] }));
    const data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [1n] });
    await expectRevert(asRelayer(bob.address, data), 'NotDelegatee', [bob.address, RELAYER_KEY.address]);
    // Every signature the attacker holds is dead: the consumed one and the one never submitted.
    await expectRevert(() => f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: submitArgs(bob.address, pending) }), 'InvalidSigner');
  });

  test("cannot submit a delegation the user invalidated with undelegate, nor forge one", async () => {
    const pending = await sign(carol);
    const r = await confirm(f, carol.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'undelegate' }));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: r.logs, eventName: 'NoncesInvalidated' })[0].args).toEqual({ user: carol.address, nextNonce: 1n });
    await expectRevert(() => f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: submitArgs(carol.address, pending) }), 'InvalidSigner');
    // Its own signature over a delegation of carol recovers to the relayer, not carol.
    const deadline = await deadlineIn(f, 600);
    const forged = await attacker.signTypedData(delegateTypedData(oneClickDomain(f.chainId, oneClick), { user: carol.address, delegatee: RELAYER_KEY.address, nonce: 1n, deadline }));
    await expectRevert(
      () => f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [carol.address, RELAYER_KEY.address, deadline, forged] }),
      'InvalidSigner',
      [RELAYER_KEY.address, carol.address],
    );
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [carol.address] })).toBe(ZERO);
  });

  test('cannot use a delegation past its fixed 30 days, nor extend it with what the user signed before', async () => {
    // A signature still submittable after the delegation's end (its deadline is 40 days ahead).
    const signed = await sign(alice, 40 * DAY);
    const r = await delegate(alice, signed);
    const expiresAt = parseEventLogs({ abi: oneClickRouterAbi, logs: r.logs, eventName: 'Delegated' })[0].args.expiresAt;
    expect(expiresAt).toBe((await f.publicClient.getBlock({ blockNumber: r.blockNumber })).timestamp + BigInt(30 * DAY));
    const data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'withdraw', args: [contracts(f).cashToken, 1n] });
    // Live until then: the call reaches the StockRouter as alice (which refuses the unknown order).
    const probe = encodeFunctionData({ abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [999n] });
    await expectRevert(asRelayer(alice.address, probe), 'OrderNotOpen', [999n]);
    await f.testClient.increaseTime({ seconds: 30 * DAY + 1 });
    await f.testClient.mine({ blocks: 1 });
    await expectRevert(asRelayer(alice.address, data), 'DelegationExpired', [alice.address, expiresAt]);
    // The signature it already used cannot renew the delegation (its nonce is consumed): only a new one of the user's can.
    await expectRevert(
      () => f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: submitArgs(alice.address, signed) }),
      'InvalidSigner',
    );
    const { request } = await f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: submitArgs(alice.address, await sign(alice)) });
    const renewed = await confirm(f, attacker.writeContract(request));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: renewed.logs, eventName: 'Delegated' })[0].args.expiresAt).toBe(
      (await f.publicClient.getBlock({ blockNumber: renewed.blockNumber })).timestamp + BigInt(30 * DAY),
    );
  });

  test("cannot cancel or refuse another delegatee's delegation", async () => {
    const deadline = await deadlineIn(f, 600);
    const toOperator = await bob.wallet.signTypedData(delegateTypedData(oneClickDomain(f.chainId, oneClick), { user: bob.address, delegatee: f.operator.account.address, nonce: 0n, deadline }));
    await confirm(f, attacker.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [bob.address] }));
    await expectRevert(() => f.publicClient.simulateContract({ account: attacker.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'revokeDelegation', args: [bob.address] }), 'NotDelegatee', [bob.address, RELAYER_KEY.address]);
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [bob.address, f.operator.account.address, deadline, toOperator] }));
    await confirm(f, attacker.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [bob.address] }));
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [bob.address] })).toBe(f.operator.account.address);
  });
});
