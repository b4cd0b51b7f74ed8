/**
 * What the indexer reads from the chain, as raw JSON-RPC: viem's formatters (a bigint and a
 * checksummed address per field) cost more than the whole decode, so logs and headers stay
 * hex strings and are parsed only as far as needed. Every failure is mapped by `toChainError`
 * (ChainUnavailableError is retryable).
 */
import { decodeFunctionResult, encodeFunctionData, type Address, type Hex, type PublicClient } from 'viem';
import { accountLensAbi } from '../chain/abi/generated/index.ts';
import { toChainError } from '../chain/chain-client.ts';
import { createDirectRpc } from '../chain/direct-rpc.ts';
import type { RawLog } from './event-decoder.ts';

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Milliseconds. */
  timestamp: number;
}

interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

export interface StockBalances {
  stock: string;
  wallet: string;
  exchange: string;
  locked: string;
}

export interface ChainSource {
  blockNumber(): Promise<number>;
  headerByNumber(n: number): Promise<BlockHeader | undefined>;
  headerByHash(hash: string): Promise<BlockHeader | undefined>;
  /** Logs of the indexed contracts in blocks [from, to]. */
  logs(from: number, to: number): Promise<RawLog[]>;
  /** Logs of the indexed contracts in one block, by hash (consistent with that block whatever the head does). */
  logsOfBlock(hash: string): Promise<RawLog[]>;
  /** Stock balances of `user` in `stocks` at the block `blockHash` (AccountLens.getAccount). */
  stockBalances(user: string, stocks: readonly string[], blockHash: string): Promise<StockBalances[]>;
  /** Whether `address` has code at block `n` (finding a deployment's first block). */
  hasCode(address: string, n: number): Promise<boolean>;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const ZERO = '0x0000000000000000000000000000000000000000';

function toHeader(b: RawBlock): BlockHeader {
  return {
    number: parseInt(b.number, 16),
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    timestamp: parseInt(b.timestamp, 16) * 1000,
  };
}

export function createChainSource(publicClient: PublicClient, addresses: readonly string[], accountLens: string): ChainSource {
  const request = publicClient.request as unknown as (args: { method: string; params?: unknown[] }) => Promise<unknown>;
  async function rpc<T>(method: string, params: unknown[]): Promise<T> {
    try {
      return (await request({ method, params })) as T;
    } catch (err) {
      throw toChainError(err);
    }
  }
  // eth_getLogs answers are megabytes: undici's fetch reads those faster than node:http.
  const bulk = createDirectRpc(publicClient, 'fetch') ?? rpc;
  const address = [...addresses];

  return {
    async blockNumber() {
      return parseInt(await rpc<string>('eth_blockNumber', []), 16);
    },
    async headerByNumber(n) {
      const b = await rpc<RawBlock | null>('eth_getBlockByNumber', [hex(n), false]);
      return b ? toHeader(b) : undefined;
    },
    async headerByHash(hash) {
      const b = await rpc<RawBlock | null>('eth_getBlockByHash', [hash, false]);
      return b ? toHeader(b) : undefined;
    },
    logs(from, to) {
      return bulk<RawLog[]>('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to), address }]);
    },
    logsOfBlock(hash) {
      return rpc<RawLog[]>('eth_getLogs', [{ blockHash: hash, address }]);
    },
    async stockBalances(user, stocks, blockHash) {
      const data = encodeFunctionData({
        abi: accountLensAbi,
        functionName: 'getAccount',
        args: [user as Address, stocks as Address[], [], ZERO as Address],
      });
      // EIP-1898: the state of exactly that block, or an error if it is no longer known.
      const result = await rpc<Hex>('eth_call', [{ to: accountLens, data }, { blockHash }]);
      // No AccountLens at that block (deployed later): no state to read, nothing to record.
      if (result === '0x') return [];
      let account;
      try {
        account = decodeFunctionResult({ abi: accountLensAbi, functionName: 'getAccount', data: result });
      } catch (err) {
        throw toChainError(err);
      }
      return account.stocks.map((s) => ({
        stock: s.stock.toLowerCase(),
        wallet: s.wallet.toString(),
        exchange: s.exchange.toString(),
        locked: s.locked.toString(),
      }));
    },
    async hasCode(addr, n) {
      const code = await rpc<string>('eth_getCode', [addr, hex(n)]);
      return code !== '0x' && code !== '';
    },
  };
}
