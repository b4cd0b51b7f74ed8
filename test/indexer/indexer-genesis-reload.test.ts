/**
 * anvil makes a new genesis block (a new hash) when it loads some state files, while block 1 keeps
 * its parent: a node whose block 1 does not link to what it answers for block 0. An indexer that
 * starts at block 1 on such a node anchors at the hash block 1 links to, indexes every event, and a
 * later sync stays put, instead of rolling back to block 0 forever at full CPU (what it did before;
 * found by the upgrade CLI's kill -9 test on a fresh database). The node here is anvil behind a
 * JSON-RPC proxy that answers another hash for block 0, so the case is the same on every run.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { deployStack } from '../../src/chain/deploy-contracts.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { getCheckpoint } from '../../src/storage/chain-block-store.ts';
import { createStockIndexer } from '../../src/stock/indexer/stock-indexer.ts';

const REGENERATED = `0x${'9e'.repeat(32)}`;

/** Forwards JSON-RPC to `upstream`, answering REGENERATED as block 0's hash. */
function regeneratedGenesisProxy(upstream: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', async () => {
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const parsed = (await answer.json()) as unknown;
      const rewrite = (r: { result?: { number?: string; hash?: string } }) => {
        if (r?.result && typeof r.result === 'object' && r.result.number === '0x0') r.result.hash = REGENERATED;
        return r;
      };
      const out = Array.isArray(parsed) ? parsed.map(rewrite) : rewrite(parsed as never);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(out));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server })));
}

let anvil: AnvilHandle;
let proxy: { url: string; server: Server };
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 31337 });
  proxy = await regeneratedGenesisProxy(anvil.rpcUrl);
}, 60_000);
afterAll(async () => {
  proxy?.server.close();
  await anvil?.stop();
});

describe('an indexer on a node whose block 1 does not link to its block 0', () => {
  test('anchors at the genesis block 1 links to, indexes every event once, and stays put', async () => {
    const { publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20 });
    const deployment = await deployStack({ publicClient, walletClient: walletClient!, symbols: DEMO_SYMBOLS.slice(0, 1), demoWallets: [], options: { deployerOperator: true } });
    const client = createChainClients({ rpcUrl: proxy.url, chainId: 31337 }).publicClient;
    const [genesis, one] = await Promise.all([client.getBlock({ blockNumber: 0n }), client.getBlock({ blockNumber: 1n })]);
    expect(genesis.hash).toBe(REGENERATED);
    expect(one.parentHash).not.toBe(REGENERATED);

    const db = await openDatabase({ sqlitePath: ':memory:' });
    try {
      const indexer = createStockIndexer({ db, publicClient: client as never, deployment, startBlock: 1 });
      const head = await client.getBlockNumber();
      await indexer.waitForBlock(head, 20_000);
      expect((await getCheckpoint(db, 'stock'))?.number).toBe(Number(head));
      const direct = (await publicClient.getLogs({ address: [deployment.contracts.stockRouter, deployment.contracts.cashier, deployment.contracts.oneClickRouter, ...Object.values(deployment.contracts.stocks)], fromBlock: 1n, toBlock: head })).length;
      const stored = await db.kysely.selectFrom('chain_events').select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(stored.n)).toBe(direct);
      expect((await indexer.syncOnce()).head).toBe(head);
      expect((await getCheckpoint(db, 'stock'))?.number).toBe(Number(head));
    } finally {
      await db.close();
    }
  }, 120_000);
});
