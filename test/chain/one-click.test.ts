import { beforeEach, describe, expect, test } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  encodeFunctionData,
  hashTypedData,
  parseEventLogs,
  toFunctionSelector,
  type Address,
  type Hex,
} from 'viem';
import { oneClickRouterAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { toChainError } from '../../src/chain/chain-client.ts';
import { DELEGATION_LIFETIME_SECONDS, delegateDigest, delegateTypedData, oneClickDomain, verifyDelegation } from '../../src/chain/one-click-typed-data.ts';
import { ChainRevertError } from '../../src/errors/app-error.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveUsdc, confirm, contracts, deadlineIn, depositUsdc, expectRevert, mUsdOf, musd, OrderStatus, Side, usdc, ANY_BUY_PRICE } from './chain-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let oneClick: Address;
let router: Address;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
  oneClick = contracts(f).oneClickRouter;
  router = contracts(f).stockRouter;
});

/** How long every delegation lasts on chain: the router's fixed DELEGATION_LIFETIME, 30 days. */
const LIFETIME = 30 * 86_400;

/** The EIP-712 payload the API's `1ct/prepare` hands out, from the shared typed-data module. */
function delegatePayload(user: Address, delegatee: Address, nonce: bigint, deadline: number) {
  return delegateTypedData(oneClickDomain(f.chainId, oneClick), { user, delegatee, nonce, deadline });
}

async function nonceOf(user: Address): Promise<bigint> {
  return f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'nonces', args: [user] });
}

async function delegateOf(user: Address): Promise<Address> {
  return f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [user] });
}

/** `signer` signs a delegation of `user` to the operator; the operator submits it. */
async function enable(user: ChainUser, signer: ChainUser = user) {
  const deadline = await deadlineIn(f, 600);
  const payload = delegatePayload(user.address, f.operator.account.address, await nonceOf(user.address), deadline);
  const signature = await signer.wallet.signTypedData(payload);
  return { deadline, payload, signature };
}

/** The operator's `delegateBySig` with `args`, simulated: what it answers or how it reverts. */
function submitDelegation(args: readonly [Address, Address, number, Hex]) {
  return f.publicClient.simulateContract({ account: f.operator.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args });
}

function execute(user: Address, data: Hex, account = f.operator.account) {
  return f.publicClient.simulateContract({ account, address: oneClick, abi: oneClickRouterAbi, functionName: 'execute', args: [user, data] });
}

