/**
 * The approve/deposit relay's edges that test/perp/perp-vault-transactions.test.ts leaves out, on a real
 * anvil with the perp venue deployed and the perp API over a real socket: a node's refusal (a used
 * nonce, a wallet without gas money) answered as 10000 with a short reason; a deposit the chain
 * reverts answered `reverted`, not as an error; a transaction not mined within the wait answered
 * `pending` and then `mined` by GET once its block exists; a key bound to no wallet refused; a dead
 * RPC answered 50001 with nothing broadcast; and no signed transaction in any log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { chainTransport } from '../../src/chain/chain-client.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { PerpClient, PreparedTransaction } from '@tokex/sdk';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { refused } from '../support/perp-refusal.ts';
import { perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';
import { deployPerpVenue, startVaultApi } from '../support/perp-venue.ts';

const USDC = 1_000_000n;
/** Short, so the test that mines by hand does not wait long for its `pending`. */
const WAIT_MS = 1_500;

/** The envelope's `msg` out of PerpApiError's message (`perp API <code>: <msg> (requestId …)`). */
const envelopeMsg = (message: string) => message.replace(/^perp API \d+: /, '').replace(/ \(requestId [^)]*\)$/, '');

interface Tracked {
  txHash: string;
  kind: string;
  account: string;
  amount: string;
  status: string;
  blockNumber: string | null;
  submittedAt: number;
}

