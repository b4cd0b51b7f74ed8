/**
 * The perpetual venue's MarginVault on a real anvil: deposits credit the sender and emit
 * `Deposited`, the custom errors of a bad deposit, withdrawals paid only against the account's own
 * signature, relayed only by an operator, only once per id and within the cap of the period; and the venue deployed by ensureVenues beside the stock venue (its cash token as the
 * collateral, the perp operator granted, the demo deposit made from the demo wallet), reused on a
 * restart and deployed anew when the stock venue is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashTypedData, keccak256, parseEventLogs, toHex, zeroHash, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashTokenAbi, marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { ensureVenues, stockDeploymentOf, stockVenueDeployer, type VenueDeployer } from '../../src/chain/deploy-contracts.ts';
import { DEMO_PERP_DEPOSIT, grantPerpOperators, perpDeploymentOf, perpVenueDeployer, type PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { readDeploymentRecord, writeDeploymentRecord } from '../../src/chain/deployment-file.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { startChainFixture, revertEachTest, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, PERP_OPERATOR, perpOperatorWallet, relayWithdrawal, signVaultWithdrawal, vaultDeposit, vaultWithdraw, type VaultWithdrawalRequest } from '../support/perp-venue.ts';
import { WITHDRAWAL_FIELDS } from '@tokex/contract';
import { confirm, expectRevert, usdc, usdcOf } from './chain-test-helpers.ts';

let f: ChainFixture;
let perp: PerpDeployment;
let bob: ChainUser;
let carol: ChainUser;
let tmp: string;

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
  perp = await deployPerpVenue(f);
  [, bob, carol] = f.users;
  tmp = mkdtempSync(path.join(tmpdir(), 'margin-vault-'));
});
afterAll(async () => {
  await f?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});
revertEachTest(() => f);

const vault = () => perp.contracts.marginVault;
const read = <T>(functionName: string, args: readonly unknown[] = []): Promise<T> =>
  f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
const id = (s: string) => keccak256(toHex(s));

describe('the perp venue as deployed', () => {
  test('the vault takes the stock venue’s cash token, the perp operator pays, the deployer owns', async () => {
    expect(perp.contracts.collateralToken).toBe(f.deployment.contracts.cashToken);
    expect(perp.operator).toBe(OPERATOR_ACCOUNT.address);
    expect(perp.chainId).toBe(f.chainId);
    expect((await read<Address>('collateralToken')).toLowerCase()).toBe(f.deployment.contracts.cashToken.toLowerCase());
    expect(await read<Address>('owner')).toBe(OPERATOR_ACCOUNT.address);
    expect(await read<boolean>('isOperator', [PERP_OPERATOR.address])).toBe(true);
    expect(await read<boolean>('isOperator', [OPERATOR_ACCOUNT.address])).toBe(false);
    expect(await read<boolean>('isOperator', [ANVIL_ACCOUNTS[8].address])).toBe(false);
  });

  test('the demo wallet deposited 10,000 USDC itself, after the recorded deployment block', async () => {
    expect(DEMO_PERP_DEPOSIT).toBe(usdc('10000'));
    expect(await read<bigint>('depositedOf', [DEMO_WALLETS[0].address])).toBe(usdc('10000'));
    expect(await read<bigint>('totalDeposited')).toBe(usdc('10000'));
    expect(await usdcOf(f, vault())).toBe(usdc('10000'));
    // Minted for the deposit: the wallet keeps the stock venue's demo cash.
    expect(await usdcOf(f, DEMO_WALLETS[0].address)).toBe(usdc('100000'));
    const logs = await f.publicClient.getContractEvents({ address: vault(), abi: marginVaultAbi, eventName: 'Deposited', fromBlock: 0n });
    expect(logs).toHaveLength(1);
    expect(logs[0].args).toEqual({ account: DEMO_WALLETS[0].address, amount: usdc('10000') });
    const tx = await f.publicClient.getTransaction({ hash: logs[0].transactionHash });
    expect(tx.from.toLowerCase()).toBe(DEMO_WALLETS[0].address.toLowerCase());
    expect(logs[0].blockNumber).toBeGreaterThan(BigInt(perp.blockNumber));
  });
});

describe('deposit', () => {
  test('credits the sender, moves the tokens and emits Deposited', async () => {
    const before = await usdcOf(f, bob.address);
    const receipt = await vaultDeposit(f, perp, bob, usdc('250.5'));
    const events = parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'Deposited' });
    expect(events.map((e) => e.args)).toEqual([{ account: bob.address, amount: usdc('250.5') }]);
    expect(events[0].address.toLowerCase()).toBe(vault().toLowerCase());
    expect(await usdcOf(f, bob.address)).toBe(before - usdc('250.5'));
    expect(await usdcOf(f, vault())).toBe(usdc('10250.5'));
    expect(await read<bigint>('depositedOf', [bob.address])).toBe(usdc('250.5'));
    expect(await read<bigint>('totalDeposited')).toBe(usdc('10250.5'));
    await vaultDeposit(f, perp, bob, usdc('1'));
    expect(await read<bigint>('depositedOf', [bob.address])).toBe(usdc('251.5'));
  });

  test('zero reverts ZeroAmount; without (enough) approval InsufficientAllowance', async () => {
    const deposit = (user: ChainUser, amount: bigint) =>
      user.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'deposit', args: [amount] });
    await expectRevert(() => deposit(bob, 0n), 'ZeroAmount');
    await expectRevert(() => deposit(bob, usdc('5')), 'InsufficientAllowance', [bob.address, 0n, usdc('5')]);
    await f.publicClient.waitForTransactionReceipt({
      hash: await bob.wallet.writeContract({ address: perp.contracts.collateralToken, abi: cashTokenAbi, functionName: 'approve', args: [vault(), usdc('4')] }),
    });
    await expectRevert(() => deposit(bob, usdc('5')), 'InsufficientAllowance', [bob.address, usdc('4'), usdc('5')]);
    expect(await read<bigint>('depositedOf', [bob.address])).toBe(0n);
    expect(await read<bigint>('totalDeposited')).toBe(usdc('10000'));
  });
});

describe('withdraw', () => {
  const chainNow = async () => (await f.publicClient.getBlock({ blockTag: 'latest' })).timestamp;
  const requestOf = async (user: ChainUser, amount: bigint, withdrawalId: `0x${string}`, deadline?: bigint) => ({
    account: user.address,
    recipient: user.address,
    amount,
    withdrawalId,
    deadline: deadline ?? (await chainNow()) + 3_600n,
  });
  const pay = (request: VaultWithdrawalRequest, signature: `0x${string}`, by = perpOperatorWallet(f)) => relayWithdrawal(f, perp, request, signature, by);

  test("the operator relays the account's signed request once per id, emitting Withdrawn", async () => {
    const before = await usdcOf(f, carol.address);
    const wid = id('withdrawal-1');
    const receipt = await vaultWithdraw(f, perp, carol, usdc('75'), wid);
    const events = parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'Withdrawn' });
    expect(events.map((e) => e.args)).toEqual([{ account: carol.address, amount: usdc('75'), withdrawalId: wid }]);
    expect(await usdcOf(f, carol.address)).toBe(before + usdc('75'));
    expect(await usdcOf(f, vault())).toBe(usdc('9925'));
    expect(await read<boolean>('withdrawalPaid', [wid])).toBe(true);
    expect(await read<bigint>('withdrawnOf', [carol.address])).toBe(usdc('75'));
    expect(await read<bigint>('totalWithdrawn')).toBe(usdc('75'));

    const signed = async (amount: bigint, withdrawalId: `0x${string}`) => {
      const request = await requestOf(carol, amount, withdrawalId);
      return [request, await signVaultWithdrawal(f, perp, carol.privateKey, request)] as const;
    };
    await expectRevert(async () => pay(...(await signed(usdc('75'), wid))), 'WithdrawalAlreadyPaid', [wid]);
    await expectRevert(async () => pay(...(await signed(usdc('1'), zeroHash))), 'ZeroWithdrawalId');
    await expectRevert(async () => pay(...(await signed(0n, id('w-0')))), 'ZeroAmount');
    await expectRevert(async () => pay(...(await signed(usdc('9925.000001'), id('w-big')))), 'InsufficientVaultBalance', [usdc('9925'), usdc('9925.000001')]);
    expect(await usdcOf(f, carol.address)).toBe(before + usdc('75'));
    // Another id pays again, up to everything the vault holds.
    await vaultWithdraw(f, perp, carol, usdc('9925'), id('withdrawal-2'));
    expect(await usdcOf(f, vault())).toBe(0n);
  });

  test("the operator's key alone moves nothing: another signer, an altered field, a passed deadline are refused", async () => {
    const request = await requestOf(carol, usdc('10'), id('w-forged'));
    // Signed by the operator itself, and by another user, for carol's account.
    await expectRevert(async () => pay(request, await signVaultWithdrawal(f, perp, PERP_OPERATOR.privateKey, request)), 'InvalidWithdrawalSignature', [carol.address]);
    await expectRevert(async () => pay(request, await signVaultWithdrawal(f, perp, bob.privateKey, request)), 'InvalidWithdrawalSignature', [carol.address]);
    // Carol's signature, but the amount or the recipient changed after she signed.
    const good = await signVaultWithdrawal(f, perp, carol.privateKey, request);
    await expectRevert(() => pay({ ...request, amount: usdc('11') }, good), 'InvalidWithdrawalSignature', [carol.address]);
    await expectRevert(() => pay({ ...request, recipient: PERP_OPERATOR.address }, good), 'InvalidWithdrawalSignature', [carol.address]);
    // Signed for another vault (another domain).
    const elsewhere = await privateKeyToAccount(carol.privateKey).signTypedData({
      domain: { name: 'TokexPerp', version: '1', chainId: f.chainId, verifyingContract: f.deployment.contracts.cashier },
      types: { Withdrawal: WITHDRAWAL_FIELDS },
      primaryType: 'Withdrawal',
      message: request,
    });
    await expectRevert(() => pay(request, elsewhere), 'InvalidWithdrawalSignature', [carol.address]);
    // Past its deadline.
    const late = await requestOf(carol, usdc('10'), id('w-late'), (await chainNow()) - 1n);
    await expectRevert(async () => pay(late, await signVaultWithdrawal(f, perp, carol.privateKey, late)), 'WithdrawalExpired', [late.deadline]);
    expect(await read<bigint>('totalWithdrawn')).toBe(0n);
    expect(await usdcOf(f, vault())).toBe(usdc('10000'));
    // The digest the contract checks is the one viem signs.
    expect(await read<`0x${string}`>('withdrawalDigest', [request])).toBe(
      hashTypedData({ domain: { name: 'TokexPerp', version: '1', chainId: f.chainId, verifyingContract: vault() }, types: { Withdrawal: WITHDRAWAL_FIELDS }, primaryType: 'Withdrawal', message: request }),
    );
  });

  test('a signed recipient other than the account is paid, and named by WithdrawalRecipient', async () => {
    const request = { ...(await requestOf(carol, usdc('5'), id('w-to-bob'))), recipient: bob.address };
    const bobBefore = await usdcOf(f, bob.address);
    const hash = await pay(request, await signVaultWithdrawal(f, perp, carol.privateKey, request));
    const receipt = await f.publicClient.waitForTransactionReceipt({ hash });
    expect(parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'WithdrawalRecipient' }).map((e) => e.args)).toEqual([
      { withdrawalId: id('w-to-bob'), recipient: bob.address },
    ]);
    expect(await usdcOf(f, bob.address)).toBe(bobBefore + usdc('5'));
    expect(await read<bigint>('withdrawnOf', [carol.address])).toBe(usdc('5'));
  });

  test('the cap is a token bucket: 90 % raises the alert, a payment past the level waits exactly until enough has drained, and no window edge doubles it', async () => {
    const owner = (cap: bigint, period: bigint) =>
      f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [cap, period] });
    // 86.4 USDC a day drains 1,000 units (0.001 USDC) a second: every figure below is exact. Each
    // transaction's block time is pinned, so nothing drains between them but what the test says.
    const CAP = usdc('86.4');
    const at = (t: bigint) => f.testClient.setNextBlockTimestamp({ timestamp: t });
    const edge = ((await chainNow()) / 86_400n + 1n) * 86_400n;
    const T = edge - 100n;
    await at(T);
    const set = await f.publicClient.waitForTransactionReceipt({ hash: await owner(CAP, 86_400n) });
    expect(parseEventLogs({ abi: marginVaultAbi, logs: set.logs, eventName: 'WithdrawalCapSet' }).map((e) => e.args)).toEqual([{ cap: CAP, period: 86_400n }]);
    await at(T + 1n);
    const first = await vaultWithdraw(f, perp, carol, usdc('70'), id('cap-1'));
    expect(parseEventLogs({ abi: marginVaultAbi, logs: first.logs, eventName: 'WithdrawalCapNearlyReached' })).toEqual([]);
    // One second later the level is 69.999; 7.761 takes it to 77.76, 90 % of the cap: the alert.
    await at(T + 2n);
    const second = await vaultWithdraw(f, perp, carol, usdc('7.761'), id('cap-2'));
    const state = await f.publicClient.readContract({ address: vault(), abi: marginVaultAbi, functionName: 'withdrawalCap', blockNumber: second.blockNumber });
    expect(state).toEqual([CAP, 86_400n, T + 2n, usdc('77.76')]);
    expect(parseEventLogs({ abi: marginVaultAbi, logs: second.logs, eventName: 'WithdrawalCapNearlyReached' }).map((e) => e.args)).toEqual([
      { periodStart: T + 2n, withdrawn: usdc('77.76'), cap: CAP },
    ]);
    // At T + 3 the level is 77.759: 8.641 is left; 8.642 waits one second more, named in the error.
    const over = await requestOf(carol, usdc('8.642'), id('cap-3'));
    const overSig = await signVaultWithdrawal(f, perp, carol.privateKey, over);
    await at(T + 3n);
    await f.testClient.mine({ blocks: 1 });
    const atT3 = await f.publicClient.getBlockNumber();
    await expectRevert(
      () => f.publicClient.simulateContract({ account: perpOperatorWallet(f).account!, address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [over, overSig], blockNumber: atT3 }),
      'WithdrawalCapExceeded',
      [usdc('8.641'), usdc('8.642'), T + 4n],
    );
    await at(T + 4n);
    await pay(over, overSig).then((h) => f.publicClient.waitForTransactionReceipt({ hash: h })).then((r) => expect(r.status).toBe('success'));
    // Full now (86.4 at T + 4). The old fixed windows let a whole cap out again the second the UTC
    // day turned; the bucket lets out only what drained: 100 s × 0.001 = 0.1 at the edge.
    await at(edge);
    const atEdge = await requestOf(carol, usdc('0.100001'), id('cap-edge'));
    const atEdgeSig = await signVaultWithdrawal(f, perp, carol.privateKey, atEdge);
    const refused = await perpOperatorWallet(f).writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [atEdge, atEdgeSig], gas: 300_000n });
    const refusedReceipt = await f.publicClient.waitForTransactionReceipt({ hash: refused });
    expect(refusedReceipt.status).toBe('reverted');
    await expectRevert(
      () => f.publicClient.simulateContract({ account: perpOperatorWallet(f).account!, address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [atEdge, atEdgeSig], blockNumber: refusedReceipt.blockNumber }),
      'WithdrawalCapExceeded',
      [usdc('0.096'), usdc('0.100001'), edge + 5n],
    );
    // A whole period after the bucket was full it is empty again: the whole cap is paid at once.
    await at(T + 4n + 86_400n);
    const refill = await requestOf(carol, CAP, id('cap-refill'), T + 4n + 90_000n);
    await pay(refill, await signVaultWithdrawal(f, perp, carol.privateKey, refill)).then((h) => f.publicClient.waitForTransactionReceipt({ hash: h })).then((r) => expect(r.status).toBe('success'));
  });

  test("a vault upgraded from 0.2.0 counts its fixed window's total in full until that window ends, then the bucket drains", async () => {
    // The 0.2.0 layout (contracts/layouts/0.2.0.json): slot 8 the window's total, slot 9 packs the
    // period (bytes 0-7) and the window's start (bytes 8-15); 0.3.0 appended `_bucketAt` in slot 15
    // (bytes 9-16), zero on a vault upgraded in place. The state is written as an upgrade leaves it.
    const CAP = usdc('86.4');
    const at = (t: bigint) => f.testClient.setNextBlockTimestamp({ timestamp: t });
    const windowStart = ((await chainNow()) / 86_400n + 1n) * 86_400n;
    await at(windowStart + 1_000n);
    await f.publicClient.waitForTransactionReceipt({ hash: await f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [CAP, 86_400n] }) });
    const word = async (slot: bigint) => BigInt((await f.publicClient.getStorageAt({ address: vault(), slot: toHex(slot, { size: 32 }) }))!);
    const put = (slot: bigint, value: bigint) => f.testClient.setStorageAt({ address: vault(), index: toHex(slot, { size: 32 }), value: toHex(value, { size: 32 }) });
    const field = (w: bigint, offset: bigint, bytes: bigint, v: bigint) => (w & ~(((1n << (8n * bytes)) - 1n) << (8n * offset))) | (v << (8n * offset));
    await put(8n, usdc('50'));
    await put(9n, field(await word(9n), 8n, 8n, windowStart));
    await put(15n, field(await word(15n), 9n, 8n, 0n));
    // 1,000 s later nothing has drained: the window's 50 count in full, 36.4 is left.
    const over = await requestOf(carol, usdc('36.400001'), id('up-1'), windowStart + 5_000n);
    const overSig = await signVaultWithdrawal(f, perp, carol.privateKey, over);
    await at(windowStart + 2_000n);
    const refused = await perpOperatorWallet(f).writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [over, overSig], gas: 300_000n });
    const r = await f.publicClient.waitForTransactionReceipt({ hash: refused });
    expect(r.status).toBe('reverted');
    await expectRevert(
      () => f.publicClient.simulateContract({ account: perpOperatorWallet(f).account!, address: vault(), abi: marginVaultAbi, functionName: 'payWithdrawal', args: [over, overSig], blockNumber: r.blockNumber }),
      'WithdrawalCapExceeded',
      [usdc('36.4'), usdc('36.400001'), windowStart + 86_400n],
    );
    // From the first payment on, the bucket runs: full at 86.4 now, draining 0.001 a second.
    await at(windowStart + 2_001n);
    const ok = await requestOf(carol, usdc('36.4'), id('up-2'), windowStart + 5_000n);
    await pay(ok, await signVaultWithdrawal(f, perp, carol.privateKey, ok)).then((h) => f.publicClient.waitForTransactionReceipt({ hash: h })).then((x) => expect(x.status).toBe('success'));
    await at(windowStart + 2_101n);
    await f.testClient.mine({ blocks: 1 });
    expect(await read<readonly [bigint, bigint, bigint, bigint]>('withdrawalCap')).toEqual([CAP, 86_400n, windowStart + 2_101n, usdc('86.3')]);
  });

  test('more than a whole period\'s cap is refused for good (WithdrawalAboveCap); a zero period is refused; only the owner sets the cap', async () => {
    const big = await requestOf(carol, usdc('1000000.000001'), id('w-above'));
    await expectRevert(async () => pay(big, await signVaultWithdrawal(f, perp, carol.privateKey, big)), 'WithdrawalAboveCap', [usdc('1000000.000001'), usdc('1000000')]);
    await expectRevert(
      () => f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [usdc('1'), 0n] }),
      'InvalidWithdrawalPeriod',
    );
    await expectRevert(
      () => bob.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setWithdrawalCap', args: [2n ** 255n, 1n] }),
      'OwnableUnauthorizedAccount',
      [bob.address],
    );
  });

  test('only an operator relays; only the owner names operators', async () => {
    const request = await requestOf(bob, usdc('1'), id('w'));
    const signature = await signVaultWithdrawal(f, perp, bob.privateKey, request);
    // Bob holds his own signature, but relaying is the operator's: the vault has no user exit here.
    await expectRevert(() => pay(request, signature, bob.wallet), 'NotOperator', [bob.address]);
    await expectRevert(
      () => bob.wallet.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setOperator', args: [bob.address, true] }),
      'OwnableUnauthorizedAccount',
      [bob.address],
    );
    // The owner grants bob, then revokes the perp operator.
    const owner = (operator: Address, enabled: boolean) =>
      f.operator.writeContract({ address: vault(), abi: marginVaultAbi, functionName: 'setOperator', args: [operator, enabled] });
    const granted = await f.publicClient.waitForTransactionReceipt({ hash: await owner(bob.address, true) });
    expect(parseEventLogs({ abi: marginVaultAbi, logs: granted.logs, eventName: 'OperatorSet' }).map((e) => e.args)).toEqual([
      { operator: bob.address, enabled: true },
    ]);
    await confirm(f, pay(request, signature, bob.wallet));
    expect(await read<boolean>('withdrawalPaid', [id('w')])).toBe(true);
    await f.publicClient.waitForTransactionReceipt({ hash: await owner(PERP_OPERATOR.address, false) });
    const again = await requestOf(bob, usdc('1'), id('w2'));
    await expectRevert(async () => pay(again, await signVaultWithdrawal(f, perp, bob.privateKey, again)), 'NotOperator', [PERP_OPERATOR.address]);
  });
});

describe('deployment by ensureVenues', () => {
  const stockVenue = stockVenueDeployer({ symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [], options: { deployerOperator: true } });

  test('beside the stock venue, reused on restart, recorded and read back', async () => {
    const deploys: string[] = [];
    const counted = (d: VenueDeployer): VenueDeployer => ({ ...d, deploy: (c) => (deploys.push(d.venue), d.deploy(c)) });
    const perpVenue = counted(perpVenueDeployer({ operators: [PERP_OPERATOR.address] }));
    const { chainId, ...stock } = f.deployment;
    const first = await ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: { chainId, venues: { stock } }, venues: [counted(stockVenue), perpVenue] });
    expect(first.deployed).toEqual(['perp']);
    expect(first.record.venues.stock).toEqual(stock);
    const p = perpDeploymentOf(first.record)!;
    expect(p.contracts.collateralToken).toBe(f.deployment.contracts.cashToken);
    expect(p.contracts.marginVault).not.toBe(perp.contracts.marginVault);
    // No demo deposits asked: the new vault holds nothing.
    expect(await usdcOf(f, p.contracts.marginVault)).toBe(0n);

    // Written and read back: the perp section survives with its shape checked.
    const file = path.join(tmp, 'deployments', '31337.json');
    await writeDeploymentRecord(file, first.record);
    const reread = await readDeploymentRecord(file);
    expect(reread?.record).toEqual(first.record);
    expect(perpDeploymentOf(reread!.record)).toEqual(p);

    // A restart on the same chain: both venues live, nothing is deployed.
    const reasons: string[] = [];
    const second = await ensureVenues({
      publicClient: f.publicClient,
      walletClient: f.operator,
      record: reread!.record,
      venues: [counted(stockVenue), perpVenue],
      onDeploy: (v, r) => reasons.push(`${v}: ${r}`),
    });
    expect(second.deployed).toEqual([]);
    expect(second.record).toEqual(first.record);
    expect(deploys).toEqual(['perp']);

    // The stock venue's code gone: it is deployed anew, and the perp venue with it, on the new cash token.
    const gone = { ...stock, contracts: { ...stock.contracts, cashier: '0x000000000000000000000000000000000000dEaD' as Address } };
    const third = await ensureVenues({
      publicClient: f.publicClient,
      walletClient: f.operator,
      record: { chainId, venues: { stock: gone, perp: first.record.venues.perp } },
      venues: [counted(stockVenue), perpVenue],
      onDeploy: (v, r) => reasons.push(`${v}: ${r}`),
    });
    expect(third.deployed).toEqual(['stock', 'perp']);
    expect(reasons).toEqual(['stock: code gone', 'perp: dependency redeployed']);
    const newStock = stockDeploymentOf(third.record)!;
    expect(perpDeploymentOf(third.record)!.contracts.collateralToken).toBe(newStock.contracts.cashToken);
    expect(newStock.contracts.cashToken).not.toBe(f.deployment.contracts.cashToken);
  });

  test('grantPerpOperators makes a missing operator once', async () => {
    const other = ANVIL_ACCOUNTS[5].address;
    const grant = () => grantPerpOperators({ publicClient: f.publicClient, walletClient: f.operator, deployment: perp, accounts: [PERP_OPERATOR.address, other, other] });
    expect(await grant()).toEqual([other]);
    expect(await read<boolean>('isOperator', [other])).toBe(true);
    expect(await grant()).toEqual([]);
  });

  test('the perp venue without a stock venue before it is refused', async () => {
    await expect(
      ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: { chainId: f.chainId, venues: {} }, venues: [perpVenueDeployer({ operators: [] })] }),
    ).rejects.toThrow(/the perp venue needs the stock venue deployed first/);
  });
});
