import { type Address, type Hex, type TransactionReceipt } from 'viem';
import { expect } from 'vitest';
import { cashierAbi } from '../../src/chain/abi/generated/index.ts';
import { createStockIndexer, type StockIndexer, type StockIndexerOptions } from '../../src/stock/indexer/stock-indexer.ts';
import { indexedAddresses } from '../../src/stock/operation-id.ts';
import type { Db } from '../../src/storage/database.ts';
import type { ChainFixture } from '../support/chain-fixture.ts';
import { confirm, contracts } from '../chain/chain-test-helpers.ts';

export { routerCall, settle, type Close, type Fill, type RouterFn } from '../chain/chain-test-helpers.ts';

export function newIndexer(f: ChainFixture, db: Db, opts: Partial<StockIndexerOptions> = {}): StockIndexer {
  return createStockIndexer({ db, publicClient: f.publicClient, deployment: f.deployment, pollMs: 20, ...opts });
}

export function cashierAdmin(
  f: ChainFixture,
  functionName: 'setCreditBuffer' | 'setWithdrawBuffer' | 'settleDeposit' | 'settleWithdrawal',
  args: readonly unknown[],
): Promise<TransactionReceipt> {
  return confirm(f, f.operator.writeContract({ address: contracts(f).cashier, abi: cashierAbi, functionName, args } as never));
}

/** Block timestamp in ms, as the indexer stores it. */
export async function blockTimeMs(f: ChainFixture, blockNumber: bigint): Promise<number> {
  const block = await f.publicClient.getBlock({ blockNumber });
  return Number(block.timestamp) * 1000;
}

/** Every log of the indexed contracts, straight from the node: what the indexer must have stored. */
export async function chainLogs(f: ChainFixture): Promise<Array<{ blockHash: Hex; logIndex: number; transactionHash: Hex }>> {
  const logs = await f.publicClient.getLogs({ address: indexedAddresses(f.deployment) as Address[], fromBlock: 0n, toBlock: 'latest' });
  return logs.map((l) => ({ blockHash: l.blockHash as Hex, logIndex: Number(l.logIndex), transactionHash: l.transactionHash as Hex }));
}

/** Asserts the stored events are exactly the chain's logs: none missing, none twice, none orphaned. */
export async function expectEventsMatchChain(f: ChainFixture, db: Db): Promise<number> {
  const expected = (await chainLogs(f)).map((l) => `${l.blockHash}:${l.logIndex}`).sort();
  const stored = (await db.kysely.selectFrom('chain_events').select(['block_hash', 'log_index']).where('indexer', '=', 'stock').execute())
    .map((r) => `${r.block_hash}:${Number(r.log_index)}`)
    .sort();
  expect(stored).toEqual(expected);
  return stored.length;
}

export async function mineBlocks(f: ChainFixture, n: number): Promise<void> {
  await f.testClient.mine({ blocks: n });
}