describe.each(perpHarnessVariants())('perp approve flow edges on anvil ($name)', (variant) => {
  let f: ChainFixture;
  let perp: PerpDeployment;
  let h: PerpHarness;
  let down: PerpHarness;
  let wallet: PrivateKeyAccount;
  let api: PerpClient;
  /** Every line either API logged. */
  const lines: string[] = [];
  /** Every signed transaction this file sent to the API: none may reach a log line. */
  const sent: string[] = [];
  const logger = () => createLogger({ level: 'debug', destination: { write: (s: string) => lines.push(s) } as unknown as NodeJS.WritableStream });

  const nonce = (address = wallet.address) => f.publicClient.getTransactionCount({ address, blockTag: 'pending' });
  const deposited = () => f.publicClient.readContract({ address: perp.contracts.marginVault, abi: marginVaultAbi, functionName: 'depositedOf', args: [wallet.address] });
  const allowance = () => f.publicClient.readContract({ address: perp.contracts.collateralToken, abi: erc20Abi, functionName: 'allowance', args: [wallet.address, perp.contracts.marginVault] });
  const sign = async (t: PreparedTransaction, change: Record<string, unknown> = {}, signer: PrivateKeyAccount = wallet) => {
    const raw = await signer.signTransaction({
      type: 'eip1559', chainId: Number(t.chainId), to: t.to, data: t.data, value: BigInt(t.value), nonce: Number(t.nonce), gas: BigInt(t.gas),
      maxFeePerGas: BigInt(t.maxFeePerGas), maxPriorityFeePerGas: BigInt(t.maxPriorityFeePerGas), ...change,
    } as never);
    sent.push(raw);
    return raw;
  };
  const approveData = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [perp.contracts.marginVault, amount] });

  beforeAll(async () => {
    f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
    perp = await deployPerpVenue(f, { demoDeposit: false });
    h = await startVaultApi(variant, f, perp, { logger: logger(), waitMs: WAIT_MS });
    // The same API in front of an RPC that does not answer (nothing listens on port 1).
    const dead = createPublicClient({ chain: f.chain, transport: chainTransport('http://127.0.0.1:1', 1_000) });
    down = await startVaultApi(variant, f, perp, { logger: logger(), waitMs: WAIT_MS, publicClient: dead });
    wallet = privateKeyToAccount(f.users[1].privateKey);
    api = (await h.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] })).client;
  }, 120_000);
  afterAll(async () => {
    await f?.testClient.setAutomine(true).catch(() => undefined);
    await h?.stop();
    await down?.stop();
    await f?.stop();
  });

  it('a used nonce: the node refuses it, answered 10000 naming signedTransaction in a few words', async () => {
    const { transaction: t } = await api.post<{ transaction: PreparedTransaction }>('approve/prepare', { address: wallet.address, amount: '5' });
    const done = await api.post<Tracked>('approve/submit', { signedTransaction: await sign(t) });
    expect(done).toMatchObject({ status: 'mined', amount: '5' });
    expect(await allowance()).toBe(5n * USDC);
    const before = await nonce();
    // Another approve (other bytes, so not the tracked one) with the nonce the first one used.
    const reused = await sign(t, { data: approveData(6n * USDC) });
    const r = await refused(api.post('approve/submit', { signedTransaction: reused }));
    expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(envelopeMsg(r.msg)).toBe('signedTransaction: the node refused it: its nonce is already used');
    expect(await nonce()).toBe(before);
    expect(await allowance()).toBe(5n * USDC);
  });

  it('a wallet without gas money: the node refuses it, nothing is tracked', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    const client = (await h.key({ userAddress: poor.address, permissions: ['READ', 'TRADE'] })).client;
    const fees = await f.publicClient.estimateFeesPerGas();
    const raw = await poor.signTransaction({
      type: 'eip1559', chainId: f.chainId, to: perp.contracts.collateralToken, data: approveData(USDC), value: 0n, nonce: 0, gas: 100_000n,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    sent.push(raw);
    const r = await refused(client.post('approve/submit', { signedTransaction: raw }));
    expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(envelopeMsg(r.msg)).toBe('signedTransaction: the node refused it: the wallet cannot pay its gas');
    expect(await nonce(poor.address)).toBe(0);
  });

  it('a deposit the chain reverts answers status reverted with its block, and moves nothing', async () => {
    // The wallet signs a deposit above its allowance (5) by hand with a gas limit of its own: submit
    // does not check the allowance (prepare does), the chain does.
    const { transaction: t } = await api.post<{ transaction: PreparedTransaction }>('deposit/prepare', { address: wallet.address, amount: '5' });
    const before = await deposited();
    const raw = await sign(t, { data: encodeFunctionData({ abi: marginVaultAbi, functionName: 'deposit', args: [100n * USDC] }), gas: 150_000n });
    const done = await api.post<Tracked>('deposit/submit', { signedTransaction: raw });
    const receipt = await f.publicClient.getTransactionReceipt({ hash: done.txHash as Hex });
    expect(receipt.status).toBe('reverted');
    expect(done).toMatchObject({ kind: 'deposit', account: wallet.address.toLowerCase(), amount: '100', status: 'reverted', blockNumber: receipt.blockNumber.toString() });
    expect(await deposited()).toBe(before);
    expect(await allowance()).toBe(5n * USDC);
    expect(await api.get<Tracked>(`deposit/${done.txHash}`)).toEqual(done);
  });

  it('not mined within the wait: answered pending, then mined by GET once its block exists', async () => {
    await f.testClient.setAutomine(false);
    try {
      const { transaction: t } = await api.post<{ transaction: PreparedTransaction }>('approve/prepare', { address: wallet.address, amount: '7.25' });
      const started = Date.now();
      const pending = await api.post<Tracked>('approve/submit', { signedTransaction: await sign(t) });
      expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 100);
      expect(pending).toMatchObject({ kind: 'approve', amount: '7.25', status: 'pending', blockNumber: null });
      expect(await api.get<Tracked>(`approve/${pending.txHash}`)).toEqual(pending);
      expect(await allowance()).toBe(5n * USDC);
      await f.testClient.mine({ blocks: 1 });
      const block = await f.publicClient.getBlockNumber({ cacheTime: 0 });
      expect(await api.get<Tracked>(`approve/${pending.txHash}`)).toEqual({ ...pending, status: 'mined', blockNumber: block.toString() });
      expect(await allowance()).toBe(7_250_000n);
    } finally {
      await f.testClient.setAutomine(true);
    }
  });

  it('a key bound to no wallet can neither prepare nor submit (403 30001)', async () => {
    const unbound = (await h.key({ userAddress: null, permissions: ['READ', 'TRADE'] })).client;
    expect(await refused(unbound.post('approve/prepare', { address: wallet.address, amount: '1' }))).toMatchObject({ code: 30001, httpStatus: 403 });
    const { transaction: t } = await api.post<{ transaction: PreparedTransaction }>('approve/prepare', { address: wallet.address, amount: '1' });
    const before = await nonce();
    expect(await refused(unbound.post('approve/submit', { signedTransaction: await sign(t) }))).toMatchObject({ code: 30001, httpStatus: 403 });
    expect(await nonce()).toBe(before);
  });

  it('an RPC that does not answer: 50001 for prepare and submit, nothing broadcast', async () => {
    const client = (await down.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] })).client;
    expect(await refused(client.post('approve/prepare', { address: wallet.address, amount: '1' }))).toMatchObject({ code: 50001, httpStatus: 503 });
    expect(await refused(client.post('deposit/prepare', { address: wallet.address, amount: '1' }))).toMatchObject({ code: 50001, httpStatus: 503 });
    const { transaction: t } = await api.post<{ transaction: PreparedTransaction }>('approve/prepare', { address: wallet.address, amount: '1' });
    const before = await nonce();
    expect(await refused(client.post('approve/submit', { signedTransaction: await sign(t) }))).toMatchObject({ code: 50001, httpStatus: 503 });
    expect(await nonce()).toBe(before);
  });

  it('no signed transaction, signature or key reaches a log line', async () => {
    expect(sent.length).toBeGreaterThanOrEqual(7);
    const log = lines.join('').toLowerCase();
    expect(log).toContain('dependency unavailable'); // the 50001 answers were logged
    for (const raw of sent) {
      expect(log).not.toContain(raw.slice(2, 66).toLowerCase());
      expect(log).not.toContain(raw.slice(-64).toLowerCase()); // the tail holds the signature's s
    }
    expect(log).not.toContain(f.users[1].privateKey.slice(2).toLowerCase());
  });
});