describe('delegation', () => {
  test('delegateBySig records the delegatee and consumes the nonce; the digest matches EIP-712', async () => {
    const { deadline, payload, signature } = await enable(alice);
    const digest = await f.publicClient.readContract({
      address: oneClick,
      abi: oneClickRouterAbi,
      functionName: 'delegateDigest',
      args: [alice.address, f.operator.account.address, 0n, deadline],
    });
    expect(digest).toBe(hashTypedData(payload));

    const receipt = await confirm(
      f,
      f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, f.operator.account.address, deadline, signature] }),
    );
    const minedAt = (await f.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'Delegated' })[0].args).toEqual({
      user: alice.address,
      delegatee: f.operator.account.address,
      nonce: 0n,
      deadline,
      expiresAt: minedAt + BigInt(LIFETIME),
    });
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegationExpiresAt', args: [alice.address] })).toBe(minedAt + BigInt(LIFETIME));
    expect(await delegateOf(alice.address)).toBe(f.operator.account.address);
    expect(await nonceOf(alice.address)).toBe(1n);

    // The same signature cannot be replayed: the nonce moved on.
    let replay: unknown;
    try {
      await f.publicClient.simulateContract({
        account: f.operator.account,
        address: oneClick,
        abi: oneClickRouterAbi,
        functionName: 'delegateBySig',
        args: [alice.address, f.operator.account.address, deadline, signature],
      });
    } catch (err) {
      replay = err;
    }
    expect((toChainError(replay) as ChainRevertError).errorName).toBe('InvalidSigner');
  });

  test("the typed-data module's digest is the contract's; its signature delegates on chain and an altered field reverts", async () => {
    const delegatee = f.operator.account.address;
    const deadline = await deadlineIn(f, 600);
    const nonce = await nonceOf(alice.address);
    const domain = oneClickDomain(f.chainId, oneClick);
    const message = { user: alice.address, delegatee, nonce, deadline };
    const onChain = await f.publicClient.readContract({
      address: oneClick,
      abi: oneClickRouterAbi,
      functionName: 'delegateDigest',
      args: [alice.address, delegatee, nonce, deadline],
    });
    expect(delegateDigest(domain, message)).toBe(onChain);
    const [, name, version, chainId, verifyingContract] = await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'eip712Domain' });
    expect({ name, version, chainId: Number(chainId), verifyingContract }).toEqual(domain);

    // The wallet signs the JSON the API answers; the server checks it as `1ct/enable` will.
    const typedData = JSON.parse(JSON.stringify(delegateTypedData(domain, message)));
    const signature = await alice.wallet.signTypedData(typedData);
    const block = await f.publicClient.getBlock();
    await verifyDelegation({ domain, message: typedData.message, signature, user: alice.address, delegatee, nowSeconds: Number(block.timestamp) });

    // Any field other than signed: the contract recovers another address.
    await expectRevert(() => submitDelegation([alice.address, delegatee, deadline + 1, signature]), 'InvalidSigner');
    await expectRevert(() => submitDelegation([alice.address, bob.address, deadline, signature]), 'InvalidSigner');
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, delegatee, deadline, signature] }));
    expect(await delegateOf(alice.address)).toBe(delegatee);
  });

  test('a signature from another wallet → InvalidSigner(recovered, expected)', async () => {
    const { deadline, signature } = await enable(alice, bob);
    await expectRevert(
      () => submitDelegation([alice.address, f.operator.account.address, deadline, signature]),
      'InvalidSigner',
      [bob.address, alice.address],
    );
    expect(await delegateOf(alice.address)).toBe('0x0000000000000000000000000000000000000000');
  });

  test('an expired deadline → SignatureExpired', async () => {
    const deadline = await deadlineIn(f, -1);
    const signature = await alice.wallet.signTypedData(delegatePayload(alice.address, f.operator.account.address, 0n, deadline));
    await expectRevert(
      () => submitDelegation([alice.address, f.operator.account.address, deadline, signature]),
      'SignatureExpired',
      [deadline],
    );
  });

  test('revokeDelegation by the delegatee and undelegate by the user end the delegation', async () => {
    const a = await enable(alice);
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, f.operator.account.address, a.deadline, a.signature] }));
    await expectRevert(
      () => f.publicClient.simulateContract({ account: bob.wallet.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'revokeDelegation', args: [alice.address] }),
      'NotDelegatee',
      [alice.address, bob.address],
    );
    const revoked = await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'revokeDelegation', args: [alice.address] }));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: revoked.logs, eventName: 'Undelegated' })[0].args).toEqual({
      user: alice.address,
      delegatee: f.operator.account.address,
    });
    await expectRevert(() => execute(alice.address, '0x'), 'NotDelegatee', [alice.address, f.operator.account.address]);

    const b = await enable(bob);
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [bob.address, f.operator.account.address, b.deadline, b.signature] }));
    await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'undelegate' }));
    expect(await delegateOf(bob.address)).toBe('0x0000000000000000000000000000000000000000');
    expect(await nonceOf(bob.address)).toBe(2n);
    // Undelegating with nothing delegated still advances the nonce (it never reverts).
    const again = await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'undelegate' }));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: again.logs }).map((l) => [l.eventName, l.args])).toEqual([['NoncesInvalidated', { user: bob.address, nextNonce: 3n }]]);
    expect(await nonceOf(bob.address)).toBe(3n);
  });

  test('the StockRouter target is set once', async () => {
    await expectRevert(
      () => f.publicClient.simulateContract({ account: f.operator.account, address: oneClick, abi: oneClickRouterAbi, functionName: 'setStockRouter', args: [router] }),
      'StockRouterAlreadySet',
      [],
    );
  });
});

