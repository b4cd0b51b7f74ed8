/**
 * Restarts, crashes, reorgs, gaps and duplicate deliveries against a real anvil, on SQLite and
 * (with DATABASE_URL) PostgreSQL. Reorgs are made with anvil's own tools: evm_snapshot/evm_revert
 * followed by new blocks (a different branch, usually longer) and anvil_reorg (same height).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { encodeFunctionData, type Address } from 'viem';
import { describe, expect, test } from 'vitest';
import { stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_CHAIN_ID } from '../../src/chain/anvil-accounts.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { operationIdOf } from '../../src/stock/operation-id.ts';
import { createStockIndexer } from '../../src/stock/indexer/stock-indexer.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { getCheckpoint } from '../../src/storage/chain-block-store.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { getCashOperation, listCashOperationsByTx, listStockOperationsByTx } from '../../src/stock/store/stock-operation-store.ts';
import { getOrder, listOrderFills } from '../../src/stock/store/stock-order-store.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { testDatabases, uniqueSchemaName, useFreshDatabase } from '../support/test-databases.ts';
import { until } from '../support/poll.ts';
import { approveStock, approveUsdc, confirm, contracts, DAY, deadlineEachTest, depositUsdc, musd, OrderStatus, price, shares, Side, usdc } from '../chain/chain-test-helpers.ts';
import { cashierAdmin, expectEventsMatchChain, mineBlocks, newIndexer, routerCall, settle } from './indexer-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let carol: ChainUser;
let AAPL: Address;
let deadline: number;

const f = useChainFixture(async () => {
  [alice, bob, carol] = f.users;
  ({ AAPL } = contracts(f).stocks);
});
deadlineEachTest(f, (d) => (deadline = d));

/** Orders in the projection equal the router's record of them. */
async function expectOrdersMatchChain(db: Db): Promise<void> {
  const rows = await db.kysely.selectFrom('stock_orders').selectAll().execute();
  const next = await f.publicClient.readContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' });
  expect(rows.length).toBe(Number(next) - 1);
  for (const r of rows) {
    const o = await f.publicClient.readContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [BigInt(r.order_id)] });
    expect([r.user_address, r.quantity, r.price, r.filled_quantity, r.filled_notional, r.fees, r.locked], `order ${r.order_id}`).toEqual([
      o.user.toLowerCase(),
      ...[o.quantity, o.price, o.filledQuantity, o.filledNotional, o.fees, o.locked].map(String),
    ]);
  }
}

/** A mix of activity: deposits, stock deposits, orders, fills, cancels. */
async function activity(rounds: number): Promise<void> {
  await depositUsdc(f, alice, usdc('20000'));
  await approveStock(f, bob, AAPL, shares('50'));
  await routerCall(f, bob, 'depositStock', [AAPL, shares('50')]);
  for (let i = 0; i < rounds; i++) {
    const buy = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('100'), DAY, deadline]);
    const sell = await routerCall<bigint>(f, bob, 'placeLimitOrder', [AAPL, Side.Sell, shares('1'), price('99'), DAY, deadline]);
    await settle(f, [{ orderId: buy.result, quantity: shares('0.5'), price: price('99.5') }, { orderId: sell.result, quantity: shares('1'), price: price('99.5') }], [{ orderId: sell.result, status: OrderStatus.Filled }]);
    await routerCall(f, alice, 'cancelLimitOrder', [buy.result]);
  }
}

