/**
 * Where an indexer starts on a node that cannot say when the contracts got their code (a pruned
 * node refuses `eth_getCode` for old blocks): at the deployment record's first deployment block, so
 * the events the deployment itself emitted (the demo wallets' mints, the treasury's funding) are
 * indexed. The node here is anvil behind the project's fault proxy, refusing every `eth_getCode`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_CHAIN_ID } from '../../src/chain/anvil-accounts.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { parseDeploymentRecord } from '../../src/chain/deployment-file.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { startChainFaultProxy, type ChainFaultProxy } from '../support/chain-fault-proxy.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { chainLogs, expectEventsMatchChain, newIndexer } from './indexer-test-helpers.ts';

let f: ChainFixture;
let proxy: ChainFaultProxy;
let db: Db;

beforeAll(async () => {
  f = await startChainFixture();
  proxy = await startChainFaultProxy({ upstream: f.rpcUrl, rate: 1, kinds: ['http-503'], methods: ['eth_getCode'] });
  db = await openDatabase({ sqlitePath: ':memory:' });
});
afterAll(async () => {
  await db?.close();
  await proxy?.close();
  await f?.stop();
});

describe('indexer start block on a node without old state', () => {
  it('the deployment records its first and last blocks, and events were emitted before the last', async () => {
    const first = BigInt(f.deployment.firstBlockNumber!);
    const last = BigInt(f.deployment.blockNumber);
    expect(first).toBeLessThan(last);
    const early = (await f.publicClient.getLogs({ fromBlock: first, toBlock: last - 1n })).length;
    // Otherwise starting at the last block would lose nothing and this file would prove nothing.
    expect(early).toBeGreaterThan(0);
  });

  it('starts at the first deployment block and indexes every event the chain has', async () => {
    const { publicClient } = createChainClients({ rpcUrl: proxy.url, chainId: ANVIL_CHAIN_ID, pollingIntervalMs: 20 });
    const indexer = newIndexer(f, db, { publicClient: publicClient as never });
    const head = await f.publicClient.getBlockNumber();
    await indexer.waitForBlock(head, 60_000);
    expect(proxy.stats().faults['http-503']).toBeGreaterThan(0);
    expect(await getMeta(db, 'indexer.stock.start-block')).toBe(f.deployment.firstBlockNumber);
    expect(await expectEventsMatchChain(f, db)).toBe((await chainLogs(f)).length);
  });

  it('a record without firstBlockNumber (written before it was kept) still reads, and one later than blockNumber is refused', () => {
    const venue = { blockNumber: '40', deployedAt: 1, operator: f.deployment.operator, contracts: f.deployment.contracts };
    const old = parseDeploymentRecord(JSON.stringify({ chainId: 31337, venues: { stock: venue } }));
    expect(JSON.stringify(old)).not.toContain('firstBlockNumber');
    const kept = parseDeploymentRecord(JSON.stringify({ chainId: 31337, venues: { stock: { ...venue, firstBlockNumber: '7' } } }));
    expect(kept.record.venues.stock.firstBlockNumber).toBe('7');
    expect(() => parseDeploymentRecord(JSON.stringify({ chainId: 31337, venues: { stock: { ...venue, firstBlockNumber: '41' } } }))).toThrow(/firstBlockNumber/);
  });
});