describe('execute', () => {
  beforeEach(async () => {
    const { deadline, signature } = await enable(alice);
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, f.operator.account.address, deadline, signature] }));
  });

  test('forwards the user as the sender: deposit, order and cancel act for the user', async () => {
    const c = contracts(f);
    await approveUsdc(f, alice, usdc('500'));
    const depositData = encodeFunctionData({ abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, usdc('500')] });
    const receipt = await confirm(f, f.operator.writeContract((await execute(alice.address, depositData)).request));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs, eventName: 'Executed' })[0].args).toEqual({
      user: alice.address,
      delegatee: f.operator.account.address,
      selector: toFunctionSelector('deposit(address,uint256)'),
    });
    expect(await mUsdOf(f, alice.address)).toEqual({ free: musd('500'), locked: 0n });
    expect(await mUsdOf(f, f.operator.account.address)).toEqual({ free: musd('5000000'), locked: 0n });

    const deadline = await deadlineIn(f, 600);
    const placeData = encodeFunctionData({
      abi: stockRouterAbi,
      functionName: 'placeLimitOrder',
      args: [c.stocks.AAPL, Side.Buy, 10n ** 18n, 200n * 10n ** 18n, 0, deadline],
    });
    await confirm(f, f.operator.writeContract((await execute(alice.address, placeData)).request));
    const order = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [1n] });
    expect(order.user).toBe(alice.address);
    expect((await mUsdOf(f, alice.address)).locked).toBe(musd('200.1'));

    const cancelData = encodeFunctionData({ abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [1n] });
    await confirm(f, f.operator.writeContract((await execute(alice.address, cancelData)).request));
    expect((await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [1n] })).status).toBe(OrderStatus.Canceling);
  });

  test('StockRouter reverts are bubbled verbatim and decode with the StockRouter ABI', async () => {
    await depositUsdc(f, alice, usdc('10'));
    const deadline = await deadlineIn(f, 600);
    const data = encodeFunctionData({
      abi: stockRouterAbi,
      functionName: 'placeMarketOrder',
      args: [contracts(f).stocks.AAPL, Side.Buy, 0n, musd('11'), ANY_BUY_PRICE, deadline],
    });
    let caught: unknown;
    try {
      await execute(alice.address, data);
    } catch (err) {
      caught = err;
    }
    const reverted = (caught as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError;
    expect(reverted.raw).toBeDefined();
    const decoded = decodeErrorResult({ abi: stockRouterAbi, data: reverted.raw as Hex });
    expect(decoded.errorName).toBe('InsufficientBalance');
    expect(decoded.args).toEqual([musd('10'), musd('11')]);
    const mapped = toChainError(caught);
    expect(mapped).toBeInstanceOf(ChainRevertError);
    expect((mapped as ChainRevertError).errorName).toBe('InsufficientBalance');
  });

  test('only the delegatee may execute', async () => {
    await expectRevert(() => execute(alice.address, '0x', bob.wallet.account), 'NotDelegatee', [alice.address, bob.address]);
    await expectRevert(() => execute(bob.address, '0x'), 'NotDelegatee', [bob.address, f.operator.account.address]);
  });

  test('a delegation never grants owner or operator rights', async () => {
    // The operator (also the owner) delegates itself to bob: bob still cannot act as owner/operator.
    const owner = f.operator.account.address;
    const deadline = await deadlineIn(f, 600);
    const signature = await f.operator.signTypedData(delegatePayload(owner, bob.address, await nonceOf(owner), deadline));
    await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [owner, bob.address, deadline, signature] }));
    const listData = encodeFunctionData({ abi: stockRouterAbi, functionName: 'listStock', args: [bob.address] });
    let caught: unknown;
    try {
      await execute(owner, listData, bob.wallet.account);
    } catch (err) {
      caught = err;
    }
    expect((toChainError(caught) as ChainRevertError).errorName).toBe('OwnableUnauthorizedAccount');
    const settleData = encodeFunctionData({ abi: stockRouterAbi, functionName: 'settleOrders', args: [[], []] });
    caught = undefined;
    try {
      await execute(owner, settleData, bob.wallet.account);
    } catch (err) {
      caught = err;
    }
    expect((toChainError(caught) as ChainRevertError).errorName).toBe('NotOperator');
  });
});

