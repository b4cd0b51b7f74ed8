/**
 * The chain layer's sender on a real anvil: workers of one process that send with one key share
 * one nonce sequence (no gap, no collision), and the sequence survives a dropped transaction, a
 * replacement after a timeout and a restart (a new registry reading the nonce from the chain).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestClient, type Hex, type TestClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { chainTransport, createChainClients, createChainWallet, type ChainPublicClient } from '../../src/chain/chain-client.ts';
import { createSenderRegistry, senderFor, TxDroppedError, type SenderLogger, type TxRequest } from '../../src/chain/tx-sender.ts';

const KEY = ANVIL_ACCOUNTS[5];
const OTHER_KEY = ANVIL_ACCOUNTS[4];

let anvil: AnvilHandle;
let testClient: TestClient<'anvil'>;

/** A fresh public client for the node, as a separately wired worker would make one. */
function client(): ChainPublicClient {
  return createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, pollingIntervalMs: 20 }).publicClient;
}

/** A plain call to the sender itself: the nonce is all these tests look at. */
const ping = (data: Hex = '0x'): TxRequest => ({ to: KEY.address, data, gas: 30_000n });

async function nonceOf(publicClient: ChainPublicClient, hash: Hex): Promise<number> {
  return (await publicClient.getTransaction({ hash })).nonce;
}

function collectingLogger() {
  const entries: Array<{ level: 'info' | 'warn'; obj: Record<string, unknown>; msg: string }> = [];
  const logger = {
    info: (obj: Record<string, unknown>, msg: string) => entries.push({ level: 'info', obj, msg }),
    warn: (obj: Record<string, unknown>, msg: string) => entries.push({ level: 'warn', obj, msg }),
  } as unknown as SenderLogger;
  return { logger, entries };
}

async function waitUntil(cond: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('waitUntil: condition not reached');
}

beforeAll(async () => {
  anvil = await startAnvil({ port: 0, chainId: ANVIL_CHAIN_ID });
  testClient = createTestClient({ mode: 'anvil', chain: client().chain, transport: chainTransport(anvil.rpcUrl) });
});
afterAll(async () => {
  await anvil?.stop();
});
beforeEach(async () => {
  await testClient.setAutomine(true);
});

describe('senderFor', () => {
  it('answers one sender per key and node, whether given the key or an account', () => {
    const publicClient = client();
    const a = senderFor({ publicClient, privateKey: KEY.privateKey });
    const b = senderFor({ publicClient: client(), account: privateKeyToAccount(KEY.privateKey) });
    const c = senderFor({ publicClient, privateKey: OTHER_KEY.privateKey });
    expect(b).toBe(a);
    expect(a.address).toBe(KEY.address);
    expect(c).not.toBe(a);
    expect(c.address).toBe(OTHER_KEY.address);
    expect(() => senderFor({ publicClient })).toThrow(/either a private key or an account/);
    expect(() => senderFor({ publicClient, privateKey: KEY.privateKey, account: privateKeyToAccount(KEY.privateKey) })).toThrow(
      /either a private key or an account/,
    );
  });

  it('gives two concurrent workers consecutive nonces with no gap and no collision', async () => {
    const publicClient = client();
    const start = await publicClient.getTransactionCount({ address: KEY.address });
    // Two independent workers, each wiring its own client and asking for the key's sender.
    const worker = async (tag: string, n: number) => {
      const sender = senderFor({ publicClient: client(), privateKey: KEY.privateKey });
      return Promise.all(Array.from({ length: n }, (_, i) => sender.send(ping(`0x${tag}${i.toString(16).padStart(2, '0')}` as Hex))));
    };
    const [settlements, cash] = await Promise.all([worker('aa', 12), worker('bb', 12)]);
    const receipts = [...settlements, ...cash];
    expect(receipts.every((r) => r.status === 'success')).toBe(true);
    const nonces = (await Promise.all(receipts.map((r) => nonceOf(publicClient, r.transactionHash)))).sort((x, y) => x - y);
    expect(nonces).toEqual(Array.from({ length: 24 }, (_, i) => start + i));
    expect(await publicClient.getTransactionCount({ address: KEY.address })).toBe(start + 24);
    expect(senderFor({ publicClient, privateKey: KEY.privateKey }).inFlight()).toBe(0);
  });
});

