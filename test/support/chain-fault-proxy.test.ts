/**
 * The chain fault proxy itself, in front of a real anvil: what each fault kind does to the client
 * and to the node, batches, and that a seed replays the same faults.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, parseEther, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { startChainFaultProxy, type ChainFaultKind, type ChainFaultProxy } from './chain-fault-proxy.ts';
import { until } from './poll.ts';

let anvil: AnvilHandle;
const proxies: ChainFaultProxy[] = [];
const sender = privateKeyToAccount(ANVIL_ACCOUNTS[3].privateKey);
let nextNonce = 0;

async function rpc(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(3_000) });
  return { status: res.status, body: res.status === 200 ? await res.json() : await res.text() };
}

const call = (method: string, params: unknown[] = [], id = 1) => ({ jsonrpc: '2.0', id, method, params });

async function signedTransfer(): Promise<Hex> {
  return sender.signTransaction({ chainId: 31337, nonce: nextNonce++, to: ANVIL_ACCOUNTS[4].address, value: parseEther('0.001'), gas: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, type: 'eip1559' });
}

async function proxy(kinds: readonly ChainFaultKind[], rate = 1, hangMs?: number): Promise<ChainFaultProxy> {
  const p = await startChainFaultProxy({ upstream: anvil.rpcUrl, seed: 7, rate, kinds, hangMs });
  proxies.push(p);
  return p;
}

async function onNode(raw: Hex): Promise<boolean> {
  const r = await rpc(anvil.rpcUrl, call('eth_getTransactionByHash', [keccak256(raw)]));
  return r.body.result !== null;
}

beforeAll(async () => {
  anvil = await startAnvil({ port: 0 });
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await anvil?.stop();
});

describe('chain fault proxy', () => {
  it('forwards calls and batches unchanged at rate 0', async () => {
    const p = await proxy([], 0);
    expect((await rpc(p.url, call('eth_chainId'))).body).toEqual({ jsonrpc: '2.0', id: 1, result: '0x7a69' });
    const batch = await rpc(p.url, [call('eth_chainId', [], 1), call('eth_blockNumber', [], 2)]);
    expect(batch.body.map((a: any) => a.id)).toEqual([1, 2]);
    const raw = await signedTransfer();
    expect((await rpc(p.url, call('eth_sendRawTransaction', [raw]))).body.result).toBe(keccak256(raw));
    expect(p.stats()).toMatchObject({ calls: 4, sends: 1, forwarded: 4, totalFaults: 0 });
  });

  it("'nonce too low' and 'replacement transaction underpriced' never reach the node; other methods pass", async () => {
    for (const kind of ['nonce-too-low', 'replacement-underpriced'] as const) {
      const p = await proxy([kind]);
      const raw = await signedTransfer();
      nextNonce--;
      const r = await rpc(p.url, call('eth_sendRawTransaction', [raw]));
      expect(r.body.error.message).toBe(kind === 'nonce-too-low' ? 'nonce too low' : 'replacement transaction underpriced');
      expect(await onNode(raw)).toBe(false);
      expect((await rpc(p.url, call('eth_chainId'))).body.result).toBe('0x7a69');
      expect(p.stats().faults[kind]).toBe(1);
    }
  });

  it("'already known' and drop-after-forward: the node has the transaction, the client does not know", async () => {
    const known = await proxy(['already-known']);
    const raw1 = await signedTransfer();
    expect((await rpc(known.url, call('eth_sendRawTransaction', [raw1]))).body.error.message).toBe('already known');
    expect(await onNode(raw1)).toBe(true);

    const drop = await proxy(['drop-after-forward']);
    const raw2 = await signedTransfer();
    await expect(rpc(drop.url, call('eth_sendRawTransaction', [raw2]))).rejects.toThrow();
    expect(await onNode(raw2)).toBe(true);
    expect(drop.stats().faults['drop-after-forward']).toBe(1);
  });

  it('429 and 503 answer the status with nothing forwarded; a hang ends with the socket closed', async () => {
    const r429 = await proxy(['http-429']);
    expect((await rpc(r429.url, call('eth_blockNumber'))).status).toBe(429);
    const r503 = await proxy(['http-503']);
    const raw = await signedTransfer();
    nextNonce--;
    expect((await rpc(r503.url, call('eth_sendRawTransaction', [raw]))).status).toBe(503);
    expect(await onNode(raw)).toBe(false);
    expect(r503.stats()).toMatchObject({ forwarded: 0, faults: { 'http-503': 1 } });

    const hang = await proxy(['hang'], 1, 300);
    const started = Date.now();
    const hung = await rpc(hang.url, call('eth_blockNumber')).then(
      () => undefined,
      (err: Error & { cause?: { code?: string } }) => err,
    );
    // Held for its hang time (a lower bound, which a busy machine cannot break), then ended by the
    // proxy closing the socket: a broken exchange, not the client's own 3 s timeout giving up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(hung?.name).toBe('TypeError');
    expect(hung?.cause?.code).toBe('UND_ERR_SOCKET');
    expect(hang.stats()).toMatchObject({ forwarded: 0, faults: { hang: 1 } });
    // A hang is released by close() too, long before its timer.
    const long = await proxy(['hang'], 1, 60_000);
    const pending = rpc(long.url, call('eth_blockNumber')).then(
      () => 'answered',
      (err: Error & { cause?: { code?: string } }) => (err.cause?.code === 'UND_ERR_SOCKET' ? 'closed' : `${err.name}: ${err.message}`),
    );
    // Closed once the proxy holds the exchange (it has counted the hang), not after a guessed time.
    await until(async () => long.stats().faults.hang, (n) => n === 1, 20_000);
    await long.close();
    // Closed by close(), not by the client's 3 s timeout.
    expect(await pending).toBe('closed');
  });

  it('a seed replays the same faults; setRate turns them on and off', async () => {
    const run = async () => {
      const p = await proxy(['http-503'], 0.3);
      const seen: number[] = [];
      for (let i = 0; i < 40; i++) seen.push((await rpc(p.url, call('eth_chainId'))).status);
      return { seen, p };
    };
    const a = await run();
    const b = await run();
    expect(a.seen).toEqual(b.seen);
    expect(a.seen.filter((s) => s === 503).length).toBeGreaterThan(3);
    expect(a.seen.filter((s) => s === 200).length).toBeGreaterThan(20);
    a.p.setRate(0);
    for (let i = 0; i < 10; i++) expect((await rpc(a.p.url, call('eth_chainId'))).status).toBe(200);
    a.p.setRate(1, 'again');
    expect((await rpc(a.p.url, call('eth_chainId'))).status).toBe(503);
  });
});