describe('issue 43: cancellation, expiry and the direct owner', () => {
  const ZERO = '0x0000000000000000000000000000000000000000';
  const submit = (user: Address, delegatee: Address, deadline: number, signature: Hex, account = bob.wallet.account) =>
    f.publicClient.simulateContract({ account, address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [user, delegatee, deadline, signature] });
  const delegationNonce = (user: Address, delegatee: Address) =>
    f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegationNonce', args: [user, delegatee] });

  test("the user's undelegate kills a delegation signed and never submitted, with nothing delegated", async () => {
    const { deadline, signature } = await enable(alice);
    // Submittable by anyone before:
    await submit(alice.address, f.operator.account.address, deadline, signature);
    const receipt = await confirm(f, alice.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'undelegate' }));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: receipt.logs }).map((l) => [l.eventName, l.args])).toEqual([['NoncesInvalidated', { user: alice.address, nextNonce: 1n }]]);
    await expectRevert(() => submit(alice.address, f.operator.account.address, deadline, signature), 'InvalidSigner');
    expect(await delegateOf(alice.address)).toBe(ZERO);
  });

  test('a delegatee refuses the delegations to itself (1ct/disable), never one to another delegatee', async () => {
    const relayer = f.operator.account.address;
    const toRelayer = await enable(alice);
    const deadline = await deadlineIn(f, 600);
    const toBob = await alice.wallet.signTypedData(delegatePayload(alice.address, bob.address, 0n, deadline));
    // Anyone may refuse for itself: bob's refusal does not touch the relayer's signature.
    const refused = await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [alice.address] }));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: refused.logs }).map((l) => [l.eventName, l.args])).toEqual([
      ['DelegationsRefused', { user: alice.address, delegatee: relayer, nextNonce: 1n }],
    ]);
    await expectRevert(() => submit(alice.address, relayer, toRelayer.deadline, toRelayer.signature), 'InvalidSigner');
    expect(await delegationNonce(alice.address, relayer)).toBe(1n);
    expect(await nonceOf(alice.address)).toBe(0n);
    // The signature to bob still holds, and consuming it moves every delegatee's nonce on.
    await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, bob.address, deadline, toBob] }));
    expect(await delegateOf(alice.address)).toBe(bob.address);
    expect([await nonceOf(alice.address), await delegationNonce(alice.address, relayer), await delegationNonce(alice.address, bob.address)]).toEqual([1n, 2n, 1n]);
    // The relayer's refusal never ends bob's delegation.
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [alice.address] }));
    expect(await delegateOf(alice.address)).toBe(bob.address);
    // A fresh signature at the relayer's nonce delegates; the relayer's refusal then also ends it.
    const fresh = await alice.wallet.signTypedData(delegatePayload(alice.address, relayer, await delegationNonce(alice.address, relayer), deadline));
    // A gas limit of its own, not viem's bare estimate: bob's delegation's expiry is still stored, and
    // rewriting it costs 2,800 gas less when the estimate runs in the second that wrote it than when
    // the block is mined a second later (seen on a loaded machine: out of gas). The relayer adds a margin.
    await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, relayer, deadline, fresh], gas: 200_000n }));
    expect(await delegateOf(alice.address)).toBe(relayer);
    const ended = await confirm(f, f.operator.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [alice.address] }));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: ended.logs }).map((l) => l.eventName)).toEqual(['Undelegated', 'DelegationsRefused']);
    expect(await delegateOf(alice.address)).toBe(ZERO);
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegationExpiresAt', args: [alice.address] })).toBe(0n);
    await expectRevert(() => submit(alice.address, relayer, deadline, fresh), 'InvalidSigner');
  });

  test('a delegation lasts the fixed 30 days from its recording: execute refuses from expiresAt on; enabling again extends it', async () => {
    const relayer = f.operator.account.address;
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'DELEGATION_LIFETIME' })).toBe(LIFETIME);
    expect(DELEGATION_LIFETIME_SECONDS).toBe(LIFETIME);
    const deadline = await deadlineIn(f, 600);
    const sig = await alice.wallet.signTypedData(delegatePayload(alice.address, relayer, 0n, deadline));
    const r = await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, relayer, deadline, sig] }));
    const expiresAt = (await f.publicClient.getBlock({ blockNumber: r.blockNumber })).timestamp + BigInt(LIFETIME);
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegationExpiresAt', args: [alice.address] })).toBe(expiresAt);
    const cancelData = encodeFunctionData({ abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [999n] });
    const both = [...oneClickRouterAbi, ...stockRouterAbi.filter((e) => e.type === 'error')] as const;
    const run = () => f.publicClient.simulateContract({ account: f.operator.account, address: oneClick, abi: both, functionName: 'execute', args: [alice.address, cancelData] });
    // Live: the call reaches the StockRouter (which refuses the unknown order).
    await expectRevert(run, 'OrderNotOpen', [999n]);
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'activeDelegateOf', args: [alice.address] })).toEqual([relayer, expiresAt]);
    await f.testClient.setNextBlockTimestamp({ timestamp: expiresAt - 1n });
    await f.testClient.mine({ blocks: 1 });
    await expectRevert(run, 'OrderNotOpen', [999n]);
    await f.testClient.setNextBlockTimestamp({ timestamp: expiresAt });
    await f.testClient.mine({ blocks: 1 });
    await expectRevert(run, 'DelegationExpired', [alice.address, expiresAt]);
    expect(await f.publicClient.readContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'activeDelegateOf', args: [alice.address] })).toEqual([ZERO, expiresAt]);
    expect(await delegateOf(alice.address)).toBe(relayer);

    // Enabling again (a new signature, the next nonce) records a fresh 30 days from its own block.
    const again = await deadlineIn(f, 600);
    const renewed = await alice.wallet.signTypedData(delegatePayload(alice.address, relayer, 1n, again));
    const r2 = await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [alice.address, relayer, again, renewed] }));
    const expiresAgain = (await f.publicClient.getBlock({ blockNumber: r2.blockNumber })).timestamp + BigInt(LIFETIME);
    expect(expiresAgain).toBeGreaterThanOrEqual(expiresAt + BigInt(LIFETIME));
    expect(parseEventLogs({ abi: oneClickRouterAbi, logs: r2.logs, eventName: 'Delegated' })[0].args.expiresAt).toBe(expiresAgain);
    await expectRevert(run, 'OrderNotOpen', [999n]);
    // The user's own exit still works.
    await confirm(f, alice.wallet.writeContract({ address: oneClick, abi: oneClickRouterAbi, functionName: 'undelegate' }));
    expect(await delegateOf(alice.address)).toBe(ZERO);
  });

  test('acceptOwnership takes the direct caller only', async () => {
    const owner = await f.publicClient.readContract({ address: oneClick, abi: [{ type: 'function', name: 'owner', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] }], functionName: 'owner' });
    expect(owner).toBe(f.operator.account.address);
    const ownable = [
      { type: 'function', name: 'transferOwnership', stateMutability: 'nonpayable', inputs: [{ name: 'n', type: 'address' }], outputs: [] },
      { type: 'function', name: 'acceptOwnership', stateMutability: 'nonpayable', inputs: [], outputs: [] },
      { type: 'function', name: 'owner', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
      { type: 'error', name: 'OwnableUnauthorizedAccount', inputs: [{ name: 'account', type: 'address' }] },
    ] as const;
    await confirm(f, f.operator.writeContract({ address: oneClick, abi: ownable, functionName: 'transferOwnership', args: [bob.address] }));
    await expectRevert(() => f.publicClient.simulateContract({ account: alice.wallet.account, address: oneClick, abi: ownable, functionName: 'acceptOwnership' }), 'OwnableUnauthorizedAccount', [alice.address]);
    await confirm(f, bob.wallet.writeContract({ address: oneClick, abi: ownable, functionName: 'acceptOwnership' }));
    expect(await f.publicClient.readContract({ address: oneClick, abi: ownable, functionName: 'owner' })).toBe(bob.address);
  });
});
