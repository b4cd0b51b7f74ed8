/**
 * The approve flow and the deposit through the same shape, on a real anvil with the perp venue
 * deployed and the perp API over a real socket: prepare answers the unsigned transaction, the
 * wallet signs it, submit broadcasts it and answers it mined, and the chain shows the allowance and
 * the deposit. Every submission that is not exactly the expected transaction, signed by the key's
 * wallet, is refused and never broadcast (the wallet's nonce is unchanged).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import type { PerpClient, PreparedTransaction } from '@tokex/sdk';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { deployPerpVenue, startVaultApi } from '../support/perp-venue.ts';
import { refused } from '../support/perp-refusal.ts';
import { perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';

const USDC = 1_000_000n;

describe.each(perpHarnessVariants())('perp approve and deposit flow on anvil ($name)', (variant) => {
  let f: ChainFixture;
  let perp: PerpDeployment;
  let h: PerpHarness;
  let wallet: PrivateKeyAccount;
  let api: PerpClient;

  const nonce = () => f.publicClient.getTransactionCount({ address: wallet.address, blockTag: 'pending' });
  const allowance = () => f.publicClient.readContract({ address: perp.contracts.collateralToken, abi: erc20Abi, functionName: 'allowance', args: [wallet.address, perp.contracts.marginVault] });
  const deposited = () => f.publicClient.readContract({ address: perp.contracts.marginVault, abi: marginVaultAbi, functionName: 'depositedOf', args: [wallet.address] });
  /** Signs a transaction like the prepared one, with `change` applied. */
  const sign = (t: PreparedTransaction, change: Record<string, unknown> = {}, signer: PrivateKeyAccount = wallet) =>
    signer.signTransaction({
      type: 'eip1559', chainId: Number(t.chainId), to: t.to, data: t.data, value: BigInt(t.value), nonce: Number(t.nonce), gas: BigInt(t.gas),
      maxFeePerGas: BigInt(t.maxFeePerGas), maxPriorityFeePerGas: BigInt(t.maxPriorityFeePerGas), ...change,
    } as never);
  /** `signedTransaction` is refused with 10000 naming it, and nothing reaches the chain. */
  const refusedUnsent = async (kind: 'approve' | 'deposit', signedTransaction: string, reason: string) => {
    const before = await nonce();
    const r = await refused(api.post(`${kind}/submit`, { signedTransaction }));
    expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(r.msg).toContain('signedTransaction');
    expect(r.msg).toContain(reason);
    expect(await nonce()).toBe(before);
  };

  beforeAll(async () => {
    f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
    perp = await deployPerpVenue(f, { demoDeposit: false });
    h = await startVaultApi(variant, f, perp);
    wallet = privateKeyToAccount(f.users[1].privateKey);
    api = (await h.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] })).client;
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await f?.stop();
  });

  it('approve: prepare answers the unsigned approve of the vault, the signed one is broadcast and mined', async () => {
    const prepared = await api.post<{ transaction: PreparedTransaction; kind: string; amount: string; marginVault: string }>('approve/prepare', { address: wallet.address, amount: '250.5' });
    expect(prepared).toMatchObject({ kind: 'approve', amount: '250.5', marginVault: perp.contracts.marginVault });
    expect(prepared.transaction).toMatchObject({
      type: 'eip1559', chainId: f.chainId, from: wallet.address, to: perp.contracts.collateralToken, value: '0', nonce: await nonce(),
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [perp.contracts.marginVault, 250_500_000n] }),
    });
    const done = await api.post<any>('approve/submit', { signedTransaction: await sign(prepared.transaction) });
    expect(done).toMatchObject({ kind: 'approve', account: wallet.address.toLowerCase(), amount: '250.5', status: 'mined', blockNumber: expect.stringMatching(/^\d+$/) });
    expect(await allowance()).toBe(250_500_000n);
    expect(await api.get<any>(`approve/${done.txHash}`)).toEqual(done);
    // The same signed bytes again: the same transaction, followed, not a second one.
    const again = await api.post<any>('approve/submit', { signedTransaction: await sign(prepared.transaction) });
    expect(again).toEqual(done);
  });

  it('deposit: refused before the allowance covers it; then deposited through the same shape', async () => {
    const r = await refused(api.post('deposit/prepare', { address: wallet.address, amount: '300' }));
    expect(r).toMatchObject({ code: 10000 });
    expect(r.msg).toContain('approved for 250.5 only');
    const prepared = await api.post<{ transaction: PreparedTransaction }>('deposit/prepare', { address: wallet.address, amount: '200' });
    expect(prepared.transaction).toMatchObject({ to: perp.contracts.marginVault, data: encodeFunctionData({ abi: marginVaultAbi, functionName: 'deposit', args: [200n * USDC] }) });
    const before = await deposited();
    const done = await api.post<any>('deposit/submit', { signedTransaction: await sign(prepared.transaction) });
    expect(done).toMatchObject({ kind: 'deposit', amount: '200', status: 'mined' });
    expect((await deposited()) - before).toBe(200n * USDC);
    expect(await allowance()).toBe(50_500_000n);
    // An approve's hash is not a deposit.
    expect(await refused(api.get(`approve/${done.txHash}`))).toMatchObject({ code: 40000, httpStatus: 404 });
  });

  it('an approve submission that is not the expected approve is refused and not broadcast', async () => {
    const { transaction: t } = await api.post<{ transaction: PreparedTransaction }>('approve/prepare', { address: wallet.address, amount: '10' });
    const other = privateKeyToAccount(generatePrivateKey());
    await refusedUnsent('approve', await sign(t, { data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [other.address, 10n * USDC] }) }), 'another spender');
    await refusedUnsent('approve', await sign(t, { data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [other.address, 10n * USDC] }) }), 'not approve');
    await refusedUnsent('approve', await sign(t, { to: perp.contracts.marginVault as Address }), 'collateral token');
    await refusedUnsent('approve', await sign(t, { chainId: 1 }), 'chain 1');
    await refusedUnsent('approve', await sign(t, { value: 1n }), 'no value');
    await refusedUnsent('approve', await sign(t, {}, privateKeyToAccount(f.users[2].privateKey)), 'not signed by the wallet');
    await refusedUnsent('approve', await sign(t, { data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [perp.contracts.marginVault, 0n] }) }), 'nothing');
    await refusedUnsent('approve', '0x02deadbeef', 'not a signed transaction');
    await refusedUnsent('approve', 'hello', 'hex');
    const legacy = await wallet.signTransaction({ type: 'legacy', chainId: f.chainId, to: t.to, data: t.data, nonce: Number(t.nonce), gas: BigInt(t.gas), gasPrice: BigInt(t.maxFeePerGas) });
    await refusedUnsent('approve', legacy, 'EIP-1559');
    // A deposit's submit refuses an approve, and the other way round.
    await refusedUnsent('deposit', await sign(t), 'margin vault');
  });

  it('prepare for another wallet, a READ key, an unknown hash', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    expect(await refused(api.post('approve/prepare', { address: other.address, amount: '1' }))).toMatchObject({ code: 10000 });
    expect(await refused(api.post('approve/prepare', { address: wallet.address, amount: '1.0000001' }))).toMatchObject({ code: 10000 });
    const reader = (await h.key({ userAddress: wallet.address, permissions: ['READ'] })).client;
    const { transaction } = await api.post<{ transaction: PreparedTransaction }>('approve/prepare', { address: wallet.address, amount: '1' });
    const r = await refused(reader.post('approve/submit', { signedTransaction: await sign(transaction) }));
    expect(r).toMatchObject({ code: 30001, httpStatus: 403 });
    expect(await refused(api.get(`deposit/0x${'ab'.repeat(32)}`))).toMatchObject({ code: 40000 });
  });
});
