/**
 * Splits applied by the scheduler on a real anvil, on SQLite (and PostgreSQL when DATABASE_URL is
 * set): nothing before the split's moment, one owner transaction at it, the indexer restating the
 * stock's open order and re-reading every holder, the row `applied` with the transaction; a retry
 * after the chain applied it records instead of splitting twice; a key other than the owner's fails
 * the action with the contract's reason; a file split after the venue's start is taken up.
 */
import { type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { senderFor } from '../../src/chain/tx-sender.ts';
import { newYorkDate, newYorkDayStart } from '../../src/marketdata/corporate-actions.ts';
import { SPLIT_NOTICE_MS } from '../../src/marketdata/price-splits.ts';
import type { Db } from '../../src/storage/database.ts';
import type { CorporateActionRegistry } from '../../src/stock/corporate-actions/corporate-action-registry.ts';
import { getCorporateAction, markActionFailed, rescheduleFailedAction } from '../../src/stock/corporate-actions/corporate-action-store.ts';
import { createDividendScheduler } from '../../src/stock/corporate-actions/dividend-scheduler.ts';
import { createSplitApplier, splitRefOf } from '../../src/stock/corporate-actions/split-applier.ts';
import { getOrder } from '../../src/stock/store/stock-order-store.ts';
import { getPosition } from '../../src/stock/store/stock-position-store.ts';
import { createStockIndexer, type StockIndexChange, type StockIndexer } from '../../src/stock/indexer/stock-indexer.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { confirm as confirmTx } from '../chain/chain-test-helpers.ts';
import { DAY, venueRegistry } from '../support/corporate-action-venue.ts';
import { testDatabases } from '../support/test-databases.ts';

const E18 = 10n ** 18n;
const M = 10n ** 36n;

describe.each(testDatabases)('splits on anvil ($name)', ({ open }) => {
  let f: ChainFixture;
  let db: Db;
  let indexer: StockIndexer;
  let registry: CorporateActionRegistry;
  /** What the indexer hands the streams after each batch. */
  const changes: StockIndexChange[] = [];
  let clock = Date.now();
  const exDate = newYorkDate(Date.now() + 2 * DAY);
  const fileActions = [{ symbol: 'SPY', type: 'SPLIT' as const, exDate, ratio: '3:1' }];
  const c = () => f.deployment.contracts;
  const confirm = (hash: Promise<Hex>) => confirmTx(f, hash);
  const scheduler = (sender = senderFor({ publicClient: f.publicClient, account: f.operator.account })) =>
    createDividendScheduler({
      db,
      publicClient: f.publicClient,
      sender,
      deployment: f.deployment,
      withholdingBps: 3000,
      fileActions,
      now: () => clock,
      splits: createSplitApplier({ db, publicClient: f.publicClient, sender, stocks: c().stocks, fromBlock: 0n, now: () => clock }),
    });
  const multiplierOf = (stock: Address) => f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'multiplier' });

  beforeAll(async () => {
    f = await startChainFixture();
    db = await open();
    indexer = createStockIndexer({ db, publicClient: f.publicClient, deployment: f.deployment, onCommitted: (c) => changes.push(c) });
    registry = venueRegistry(f, db, { fileActions, symbols: ['AAPL', 'MSFT', 'TSLA', 'NVDA', 'SPY'], now: () => clock });
  }, 120_000);

  afterAll(async () => {
    await indexer?.stop();
    await db?.close();
    await f?.stop();
  });

  it('applies a 4:1 split at 00:00 New York on the ex-date in one owner transaction; the indexer restates the open sell and every holder', async () => {
    const aapl = c().stocks.AAPL;
    const [, u1] = f.users;
    await confirm(u1.wallet.writeContract({ address: aapl, abi: stockAbi, functionName: 'approve', args: [c().stockRouter, 10n * E18] }));
    await confirm(u1.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'depositStock', args: [aapl, 10n * E18] }));
    const deadline = Math.floor(Date.now() / 1000) + 10 * 86_400;
    await confirm(u1.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [aapl, 1, 6n * E18, 300n * E18, 0, deadline], gas: 400_000n }));
    const orderId = String((await f.publicClient.readContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' })) - 1n);
    await indexer.syncOnce();
    const added = await registry.add({ symbol: 'AAPL', type: 'SPLIT', exDate, ratio: '4:1' });
    expect(added).toMatchObject({ actionId: `AAPL-${exDate}`, type: 'SPLIT', ratio: '4:1', status: 'scheduled' });

    const s = scheduler();
    // A minute before the ex-date: nothing.
    clock = newYorkDayStart(exDate) - 60_000;
    expect(await s.runOnce()).toEqual({ applied: [], failed: [], waiting: [] });
    expect(await multiplierOf(aapl)).toBe(M);

    clock = newYorkDayStart(exDate);
    const run = await s.runOnce();
    expect(run.failed).toEqual([]);
    expect(run.applied).toEqual([`AAPL-${exDate}`, `SPY-${exDate}`]);
    expect(await multiplierOf(aapl)).toBe(4n * M);
    // The file's SPY split after the venue's start was taken up and applied too (3:1).
    expect(await multiplierOf(c().stocks.SPY)).toBe(3n * M);
    const row = (await getCorporateAction(db, added.actionId))!;
    expect(row.status).toBe('applied');
    const receipt = await f.publicClient.getTransactionReceipt({ hash: row.txHash as Hex });
    expect(receipt.status).toBe('success');
    expect((await registry.list('AAPL'))[0]).toMatchObject({ exDate, type: 'SPLIT', status: 'applied', txHash: row.txHash });

    changes.length = 0;
    await indexer.syncOnce();
    expect(await getOrder(db, orderId)).toMatchObject({ quantity: (24n * E18).toString(), price: (75n * E18).toString(), multiplier: (4n * M).toString(), status: 'Open' });
    // The streams get the restated order and every holder's wallet (its balances re-read).
    const streamed = changes.flatMap((ch) => ch.updates.orders).find((u) => u.order.orderId === orderId);
    expect(streamed?.order).toMatchObject({ quantity: (24n * E18).toString(), price: (75n * E18).toString() });
    const wallets = new Set(changes.flatMap((ch) => ch.wallets));
    for (const u of f.users.slice(0, 3)) expect(wallets.has(u.address.toLowerCase())).toBe(true);
    expect(await getPosition(db, u1.address, aapl)).toMatchObject({ exchangeBalance: (16n * E18).toString(), lockedBalance: (24n * E18).toString() });

    // Later runs: nothing more.
    clock += 60_000;
    expect(await s.runOnce()).toEqual({ applied: [], failed: [], waiting: [] });
    expect(await multiplierOf(aapl)).toBe(4n * M);
  });

  it('a retry after the chain applied the split records its transaction instead of splitting twice', async () => {
    const tsla = c().stocks.TSLA;
    const date = newYorkDate(clock + 3 * DAY);
    const added = await registry.add({ symbol: 'TSLA', type: 'SPLIT', exDate: date, ratio: '2:1' });
    // The split went out (a process that stopped before recording it), and the row still says scheduled.
    const sent = await confirm(f.operator.writeContract({ address: tsla, abi: stockAbi, functionName: 'split', args: [2n, 1n, splitRefOf(added.actionId)] }));
    clock = newYorkDayStart(date) + SPLIT_NOTICE_MS;
    const run = await scheduler().runOnce();
    expect(run.applied).toEqual([added.actionId]);
    expect(await multiplierOf(tsla)).toBe(2n * M);
    expect((await getCorporateAction(db, added.actionId))).toMatchObject({ status: 'applied', txHash: sent.transactionHash });
  });

  it('a key other than the Stock owner fails the split with the contract’s reason; a retry with the owner applies it', async () => {
    const msft = c().stocks.MSFT;
    const date = newYorkDate(clock + 5 * DAY);
    const added = await registry.add({ symbol: 'MSFT', type: 'SPLIT', exDate: date, ratio: '1:10' });
    clock = newYorkDayStart(date);
    const stranger = f.users[3];
    const run = await scheduler(senderFor({ publicClient: f.publicClient, account: stranger.wallet.account })).runOnce();
    expect(run.failed).toEqual([added.actionId]);
    const failed = (await getCorporateAction(db, added.actionId))!;
    expect(failed.status).toBe('failed');
    expect(failed.reason).toContain('OwnableUnauthorizedAccount');
    expect(await multiplierOf(msft)).toBe(M);

    expect(await rescheduleFailedAction(db, added.actionId, clock)).toBe(true);
    const again = await scheduler().runOnce();
    expect(again.applied).toEqual([added.actionId]);
    expect(await multiplierOf(msft)).toBe(M / 10n);
  });

  it('a split due while its row was failed is not applied; the registry refuses a zero or identity ratio', async () => {
    const nvda = c().stocks.NVDA;
    const date = newYorkDate(clock + 7 * DAY);
    const added = await registry.add({ symbol: 'NVDA', type: 'SPLIT', exDate: date, ratio: '10:1' });
    await markActionFailed(db, added.actionId, 'operator stopped it', clock);
    clock = newYorkDayStart(date);
    expect(await scheduler().runOnce()).toEqual({ applied: [], failed: [], waiting: [] });
    expect(await multiplierOf(nvda)).toBe(M);
    await expect(registry.add({ symbol: 'NVDA', type: 'SPLIT', exDate: newYorkDate(clock + DAY), ratio: '0:3' })).rejects.toThrow('ratio: required for a SPLIT, like "10:1"');
    await expect(registry.add({ symbol: 'NVDA', type: 'SPLIT', exDate: newYorkDate(clock + DAY), ratio: '5:5' })).rejects.toThrow('ratio: must change the share count');
  });
});
