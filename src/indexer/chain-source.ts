/**
 * What an indexer reads from the chain, through viem's client as raw JSON-RPC
 * (`publicClient.request`): logs and headers stay hex strings and are parsed only as far as needed,
 * since viem's formatters (a bigint and a checksummed address per field) and its generic event
 * decoding cost more than the whole fast decode (event-decoder.ts). Every failure is mapped by
 * `toChainError` (ChainUnavailableError is retryable).
 */
import type { Address, Hex, PublicClient } from 'viem';
import { toChainError } from '../chain/chain-client.ts';
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

export interface ChainSource {
  blockNumber(): Promise<number>;
  headerByNumber(n: number): Promise<BlockHeader | undefined>;
  headerByHash(hash: string): Promise<BlockHeader | undefined>;
  /** Logs of the indexed contracts in blocks [from, to]. */
  logs(from: number, to: number): Promise<RawLog[]>;
  /** Logs of the indexed contracts in one block, by hash (consistent with that block whatever the head does). */
  logsOfBlock(hash: string): Promise<RawLog[]>;
  /** eth_call of `data` to `to` in the state of exactly the block `blockHash` (EIP-1898). */
  callAt(to: string, data: Hex, blockHash: string): Promise<Hex>;
  /** Whether `address` has code at block `n` (finding a deployment's first block). */
  hasCode(address: string, n: number): Promise<boolean>;
}

const hex = (n: number): Hex => `0x${n.toString(16)}`;

function toHeader(b: RawBlock): BlockHeader {
  return {
    number: parseInt(b.number, 16),
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    timestamp: parseInt(b.timestamp, 16) * 1000,
  };
}

/** A source of the logs of `addresses` (and headers, state reads) through `publicClient`. */
export function createChainSource(publicClient: PublicClient, addresses: readonly string[]): ChainSource {
  const request = publicClient.request as unknown as (args: { method: string; params?: unknown[] }) => Promise<unknown>;
  async function rpc<T>(method: string, params: unknown[]): Promise<T> {
    try {
      return (await request({ method, params })) as T;
    } catch (err) {
      throw toChainError(err);
    }
  }
  const address = addresses.map((a) => a.toLowerCase() as Address);

  /** eth_getLogs as the node answers it: viem's typed request, without its log formatting. */
  async function getLogs(filter: { fromBlock: Hex; toBlock: Hex } | { blockHash: Hex }): Promise<RawLog[]> {
    try {
      return (await publicClient.request({ method: 'eth_getLogs', params: [{ ...filter, address }] })) as RawLog[];
    } catch (err) {
      throw toChainError(err);
    }
  }

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
      return getLogs({ fromBlock: hex(from), toBlock: hex(to) });
    },
    logsOfBlock(hash) {
      return getLogs({ blockHash: hash as Hex });
    },
    callAt(to, data, blockHash) {
      // EIP-1898: the state of exactly that block, or an error if the node no longer has it.
      return rpc<Hex>('eth_call', [{ to, data }, { blockHash }]);
    },
    async hasCode(addr, n) {
      const code = await rpc<string>('eth_getCode', [addr, hex(n)]);
      return code !== '0x' && code !== '';
    },
  };
}