describe('the sequence survives', () => {
  it('a transaction dropped because another sender used its nonce', async () => {
    const publicClient = client();
    const { logger } = collectingLogger();
    const sender = createSenderRegistry().senderFor({ publicClient, privateKey: KEY.privateKey, rebroadcastMs: 50, logger });
    const first = await sender.send(ping());
    const n = (await nonceOf(publicClient, first.transactionHash)) + 1;

    await testClient.setAutomine(false);
    const pending = sender.send(ping('0x01'));
    await waitUntil(async () => (await publicClient.getTransactionCount({ address: KEY.address, blockTag: 'pending' })) === n + 1);
    // Someone else with the same key takes nonce n with a higher fee: it replaces ours in the pool.
    const other = createChainWallet(KEY.privateKey, { chain: publicClient.chain, rpcUrl: anvil.rpcUrl });
    const fees = await publicClient.estimateFeesPerGas();
    const intruder = await other.sendTransaction({
      to: OTHER_KEY.address,
      value: 1n,
      nonce: n,
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas * 10n + 2_000_000_000n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 10n + 1_000_000_000n,
    });
    await testClient.mine({ blocks: 1 });
    await expect(pending).rejects.toBeInstanceOf(TxDroppedError);
    expect(await nonceOf(publicClient, intruder)).toBe(n);
    await testClient.setAutomine(true);

    const next = await sender.send(ping('0x02'));
    expect(next.status).toBe('success');
    expect(await nonceOf(publicClient, next.transactionHash)).toBe(n + 1);
  });

  it('a transaction replaced with higher fees after a timeout: one version lands, the next nonce follows', async () => {
    const publicClient = client();
    const { logger, entries } = collectingLogger();
    const sender = createSenderRegistry().senderFor({ publicClient, privateKey: KEY.privateKey, rebroadcastMs: 30, replaceAfterMs: 120, logger });
    const n = await publicClient.getTransactionCount({ address: KEY.address });

    await testClient.setAutomine(false);
    const pending = sender.send(ping('0x03'));
    const replaced = () => entries.filter((e) => e.msg === 'sender: transaction still pending; replaced with higher fees');
    await waitUntil(() => replaced().length >= 1);
    await testClient.mine({ blocks: 1 });
    const receipt = await pending;
    await testClient.setAutomine(true);

    const original = replaced()[0].obj.replaces as Hex;
    const replacements = replaced().map((e) => e.obj.txHash as Hex);
    expect(receipt.status).toBe('success');
    expect(receipt.transactionHash).not.toBe(original);
    expect(replacements).toContain(receipt.transactionHash);
    expect(await nonceOf(publicClient, receipt.transactionHash)).toBe(n);
    expect(replaced()[0].obj.nonce).toBe(n);

    const next = await sender.send(ping('0x04'));
    expect(await nonceOf(publicClient, next.transactionHash)).toBe(n + 1);
    expect(await publicClient.getTransactionCount({ address: KEY.address })).toBe(n + 2);
  });

  it('a restart: a new registry reads the nonce from the chain and carries on', async () => {
    const before = createSenderRegistry().senderFor({ publicClient: client(), privateKey: KEY.privateKey });
    const last = await before.send(ping('0x05'));
    const publicClient = client();
    const n = await nonceOf(publicClient, last.transactionHash);

    const restarted = createSenderRegistry();
    const a = restarted.senderFor({ publicClient, privateKey: KEY.privateKey });
    const receipts = await Promise.all([a.send(ping('0x06')), a.send(ping('0x07')), a.send(ping('0x08'))]);
    const nonces = (await Promise.all(receipts.map((r) => nonceOf(publicClient, r.transactionHash)))).sort((x, y) => x - y);
    expect(nonces).toEqual([n + 1, n + 2, n + 3]);
  });

  it('a chain that went back (a reverted snapshot): an idle sender takes the chain count again', async () => {
    const publicClient = client();
    const sender = createSenderRegistry().senderFor({ publicClient, privateKey: KEY.privateKey });
    await sender.send(ping('0x09'));
    const n = await publicClient.getTransactionCount({ address: KEY.address });
    const snapshot = await testClient.snapshot();
    await sender.send(ping('0x0a'));
    await sender.send(ping('0x0b'));
    await testClient.revert({ id: snapshot });
    expect(await publicClient.getTransactionCount({ address: KEY.address })).toBe(n);
    const receipt = await sender.send(ping('0x0c'));
    expect(await nonceOf(publicClient, receipt.transactionHash)).toBe(n);
  });
});
