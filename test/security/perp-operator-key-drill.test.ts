/**
 * Key-compromise drill: the perpetual operator's key (docs/security.md, "Perpetual operator key").
 * The drill takes the key the embedded stack's perp-operator role signs with and does the worst the
 * MarginVault allows it, on a real anvil: it can take nothing from the vault on its own (before 0.2.0
 * one `withdraw(attacker, balanceOf(vault), id)` took every trader's collateral), it cannot replay or
 * redirect what users signed, and even with a stream of valid signatures at its disposal it pays out
 * at most the cap of the period, having raised the alert event first. Rotating the key (the owner's
 * `setOperator`) leaves the users' signed requests payable by the new key, and every user leaves
 * with its whole deposit.
 */
import { encodeFunctionData, keccak256, parseAbi, parseEventLogs, toHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { createChainWallet } from '../../src/chain/chain-client.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { confirm, expectRevert, usdc, usdcOf } from '../chain/chain-test-helpers.ts';
import { testWallet, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, PERP_OPERATOR, perpOperatorWallet, relayWithdrawal, signVaultWithdrawal, vaultDeposit, type VaultWithdrawalRequest } from '../support/perp-venue.ts';

let f: ChainFixture;
let perp: PerpDeployment;
let victims: ChainUser[];
let attacker: ChainUser;
/** Each victim's wallet USDC once its 5,000 USDC are in the vault: what it holds when it has left with all of them is this + 5,000. */
const walletAfterDeposit = new Map<string, bigint>();

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
  // 10 s into the next UTC day: the vault's cap window (a day) cannot roll over while the drill runs.
  const today = (await f.publicClient.getBlock()).timestamp / 86_400n;
  await f.testClient.setNextBlockTimestamp({ timestamp: (today + 1n) * 86_400n + 10n });
  await f.testClient.mine({ blocks: 1 });
  perp = await deployPerpVenue(f);
  const [, a, b, c] = f.users;
  victims = [a, b];
  attacker = c;
  for (const v of victims) await vaultDeposit(f, perp, v, usdc('5000'));
  for (const v of victims) walletAfterDeposit.set(v.address, await usdcOf(f, v.address));
});
afterAll(async () => {
  await f?.stop();
});

const vault = () => perp.contracts.marginVault;
const id = (s: string) => keccak256(toHex(s));
const chainNow = async () => (await f.publicClient.getBlock({ blockTag: 'latest' })).timestamp;
const read = <T>(functionName: string, args: readonly unknown[] = []) =>
  f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: functionName as never, args: args as never }) as Promise<T>;