describe.each(testDatabases)('indexer reconciliation ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  test('a new indexer resumes from the checkpoint: every event once, none skipped', async () => {
    await activity(2);
    const first = newIndexer(f, db, { batchBlocks: 4, commitEvents: 1 });
    const { head } = await first.syncOnce();
    expect(head).toBe(await f.publicClient.getBlockNumber());
    const before = await expectEventsMatchChain(f, db);
    await activity(2);
    // A restarted process: a fresh indexer over the same database.
    const second = newIndexer(f, db, { batchBlocks: 4 });
    await second.syncOnce();
    const after = await expectEventsMatchChain(f, db);
    expect(after).toBeGreaterThan(before);
    await expectOrdersMatchChain(db);
    // Idempotent: syncing again at the same head changes nothing.
    await second.syncOnce();
    expect(await expectEventsMatchChain(f, db)).toBe(after);
    // Fill rows are not doubled either: 4 buys half filled, 4 sells filled.
    expect(await db.kysely.selectFrom('stock_order_fills').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n))).toBe(8);
  });

  test('two indexers racing on one database: a batch prepared on a checkpoint the other moved is refused whole', async () => {
    await activity(3);
    const a = newIndexer(f, db, { batchBlocks: 2, commitEvents: 1 });
    const b = newIndexer(f, db, { batchBlocks: 2, commitEvents: 1 });
    // Both read the same checkpoint and prepare batches on it (each while its previous one is written).
    const raced = await Promise.allSettled([a.syncOnce(), b.syncOnce()]);
    const refused = raced.filter((r) => r.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
    // The loser's next sync continues from what the winner stored: every event once, projections exact.
    await a.syncOnce();
    await b.syncOnce();
    await expectEventsMatchChain(f, db);
    await expectOrdersMatchChain(db);
    expect(await db.kysely.selectFrom('stock_order_fills').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n))).toBe(6);
  });

  test('a reorg onto a longer branch rolls back the orphaned blocks and indexes the new ones (order ids reused)', async () => {
    await depositUsdc(f, alice, usdc('10000'));
    await depositUsdc(f, carol, usdc('10000'));
    const indexer = newIndexer(f, db);
    await indexer.syncOnce();
    const fork = await f.snapshot();
    // Branch A: alice's order 1 and a queued deposit of bob.
    const a = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('2'), price('100'), DAY, deadline]);
    await settle(f, [{ orderId: a.result, quantity: shares('1'), price: price('100') }], []);
    await cashierAdmin(f, 'setCreditBuffer', [0n]);
    await approveUsdc(f, bob, usdc('50'));
    const queued = await routerCall(f, bob, 'deposit', [contracts(f).cashToken, usdc('50')]);
    await indexer.syncOnce();
    expect(await getOrder(db, a.result.toString())).toMatchObject({ userAddress: alice.address.toLowerCase(), filledQuantity: shares('1').toString() });
    expect(await listCashOperationsByTx(db, queued.receipt.transactionHash)).toHaveLength(1);
    const oldHead = await f.publicClient.getBlockNumber();

    // Branch B: from the fork, carol's order gets id 1; the branch outgrows A.
    await f.revert(fork);
    const b = await routerCall<bigint>(f, carol, 'placeLimitOrder', [AAPL, Side.Buy, shares('5'), price('50'), DAY, deadline]);
    expect(b.result).toBe(a.result);
    await mineBlocks(f, Number(oldHead - b.receipt.blockNumber) + 2);
    await indexer.syncOnce();

    expect(await getOrder(db, b.result.toString())).toMatchObject({
      userAddress: carol.address.toLowerCase(),
      quantity: shares('5').toString(),
      price: price('50').toString(),
      filledQuantity: '0',
      placeTxHash: b.receipt.transactionHash,
    });
    expect(await listOrderFills(db, b.result.toString())).toEqual([]);
    expect(await listCashOperationsByTx(db, queued.receipt.transactionHash)).toEqual([]);
    await expectEventsMatchChain(f, db);
    await expectOrdersMatchChain(db);
    const cp = await getCheckpoint(db, 'stock');
    expect(cp?.number).toBe(Number(await f.publicClient.getBlockNumber()));
  });

  test('a reorg at the same height (anvil_reorg) is found by the checkpoint hash check', async () => {
    await depositUsdc(f, alice, usdc('1000'));
    const indexer = newIndexer(f, db);
    const placed = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('1'), price('10'), DAY, deadline]);
    await indexer.syncOnce();
    expect(await getOrder(db, placed.result.toString())).toBeDefined();
    const head = await f.publicClient.getBlockNumber();
    // Replace the last block (alice's order) by an empty one: same height, other hash.
    await f.testClient.request({ method: 'anvil_reorg', params: [1, []] } as never);
    expect(await f.publicClient.getBlockNumber()).toBe(head);
    await indexer.syncOnce();
    expect(await getOrder(db, placed.result.toString())).toBeUndefined();
    await expectEventsMatchChain(f, db);
    expect((await indexer.checkpoint())?.hash).toBe((await f.publicClient.getBlock()).hash);
  });

  test('an orphaned settlement is undone: the queued deposit is processing again, then completes on the new branch', async () => {
    await cashierAdmin(f, 'setCreditBuffer', [0n]);
    await approveUsdc(f, bob, usdc('70'));
    const queued = await routerCall(f, bob, 'deposit', [contracts(f).cashToken, usdc('70')]);
    const opId = operationIdOf(queued.receipt.transactionHash, 0);
    const indexer = newIndexer(f, db);
    await indexer.syncOnce();
    const fork = await f.snapshot();
    const settled = await cashierAdmin(f, 'settleDeposit', [1n]);
    await indexer.syncOnce();
    expect(await getCashOperation(db, opId)).toMatchObject({ status: 'completed', settleTxHash: settled.transactionHash });

    await f.revert(fork);
    await mineBlocks(f, 3);
    await indexer.syncOnce();
    const back = await getCashOperation(db, opId);
    expect(back).toMatchObject({ status: 'processing', settleTxHash: null, completedAt: null });
    expect(back?.steps.map((s) => s.step)).toEqual(['queued']);

    const again = await cashierAdmin(f, 'settleDeposit', [1n]);
    await indexer.syncOnce();
    expect(await getCashOperation(db, opId)).toMatchObject({ status: 'completed', settleTxHash: again.transactionHash });
    await expectEventsMatchChain(f, db);
  });

  test('operationId and orderId are stable when the same transaction is re-mined in another block', async () => {
    const c = contracts(f);
    await approveUsdc(f, alice, usdc('3000'));
    const indexer = newIndexer(f, db);
    await indexer.syncOnce();
    // One signed transaction, sent on two branches.
    const data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'depositAndLimitBuy', args: [c.cashToken, usdc('3000'), AAPL, shares('3'), price('100'), DAY, deadline] });
    const nonce = await f.publicClient.getTransactionCount({ address: alice.address });
    const signed = await alice.wallet.signTransaction({
      to: c.stockRouter,
      data,
      nonce,
      gas: 1_000_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
      chainId: ANVIL_CHAIN_ID,
      type: 'eip1559',
    } as never);
    const fork = await f.snapshot();
    const first = await confirm(f, f.publicClient.sendRawTransaction({ serializedTransaction: signed }));
    await indexer.syncOnce();
    const [op] = await listCashOperationsByTx(db, first.transactionHash);
    expect(op.operationId).toBe(operationIdOf(first.transactionHash, 0));
    expect(op.blockNumber).toBe(Number(first.blockNumber));

    await f.revert(fork);
    await mineBlocks(f, 1);
    const second = await confirm(f, f.publicClient.sendRawTransaction({ serializedTransaction: signed }));
    expect(second.transactionHash).toBe(first.transactionHash);
    expect(second.blockNumber).toBe(first.blockNumber + 1n);
    await indexer.syncOnce();
    const ops = await listCashOperationsByTx(db, second.transactionHash);
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ operationId: op.operationId, blockNumber: Number(second.blockNumber), status: 'completed' });
    const order = await getOrder(db, '1');
    expect(order).toMatchObject({ placeTxHash: second.transactionHash, blockNumber: Number(second.blockNumber), notional: musd('300').toString() });
    await expectEventsMatchChain(f, db);
  });

  test('pushed blocks: a gap is filled, a duplicate is skipped, the next block is appended', async () => {
    const indexer = newIndexer(f, db);
    await indexer.syncOnce();
    const cp = await indexer.checkpoint();
    await depositUsdc(f, alice, usdc('100')); // approve + deposit: two blocks
    const third = await depositUsdc(f, bob, usdc('200'));
    expect(third.blockNumber).toBeGreaterThan((cp?.number ?? 0n) + 2n);
    expect(await indexer.deliverBlock(third.blockHash)).toBe('gap-filled');
    const count = await expectEventsMatchChain(f, db);
    expect(await indexer.deliverBlock(third.blockHash)).toBe('duplicate');
    const earlier = await f.publicClient.getBlock({ blockNumber: third.blockNumber - 1n });
    expect(await indexer.deliverBlock(earlier.hash)).toBe('duplicate');
    expect(await expectEventsMatchChain(f, db)).toBe(count);
    const next = await routerCall(f, bob, 'withdraw', [contracts(f).cashToken, usdc('20')]);
    expect(await indexer.deliverBlock(next.receipt.blockHash)).toBe('appended');
    await expectEventsMatchChain(f, db);
    expect(await listCashOperationsByTx(db, next.receipt.transactionHash)).toHaveLength(1);
    // A block from an abandoned branch is ignored.
    const fork = await f.snapshot();
    const orphan = await depositUsdc(f, carol, usdc('10'));
    await f.revert(fork);
    await mineBlocks(f, 2);
    expect(await indexer.deliverBlock(orphan.blockHash)).toBe('stale');
  });

  test('confirmations: a block is indexed only once it is that deep', async () => {
    const indexer = newIndexer(f, db, { confirmations: 2 });
    const deposit = await depositUsdc(f, alice, usdc('100'));
    const { head } = await indexer.syncOnce();
    expect(head).toBe(deposit.blockNumber - 2n);
    expect(await listCashOperationsByTx(db, deposit.transactionHash)).toEqual([]);
    expect(await indexer.deliverBlock(deposit.blockHash)).toBe('unconfirmed');
    await mineBlocks(f, 2);
    await indexer.start();
    try {
      await indexer.waitForBlock(deposit.blockNumber, 5_000);
    } finally {
      await indexer.stop();
    }
    expect(await listCashOperationsByTx(db, deposit.transactionHash)).toHaveLength(1);
  });
});

