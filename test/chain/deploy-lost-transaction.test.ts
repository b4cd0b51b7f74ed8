/**
 * A deploy batch on a node that accepted a transaction and then lost it (a CI run once failed a
 * two-chain start after waiting 120 s for a deploy's last receipt, with only "chain: RPC unavailable"
 * to show for it). Every later transaction of the batch waits behind the missing nonce, so the
 * batch's `finish` sends the unmined signed transactions again, and when that does not help, its
 * error names the step and the nonce it is stuck at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID } from '../../src/chain/anvil-accounts.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { TxBatch } from '../../src/chain/deploy-contracts.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { startChainFaultProxy, type ChainFaultProxy } from '../support/chain-fault-proxy.ts';

const SENDER = ANVIL_ACCOUNTS[6];
const RECIPIENTS = [ANVIL_ACCOUNTS[7].address, ANVIL_ACCOUNTS[2].address, ANVIL_ACCOUNTS[3].address] as const;
const ONE_GWEI = 1_000_000_000n;

let anvil: AnvilHandle;
const proxies: ChainFaultProxy[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
}, 60_000);
afterAll(async () => {
  for (const p of proxies) await p.close();
  await anvil?.stop();
});

async function batchThrough(lostSends: number) {
  const proxy = await startChainFaultProxy({ upstream: anvil.rpcUrl, lose: { sends: lostSends } });
  proxies.push(proxy);
  const { publicClient, walletClient } = createChainClients({ rpcUrl: proxy.url, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: SENDER.privateKey, timeoutMs: 10_000 });
  const direct = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, cacheTimeMs: 0 }).publicClient;
  const before = await Promise.all(RECIPIENTS.map((address) => direct.getBalance({ address })));
  const startNonce = await direct.getTransactionCount({ address: SENDER.address, blockTag: 'latest' });
  const batch = await TxBatch.open(publicClient, walletClient!);
  for (const [i, to] of RECIPIENTS.entries()) await batch.transfer(`pay recipient ${i}`, to, BigInt(i + 1) * ONE_GWEI);
  return { proxy, batch, direct, before, startNonce };
}

describe('a deploy batch whose first transaction the node lost', () => {
  it('sends the unmined transactions again and every one is mined once', async () => {
    const { proxy, batch, direct, before, startNonce } = await batchThrough(1);
    expect(proxy.stats().lost).toBe(1);
    // Nothing of the batch is mined yet: the node never saw its first nonce.
    expect(await direct.getTransactionCount({ address: SENDER.address, blockTag: 'latest' })).toBe(startNonce);

    const receipt = await batch.finish({ rebroadcastAfterMs: 500 });
    expect(receipt.status).toBe('success');
    expect(await direct.getTransactionCount({ address: SENDER.address, blockTag: 'latest' })).toBe(startNonce + RECIPIENTS.length);
    const after = await Promise.all(RECIPIENTS.map((address) => direct.getBalance({ address })));
    // Each payment arrived exactly once.
    expect(after.map((b, i) => b - before[i])).toEqual([1n * ONE_GWEI, 2n * ONE_GWEI, 3n * ONE_GWEI]);
  }, 60_000);

  it('names the step and the nonce it is stuck at when the node keeps losing it', async () => {
    const { batch, direct, startNonce } = await batchThrough(Number.MAX_SAFE_INTEGER);
    const err = await batch.finish({ timeoutMs: 1_500, rebroadcastAfterMs: 400 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    const appErr = err as AppError;
    expect(appErr.code).toBe('CHAIN_UNAVAILABLE');
    expect(appErr.retryable).toBe(true);
    expect(appErr.message).toBe(
      `deploy: step "pay recipient 0" (nonce ${startNonce}) was not mined within 2 s; the node has mined this account's nonces below ${startNonce}, and 3 of the batch's 3 transactions are not mined`,
    );
    expect(await direct.getTransactionCount({ address: SENDER.address, blockTag: 'latest' })).toBe(startNonce);
  }, 60_000);
});