describe('the perpetual operator key, stolen', () => {
  test('takes nothing on its own: the 0.1.0 drain call is gone, and forged or altered requests are refused', async () => {
    const stolen = perpOperatorWallet(f);
    const held = await usdcOf(f, vault());
    expect(held).toBe(usdc('20000'));
    // The one-call drain of 0.1.0: the selector no longer exists on the vault.
    const legacy = parseAbi(['function withdraw(address account, uint256 amount, bytes32 withdrawalId)']);
    const drain = await stolen.sendTransaction({
      to: vault(),
      data: encodeFunctionData({ abi: legacy, functionName: 'withdraw', args: [attacker.address, held, id('drain')] }),
      gas: 200_000n,
    });
    expect((await f.publicClient.waitForTransactionReceipt({ hash: drain })).status).toBe('reverted');
    // Each victim's whole deposit, to the attacker, signed by the operator key itself.
    for (const v of victims) {
      const request: VaultWithdrawalRequest = { account: v.address, recipient: attacker.address, amount: usdc('5000'), withdrawalId: id(`steal-${v.address}`), deadline: (await chainNow()) + 600n };
      const forged = await signVaultWithdrawal(f, perp, PERP_OPERATOR.privateKey, request);
      await expectRevert(() => stolen.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [request, forged] }), 'InvalidWithdrawalSignature', [v.address]);
    }
    // A victim's genuine small request, rewritten: more money, or the attacker as recipient.
    const v = victims[0];
    const genuine: VaultWithdrawalRequest = { account: v.address, recipient: v.address, amount: usdc('1'), withdrawalId: id('genuine'), deadline: (await chainNow()) + 600n };
    const sig = await signVaultWithdrawal(f, perp, v.privateKey, genuine);
    for (const altered of [{ ...genuine, amount: usdc('5000') }, { ...genuine, recipient: attacker.address }, { ...genuine, withdrawalId: id('other') }]) {
      await expectRevert(() => stolen.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [altered, sig] }), 'InvalidWithdrawalSignature', [v.address]);
    }
    // Relayed as signed, it pays the victim, once.
    await confirm(f, relayWithdrawal(f, perp, genuine, sig, stolen));
    await expectRevert(() => stolen.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [genuine, sig] }), 'WithdrawalAlreadyPaid', [genuine.withdrawalId]);
    expect(await usdcOf(f, attacker.address)).toBe(usdc('100000'));
    expect(await usdcOf(f, vault())).toBe(held - usdc('1'));
  });

  test('with valid signatures to relay (a compromised engine and signing path) it pays at most the cap, after the alert', async () => {
    const stolen = perpOperatorWallet(f);
    // A venue sized cap: 2,000 USDC a day on this vault. Every block of the flood is pinned to the
    // same second, so the bucket drains nothing between them: the bound is exact.
    const T = (await chainNow()) + 10n;
    await f.testClient.setNextBlockTimestamp({ timestamp: T });
    const setCap = await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [usdc('2000'), 86_400n] });
    const capSet = await f.publicClient.waitForTransactionReceipt({ hash: setCap });
    // What the first drill paid still counts (less what drained since): read at the block that set the cap.
    const [, , readAt, already] = (await f.publicClient.readContract({
      address: vault(), abi: marginVaultAbi, functionName: 'withdrawalCap', blockNumber: capSet.blockNumber,
    })) as readonly [bigint, bigint, bigint, bigint];
    expect(readAt).toBe(T);
    expect(already).toBeLessThanOrEqual(usdc('1'));
    const before = await usdcOf(f, vault());
    let paid = 0n;
    const alerts: unknown[] = [];
    let refusedAt: bigint | undefined;
    for (let i = 0; i < 30; i++) {
      const v = victims[i % 2];
      const request: VaultWithdrawalRequest = { account: v.address, recipient: v.address, amount: usdc('150'), withdrawalId: id(`flood-${i}`), deadline: T + 600n };
      const signature = await signVaultWithdrawal(f, perp, v.privateKey, request);
      await f.testClient.setNextBlockTimestamp({ timestamp: T });
      // Sent with a fixed gas limit and judged by its receipt: the block's time is the pinned one.
      const hash = await stolen.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [request, signature], gas: 300_000n });
      const receipt = await f.publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status === 'reverted') {
        refusedAt = BigInt(i);
        // Why, replayed at the block it reverted in (that block's time, that block's state): what is
        // left, and when 150 fits (ceil of the excess at 2,000 a day).
        const excess = already + paid + usdc('150') - usdc('2000');
        await expectRevert(
          () => f.publicClient.simulateContract({ account: stolen.account!, address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [request, signature], blockNumber: receipt.blockNumber }),
          'WithdrawalCapExceeded',
          [usdc('2000') - already - paid, usdc('150'), T + (excess * 86_400n + usdc('2000') - 1n) / usdc('2000')],
        );
        break;
      }
      alerts.push(...parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'WithdrawalCapNearlyReached' }).map((e) => e.args));
      paid += request.amount;
    }
    // At most 1 USDC counted from the first drill: 13 × 150 = 1,950 fit under the cap, the 14th does not.
    expect(refusedAt).toBe(13n);
    expect(paid).toBe(usdc('1950'));
    expect(paid + already).toBeLessThanOrEqual(usdc('2000'));
    expect(await usdcOf(f, vault())).toBe(before - paid);
    // The alert came once, when the level crossed 90 % (1,800 + what was left of the first drill's 1).
    expect(alerts).toEqual([{ periodStart: T, withdrawn: already + usdc('1800'), cap: usdc('2000') }]);
  });

  test('rotation: the owner revokes the stolen key, a new operator relays what users signed, and every user leaves with its whole deposit', async () => {
    const revoke = await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setOperator', args: [PERP_OPERATOR.address, false] });
    await f.publicClient.waitForTransactionReceipt({ hash: revoke });
    const fresh = ANVIL_ACCOUNTS[8];
    const grant = await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setOperator', args: [fresh.address, true] });
    await f.publicClient.waitForTransactionReceipt({ hash: grant });
    const v = victims[1];
    const request: VaultWithdrawalRequest = { account: v.address, recipient: v.address, amount: usdc('10'), withdrawalId: id('after-rotation'), deadline: (await chainNow()) + 600n };
    const signature = await signVaultWithdrawal(f, perp, v.privateKey, request);
    await expectRevert(
      () => perpOperatorWallet(f).writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [request, signature] }),
      'NotOperator',
      [PERP_OPERATOR.address],
    );
    const wallet = testWallet(fresh.privateKey as Hex, f.chain, f.rpcUrl);
    // The cap of the day is spent: the owner raises it for the drill's last payments.
    await f.publicClient.waitForTransactionReceipt({ hash: await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [usdc('20000'), 86_400n] }) });
    const before = await usdcOf(f, v.address);
    await confirm(f, relayWithdrawal(f, perp, request, signature, wallet));
    expect(await usdcOf(f, v.address)).toBe(before + usdc('10'));

    // Users can still exit: each victim signs a withdrawal of everything of its deposit not yet paid
    // back (the engine holds no trade of theirs here), the new operator relays it, and each wallet
    // ends with all 5,000 USDC it put in; the vault keeps only what was not the victims'.
    const vaultBefore = await usdcOf(f, vault());
    let returned = 0n;
    for (const u of victims) {
      const rest = walletAfterDeposit.get(u.address)! + usdc('5000') - (await usdcOf(f, u.address));
      expect(rest).toBeGreaterThan(0n);
      const exit: VaultWithdrawalRequest = { account: u.address, recipient: u.address, amount: rest, withdrawalId: id(`exit-${u.address}`), deadline: (await chainNow()) + 600n };
      await confirm(f, relayWithdrawal(f, perp, exit, await signVaultWithdrawal(f, perp, u.privateKey, exit), wallet));
      expect(await usdcOf(f, u.address)).toBe(walletAfterDeposit.get(u.address)! + usdc('5000'));
      returned += rest;
    }
    // 10,000 deposited, 1 + 1,950 + 10 paid before: 8,039 paid now.
    expect(returned).toBe(usdc('8039'));
    expect(await usdcOf(f, vault())).toBe(vaultBefore - returned);
  });
});
