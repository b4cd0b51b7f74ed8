/**
 * A nudge makes the follower look at the chain at once instead of at its next poll (a One Click
 * send waits for its block to be projected; the relayer of the same process nudges when it holds
 * the receipt). With a poll of ten minutes, only the nudge can bring the follower to a new block
 * within the test's wait; a nudge that lands during a sync makes the loop sync again straight after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { mineBlocks, newIndexer } from './indexer-test-helpers.ts';

let f: ChainFixture;
let db: Db;

beforeAll(async () => {
  f = await startChainFixture();
  db = await openDatabase({ sqlitePath: ':memory:' });
});
afterAll(async () => {
  await db?.close();
  await f?.stop();
});

describe('chain follower nudge', () => {
  it('indexes a new block at once when nudged, long before its next poll', async () => {
    const indexer = newIndexer(f, db, { pollMs: 600_000 });
    await indexer.start();
    try {
      await indexer.waitForBlock(await f.publicClient.getBlockNumber(), 60_000);
      await mineBlocks(f, 1);
      const head = await f.publicClient.getBlockNumber();
      indexer.nudge();
      await indexer.waitForBlock(head, 20_000);
      expect(indexer.progress().indexed).toBe(Number(head));
      // Nudged twice in a row while syncing or paused: still one block at a time, nothing lost.
      await mineBlocks(f, 2);
      const later = await f.publicClient.getBlockNumber();
      indexer.nudge();
      indexer.nudge();
      await indexer.waitForBlock(later, 20_000);
      expect(indexer.progress().indexed).toBe(Number(later));
    } finally {
      await indexer.stop();
    }
  });
});