describe('indexer resilience', () => {
  test('a batch whose write fails leaves nothing behind: the next sync re-derives it, nothing applied twice', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tokex-indexer-busy-'));
    const file = path.join(dir, 'db.sqlite');
    const db = await openDatabase({ sqlitePath: file, connectTimeoutMs: 200 });
    try {
      await depositUsdc(f, alice, usdc('1000'));
      const placed = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('2'), price('100'), DAY, deadline]);
      const indexer = newIndexer(f, db);
      await indexer.syncOnce();
      await settle(f, [{ orderId: placed.result, quantity: shares('1'), price: price('100') }], []);
      // Another connection holds the write lock: the batch with the fill cannot be written.
      const other = await openDatabase({ sqlitePath: file, migrate: false });
      await sql`begin immediate`.execute(other.kysely);
      await expect(indexer.syncOnce()).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
      await sql`rollback`.execute(other.kysely);
      await other.close();
      // The failed batch's projection (the fill) was never stored, so it must not be reused either.
      await indexer.syncOnce();
      const order = await getOrder(db, String(placed.result));
      expect(order?.filledQuantity).toBe(String(shares('1')));
      expect(await listOrderFills(db, String(placed.result))).toHaveLength(1);
      await expectEventsMatchChain(f, db);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a process killed while committing resumes from its checkpoint without skipping or doubling', async () => {
    await activity(6);
    const engines: Array<{ env: Record<string, string>; open: () => Promise<Db>; cleanup: () => Promise<void> }> = [];
    const dir = mkdtempSync(path.join(tmpdir(), 'tokex-indexer-crash-'));
    engines.push({ env: { SQLITE_PATH: path.join(dir, 'db.sqlite') }, open: () => openDatabase({ sqlitePath: path.join(dir, 'db.sqlite') }), cleanup: async () => rmSync(dir, { recursive: true, force: true }) });
    const url = process.env.DATABASE_URL;
    if (url) {
      const schema = uniqueSchemaName('crash');
      engines.push({
        env: { DATABASE_URL: url, DB_SCHEMA: schema },
        open: () => openDatabase({ url, schema }),
        cleanup: async () => {
          const admin = await openDatabase({ url, migrate: false });
          await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.kysely);
          await admin.close();
        },
      });
    }
    const head = Number(await f.publicClient.getBlockNumber());
    for (const engine of engines) {
      try {
        // Migrate first so that the child's start-up is quick.
        await (await engine.open()).close();
        const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./fixtures/indexer-child.ts', import.meta.url))], {
          env: { ...process.env, ...engine.env, RPC_URL: f.rpcUrl, DEPLOYMENT: JSON.stringify(f.deployment) },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let ranges = 0;
        await new Promise<void>((resolve, reject) => {
          child.once('exit', () => reject(new Error('indexer child exited before it was killed')));
          child.stdout.on('data', (chunk: Buffer) => {
            ranges += String(chunk).split('\n').filter((l) => l.startsWith('range')).length;
            if (ranges >= 15) resolve();
          });
        });
        child.removeAllListeners('exit');
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;

        const db = await engine.open();
        try {
          const cp = await getCheckpoint(db, 'stock');
          expect(cp?.number).toBeGreaterThan(0);
          expect(cp?.number).toBeLessThan(head);
          const indexer = newIndexer(f, db);
          await indexer.syncOnce();
          await expectEventsMatchChain(f, db);
          await expectOrdersMatchChain(db);
          expect(await listStockOperationsByTx(db, (await db.kysely.selectFrom('stock_operations').select('tx_hash').executeTakeFirstOrThrow()).tx_hash)).toHaveLength(1);
        } finally {
          await db.close();
        }
      } finally {
        await engine.cleanup();
      }
    }
  });

  test('a node that answers log ranges slowly, one at a time, still gets a catch-up written as one batch', async () => {
    // eth_getLogs answers 300 ms apart (each range waits for the one before), longer than a
    // momentary stall: the ranges already requested belong to the batch being gathered, which
    // waits for them while its window lasts instead of being written in pieces.
    const target = new URL(f.rpcUrl);
    let queue: Promise<unknown> = Promise.resolve();
    let getLogs = 0;
    const proxy: Server = createServer((req, res) => {
      const body: Buffer[] = [];
      req.on('data', (c: Buffer) => body.push(c));
      req.on('end', () => {
        const text = Buffer.concat(body);
        const forward = async () => {
          const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        };
        // The node's latency under test, not a wait of the test: each eth_getLogs answers 300 ms after the one before.
        const slow = text.includes('"eth_getLogs"');
        if (slow) getLogs++;
        const done = slow ? (queue = queue.then(() => new Promise((r) => setTimeout(r, 300))).then(forward)) : forward();
        done.catch(() => req.socket.destroy());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => lines.push(l) } as unknown as NodeJS.WritableStream });
    const db = await testDatabases[0].open();
    try {
      await mineBlocks(f, 16);
      const head = Number(await f.publicClient.getBlockNumber());
      const { publicClient } = createChainClients({ rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, chainId: ANVIL_CHAIN_ID, timeoutMs: 5_000 });
      const ranges: Array<{ from: number; to: number }> = [];
      const indexer = createStockIndexer({
        db,
        publicClient,
        deployment: f.deployment,
        batchBlocks: 4,
        startBlock: head - 15,
        logger,
        onRange: (r) => ranges.push({ from: r.from, to: r.to }),
      });
      expect(Number((await indexer.syncOnce()).head)).toBe(head);
      expect(ranges).toEqual([
        { from: head - 15, to: head - 12 },
        { from: head - 11, to: head - 8 },
        { from: head - 7, to: head - 4 },
        { from: head - 3, to: head },
      ]);
      expect(getLogs).toBe(4);
      const batches = lines.map((l) => JSON.parse(l) as { msg: string; from?: number; to?: number }).filter((l) => l.msg === 'indexer: blocks indexed');
      expect(batches).toEqual([expect.objectContaining({ from: head - 15, to: head })]);
    } finally {
      await db.close();
      await new Promise((r) => proxy.close(r));
    }
  });

  test('chain outages are retried with backoff and never crash the loop; it catches up when the node is back', async () => {
    let up = false;
    const target = new URL(f.rpcUrl);
    // A real TCP hop in front of anvil that can refuse service (an RPC outage).
    const proxy: Server = createServer((req, res) => {
      if (!up) {
        req.socket.destroy();
        return;
      }
      const body: Buffer[] = [];
      req.on('data', (c: Buffer) => body.push(c));
      req.on('end', async () => {
        try {
          const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(body) });
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        } catch {
          req.socket.destroy();
        }
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (l: string) => lines.push(l) } as unknown as NodeJS.WritableStream });
    const db = await testDatabases[0].open();
    try {
      const { publicClient } = createChainClients({ rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, chainId: ANVIL_CHAIN_ID, timeoutMs: 1_000 });
      const behindProxy = createStockIndexer({ db, publicClient, deployment: f.deployment, pollMs: 10, logger });
      await behindProxy.start();
      // Until the loop has failed twice (retried once after its backoff), not for a fixed time.
      const failures = () => lines.map((l) => JSON.parse(l) as { msg: string; failures?: number }).filter((l) => l.msg.includes('sync failed'));
      await until(async () => failures(), (f) => f.some((l) => (l.failures ?? 0) >= 2), 20_000);
      expect(await behindProxy.checkpoint()).toBeUndefined();
      await expect(behindProxy.waitForBlock(1n, 100)).rejects.toThrow(/not indexed/);
      up = true;
      const deposit = await depositUsdc(f, alice, usdc('10'));
      await behindProxy.waitForBlock(deposit.blockNumber, 10_000);
      await behindProxy.stop();
      expect(await listCashOperationsByTx(db, deposit.transactionHash)).toHaveLength(1);
      const warnings = lines.map((l) => JSON.parse(l) as { msg: string; err?: { code?: string } });
      expect(warnings.some((w) => w.msg.includes('sync failed') && w.err?.code === 'CHAIN_UNAVAILABLE')).toBe(true);
      // Nothing in the log carries the RPC address.
      expect(lines.join('\n')).not.toContain(String((proxy.address() as AddressInfo).port));
    } finally {
      await db.close();
      await new Promise((r) => proxy.close(r));
    }
  });
});
