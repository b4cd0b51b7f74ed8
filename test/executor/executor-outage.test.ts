/**
 * The RPC goes away under a running executor (anvil stopped mid-run, then restarted on the same
 * port from its dumped state): the loop survives, logs the outage once, and settles everything
 * afterwards — each order exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, type Address } from 'viem';
import { stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { createTxSender, SendAbortedError } from '../../src/chain/tx-sender.ts';
import { OrderStatus } from '../../src/stock/executor/fill-policy.ts';
import type { Db } from '../../src/storage/database.ts';
import type { ChainFixture } from '../support/chain-fixture.ts';
import { deadlineIn, depositStock, depositUsdc, musd, shares, usdc } from '../chain/chain-test-helpers.ts';
import {
  fillEvents,
  makeExecutor,
  openDb,
  placeMarket,
  readOrders,
  startRestartableChain,
  waitFor,
  type RestartableChain,
} from './executor-test-support.ts';

let chain: RestartableChain;
let f: ChainFixture;
let db: Db;
let AAPL: Address;

beforeAll(async () => {
  chain = await startRestartableChain();
  f = chain as unknown as ChainFixture; // the chain helpers only use publicClient, deployment and operator
  AAPL = chain.deployment.contracts.stocks.AAPL;
  db = await openDb();
  const [alice, bob] = chain.users;
  await depositUsdc(f, alice, usdc('10000'));
  await depositStock(f, bob, AAPL, shares('50'));
});
afterAll(async () => {
  await db?.close();
  await chain?.stop();
});

describe('RPC outage', () => {
  it('survives the chain going away mid-run and resumes without settling anything twice', async () => {
    const [alice, bob] = chain.users;
    const { executor, quotes, log } = makeExecutor(chain, db, { tickMs: 20, maxBackoffMs: 200 });
    quotes.set('AAPL', '149.99', '150.01');
    await executor.start();
    try {
      const deadline = await deadlineIn(f, 3600);
      const all: bigint[] = [];
      const place = async (n: number) => {
        for (let i = 0; i < n; i++) {
          all.push(await placeMarket(chain, i % 2 ? bob : alice, AAPL, i % 2 ? 1 : 0, i % 2 ? shares('0.1') : musd('20'), deadline));
        }
      };
      const allFinal = async () => (await readOrders(chain, all)).every((o) => o.status === OrderStatus.Filled);

      await place(6);
      await waitFor(allFinal);

      // Thirty orders wait for a quote; the quote arrives and the chain stops at once, while the
      // executor is scanning, deciding or settling them.
      quotes.remove('AAPL');
      await place(30);
      quotes.set('AAPL', '149.99', '150.01');
      await new Promise((r) => setTimeout(r, 15));
      await chain.down();
      // The first failed tick is said at once; the ticks after it (backing off) say nothing more.
      await waitFor(async () => log.messages('executor: tick failed; backing off').length >= 1, 30_000);
      await new Promise((r) => setTimeout(r, 400));
      const failuresDuringOutage = log.messages('executor: tick failed; backing off').length;

      await chain.up();
      await waitFor(allFinal, 30_000);
      await waitFor(async () => log.messages('executor: ticks succeed again').length >= 1);
      // One warning per outage, not one per failed tick.
      expect(failuresDuringOutage).toBe(1);

      await place(4);
      await waitFor(allFinal);

      const fills = await fillEvents(chain);
      for (const id of all) expect(fills.filter((e) => e.args.orderId === id)).toHaveLength(1);
    } finally {
      await executor.stop();
      if (process.env.EXECUTOR_TEST_LOG) console.log(log.lines().map((l) => JSON.stringify(l)).join('\n'));
    }
  });
});

describe('operator sender during an outage', () => {
  const emptySettlement = () => ({
    to: chain.deployment.contracts.stockRouter,
    data: encodeFunctionData({ abi: stockRouterAbi, functionName: 'settleOrders', args: [[], []] }),
    gas: 200_000n,
  });

  it('keeps re-broadcasting a signed transaction until the RPC returns, then lands it once', async () => {
    const sender = createTxSender({ publicClient: chain.publicClient, account: chain.operator.account, rebroadcastMs: 100 });
    const nonceBefore = await chain.publicClient.getTransactionCount({ address: sender.address });
    await sender.send(emptySettlement()); // nonce known locally from here on
    await chain.down();
    let settled = false;
    const pending = sender.send(emptySettlement()).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(settled).toBe(false);
    expect(sender.inFlight()).toBe(1);
    await chain.up();
    const receipt = await pending;
    expect(receipt.status).toBe('success');
    const tx = await chain.publicClient.getTransaction({ hash: receipt.transactionHash });
    expect(tx.nonce).toBe(nonceBefore + 1);
    const next = await sender.send(emptySettlement());
    expect((await chain.publicClient.getTransaction({ hash: next.transactionHash })).nonce).toBe(nonceBefore + 2);
    expect(await chain.publicClient.getTransactionCount({ address: sender.address })).toBe(nonceBefore + 3);
  });

  it('gives a send up when aborted during an outage and re-reads the nonce afterwards', async () => {
    const sender = createTxSender({ publicClient: chain.publicClient, account: chain.operator.account });
    await sender.send(emptySettlement());
    const nonce = await chain.publicClient.getTransactionCount({ address: sender.address });
    await chain.down();
    const abort = new AbortController();
    const pending = sender.send(emptySettlement(), abort.signal);
    setTimeout(() => abort.abort(), 200);
    await expect(pending).rejects.toBeInstanceOf(SendAbortedError);
    await chain.up();
    const receipt = await sender.send(emptySettlement());
    expect(receipt.status).toBe('success');
    expect((await chain.publicClient.getTransaction({ hash: receipt.transactionHash })).nonce).toBe(nonce);
  });
});
