/**
 * Putting thousands of transactions on anvil quickly, for the benches that need a chain full of
 * state (bench/executor-bench.ts, bench/upgrade-bench.ts): locally signed transactions with locally
 * managed nonces, or unsigned ones from impersonated accounts, sent as JSON-RPC batches with
 * automine off and mined in full blocks.
 */
import { keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { DevAccount } from '../src/chain/anvil-accounts.ts';
import type { ChainPublicClient } from '../src/chain/chain-client.ts';

/** Signs transactions for one account locally, with its own nonce counter. */
export class Signer {
  private nonce = 0;
  private readonly account;
  constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly dev: DevAccount,
    private readonly fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
    private readonly chainId: number,
  ) {
    this.account = privateKeyToAccount(dev.privateKey);
  }

  get address(): Address {
    return this.dev.address;
  }

  async init(): Promise<this> {
    this.nonce = await this.publicClient.getTransactionCount({ address: this.dev.address, blockTag: 'pending' });
    return this;
  }

  sign(to: Address, data: Hex, gas = 350_000n): Promise<Hex> {
    return this.account.signTransaction({
      chainId: this.chainId,
      type: 'eip1559',
      nonce: this.nonce++,
      to,
      data,
      gas,
      maxFeePerGas: this.fees.maxFeePerGas,
      maxPriorityFeePerGas: this.fees.maxPriorityFeePerGas,
    });
  }
}

/** One JSON-RPC call of a batch. */
export interface RpcCall {
  method: string;
  params: unknown[];
}

/** One JSON-RPC request (a call, or a batch of them) to anvil. */
export async function rpc(rpcUrl: string, body: unknown): Promise<any> {
  const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

/** Many calls in JSON-RPC batches of `size`; throws on the first error an answer carries. Answers the results in order. */
export async function rpcBatched(rpcUrl: string, calls: readonly RpcCall[], size = 500, what = 'bench'): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < calls.length; i += size) {
    const body = calls.slice(i, i + size).map((c, j) => ({ jsonrpc: '2.0', id: j, ...c }));
    const answers = (await rpc(rpcUrl, body)) as Array<{ id: number; result?: unknown; error?: { message: string } }>;
    const failed = answers.find((a) => a.error);
    if (failed) throw new Error(`${what}: ${calls[i + failed.id].method} refused: ${failed.error!.message}`);
    for (const a of [...answers].sort((x, y) => x.id - y.id)) out.push(a.result);
  }
  return out;
}

/**
 * Sends transactions (`eth_sendRawTransaction` of signed ones, or `eth_sendTransaction` from
 * impersonated accounts) as JSON-RPC batches with automine off, then mines full blocks until the
 * pool is empty and turns automine back on: one transaction per block would make anvil mine
 * thousands of blocks. Throws if any was refused or reverted.
 */
export async function sendAllCalls(rpcUrl: string, publicClient: ChainPublicClient, calls: readonly RpcCall[], size = 500, what = 'bench'): Promise<Hex[]> {
  await rpc(rpcUrl, { jsonrpc: '2.0', id: 1, method: 'evm_setAutomine', params: [false] });
  let hashes: Hex[];
  try {
    hashes = (await rpcBatched(rpcUrl, calls, size, what)) as Hex[];
    for (let blocks = 0; ; blocks++) {
      const status = (await rpc(rpcUrl, { jsonrpc: '2.0', id: 1, method: 'txpool_status', params: [] })) as { result: { pending: string; queued: string } };
      if (Number(status.result.pending) + Number(status.result.queued) === 0) break;
      if (blocks > calls.length) throw new Error(`${what}: transactions stay in the pool`);
      await rpc(rpcUrl, { jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] });
    }
  } finally {
    await rpc(rpcUrl, { jsonrpc: '2.0', id: 1, method: 'evm_setAutomine', params: [true] });
  }
  const receipts = await Promise.all(hashes.map((hash) => publicClient.getTransactionReceipt({ hash })));
  if (receipts.some((r) => r.status !== 'success')) throw new Error(`${what}: a transaction reverted`);
  return hashes;
}

/** `sendAllCalls` for locally signed transactions. */
export async function sendAll(rpcUrl: string, publicClient: ChainPublicClient, raws: readonly Hex[], size = 500, what = 'bench'): Promise<void> {
  const hashes = await sendAllCalls(rpcUrl, publicClient, raws.map((raw) => ({ method: 'eth_sendRawTransaction', params: [raw] })), size, what);
  if (hashes.some((h, i) => h !== keccak256(raws[i]))) throw new Error(`${what}: anvil answered another hash than the transaction's`);
}
