/**
 * Cash dividends end to end on a real anvil with the real contracts, on SQLite (and PostgreSQL when
 * DATABASE_URL is set): holders in wallets and at the exchange (free and locked by an open sell
 * order), the stock indexer's holder table, the scheduler on an injected clock, the
 * DividendDistributor's root, funding, pushed payouts and a holder's own claim, and the state the
 * API's corporate-action rows show (the registry is what the route answers with).
 */
import { parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cashTokenAbi, dividendDistributorAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { toChainError } from '../../src/chain/chain-client.ts';
import { createTxSender, senderFor } from '../../src/chain/tx-sender.ts';
import { ValidationError } from '../../src/errors/app-error.ts';
import { newYorkDate, newYorkDayStart } from '../../src/marketdata/corporate-actions.ts';
import type { Db } from '../../src/storage/database.ts';
import type { CorporateActionRegistry } from '../../src/stock/corporate-actions/corporate-action-registry.ts';
import {
  getCorporateAction,
  listPayoutsOfAction,
  listPayoutsOfUser,
  rescheduleFailedAction,
} from '../../src/stock/corporate-actions/corporate-action-store.ts';
import { createDividendScheduler, distributionRefOf, type DividendScheduler } from '../../src/stock/corporate-actions/dividend-scheduler.ts';
import { createStockIndexer, type StockIndexer } from '../../src/stock/indexer/stock-indexer.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { confirm as confirmTx } from '../chain/chain-test-helpers.ts';
import { DAY, venueRegistry } from '../support/corporate-action-venue.ts';
import { testDatabases } from '../support/test-databases.ts';

const E18 = 10n ** 18n;

describe.each(testDatabases)('cash dividends on anvil ($name)', ({ open }) => {
  let f: ChainFixture;
  let db: Db;
  let indexer: StockIndexer;
  let registry: CorporateActionRegistry;
  let scheduler: DividendScheduler;
  let clock = Date.now();
  const exDate = newYorkDate(Date.now() + 2 * DAY);
  /** A wallet that receives AAPL by transfer: a holder with a fractional share count. */
  const outsider = privateKeyToAccount(`0x${'11'.repeat(32)}`).address.toLowerCase() as Address;
  const SPLIT_OFF = 33_333_333_333_333_333_333n;

  const fileActions = [{ symbol: 'SPY', type: 'DIVIDEND' as const, exDate, amount: '1.5', currency: 'USD' }];
  const c = () => f.deployment.contracts;
  const usdc = (who: Address) => f.publicClient.readContract({ address: c().cashToken, abi: cashTokenAbi, functionName: 'balanceOf', args: [who] });
  const confirm = (hash: Promise<Hex>) => confirmTx(f, hash);
  const makeScheduler = (over: Partial<Parameters<typeof createDividendScheduler>[0]> = {}) =>
    createDividendScheduler({
      db,
      publicClient: f.publicClient,
      sender: senderFor({ publicClient: f.publicClient, account: f.operator.account }),
      deployment: f.deployment,
      withholdingBps: 3000,
      fileActions,
      now: () => clock,
      pushBatchSize: 2,
      ...over,
    });

  beforeAll(async () => {
    f = await startChainFixture();
    db = await open();
    indexer = createStockIndexer({ db, publicClient: f.publicClient, deployment: f.deployment });
    const aapl = c().stocks.AAPL;
    const [, u1, u2, u3] = f.users;
    // u1: 40 AAPL at the exchange (free); u2: 30 at the exchange, 10 of them locked by a sell order.
    await confirm(u1.wallet.writeContract({ address: aapl, abi: stockAbi, functionName: 'approve', args: [c().stockRouter, 40n * E18] }));
    await confirm(u1.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'depositStock', args: [aapl, 40n * E18] }));
    await confirm(u2.wallet.writeContract({ address: aapl, abi: stockAbi, functionName: 'approve', args: [c().stockRouter, 30n * E18] }));
    await confirm(u2.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'depositStock', args: [aapl, 30n * E18] }));
    const deadline = Math.floor(Date.now() / 1000) + 3600;
    await confirm(
      u2.wallet.writeContract({ address: c().stockRouter, abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [aapl, 1, 10n * E18, 5000n * E18, 0, deadline], gas: 400_000n }),
    );
    // u3 hands a fractional number of shares to a wallet of its own.
    await confirm(u3.wallet.writeContract({ address: aapl, abi: stockAbi, functionName: 'transfer', args: [outsider, SPLIT_OFF] }));
    // The payer (the operator) holds the cash the dividends need.
    await confirm(f.operator.writeContract({ address: c().cashToken, abi: cashTokenAbi, functionName: 'mint', args: [f.operator.account.address, parseUnits('10000', 6)] }));
    await indexer.syncOnce();
    registry = venueRegistry(f, db, { fileActions, symbols: ['AAPL', 'MSFT', 'TSLA', 'NVDA', 'SPY'], now: () => clock });
    scheduler = makeScheduler();
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await indexer?.stop();
    await db?.close();
    await f?.stop();
  });

  it('waits for the ex-date, then pays every holder of record pro rata, the sum to the unit', async () => {
    const added = await registry.add({ symbol: 'AAPL', type: 'DIVIDEND', exDate, amount: '0.26' });
    expect(added).toMatchObject({ actionId: `AAPL-${exDate}`, status: 'scheduled', source: 'cli' });
    expect((await registry.list('AAPL'))[0]).toMatchObject({ symbol: 'AAPL', exDate, amount: '0.26', status: 'scheduled', txHash: null });

    // The day before: nothing happens.
    expect(await scheduler.runOnce()).toEqual({ applied: [], failed: [], waiting: [] });
    expect((await getCorporateAction(db, added.actionId))?.status).toBe('scheduled');

    const holders = [...f.users.map((u) => u.address.toLowerCase() as Address), outsider];
    const before = await Promise.all(holders.map(usdc));
    clock = newYorkDayStart(exDate) + 60_000;
    // SPY from the file is due the same day: taken up and paid too.
    const run = await scheduler.runOnce();
    expect(run.failed).toEqual([]);
    expect(run.applied).toContain(added.actionId);
    expect(run.applied).toContain(`SPY-${exDate}`);

    const a = (await getCorporateAction(db, added.actionId))!;
    expect(a).toMatchObject({ status: 'applied', withholdingBps: 3000, holders: 5, distributor: c().dividendDistributor!.toLowerCase() });
    expect(a.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    const recordBlock = BigInt(a.recordBlock!);

    // Shares of record: the whole supply at the record block, every holder's wallet + free + locked.
    const aapl = c().stocks.AAPL;
    const supply = await f.publicClient.readContract({ address: aapl, abi: stockAbi, functionName: 'totalSupply', blockNumber: recordBlock });
    expect(BigInt(a.sharesOfRecord!)).toBe(supply);
    expect(supply).toBe(BigInt(f.users.length) * 100n * E18);
    const payouts = await listPayoutsOfAction(db, a.actionId);
    const shares = Object.fromEntries(payouts.map((p) => [p.userAddress, BigInt(p.shares)]));
    expect(shares[f.users[1].address.toLowerCase()]).toBe(100n * E18); // 60 wallet + 40 free
    expect(shares[f.users[2].address.toLowerCase()]).toBe(100n * E18); // 70 wallet + 20 free + 10 locked
    expect(shares[f.users[3].address.toLowerCase()]).toBe(100n * E18 - SPLIT_OFF);
    expect(shares[outsider]).toBe(SPLIT_OFF);

    // The invariant: paid = amount per share × shares of record − withholding, to the unit.
    const expectedNet = (supply * 26_000_000n * 7000n) / 10n ** 24n;
    expect(BigInt(a.netAmount!)).toBe(expectedNet);
    expect(BigInt(a.grossAmount!) - BigInt(a.withholdingAmount!)).toBe(expectedNet);
    // SPY (the file's) was paid to the same wallets in the same run: each received both payouts.
    const spy = (await getCorporateAction(db, `SPY-${exDate}`))!;
    const spyPayouts = await listPayoutsOfAction(db, spy.actionId);
    expect(BigInt(spy.netAmount!)).toBe((BigInt(f.users.length) * 100n * E18 * 150_000_000n * 7000n) / 10n ** 24n);
    const after = await Promise.all(holders.map(usdc));
    const received = after.map((v, i) => v - before[i]);
    expect(received.reduce((s, v) => s + v, 0n)).toBe(expectedNet + BigInt(spy.netAmount!));
    for (const [i, h] of holders.entries()) {
      const p = payouts.find((x) => x.userAddress === h)!;
      expect(received[i]).toBe(BigInt(p.amount) + BigInt(spyPayouts.find((x) => x.userAddress === h)?.amount ?? '0'));
      expect(p.status).toBe('paid');
      expect(p.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    }
    expect(payouts.reduce((s, p) => s + BigInt(p.amount), 0n)).toBe(expectedNet);

    // On chain: the root the database holds, funded with exactly the net, all of it paid.
    const distributor = c().dividendDistributor!;
    const id = await f.publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'distributionOf', args: [distributionRefOf(a.actionId)] });
    expect(id.toString()).toBe(a.distributionId);
    const d = await f.publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'distribution', args: [id] });
    expect(d).toMatchObject({ merkleRoot: a.merkleRoot, total: expectedNet, paid: expectedNet, recordBlock, stock: aapl, token: c().cashToken });
    const claimed = await f.publicClient.getContractEvents({ address: distributor, abi: dividendDistributorAbi, eventName: 'Claimed', args: { distributionId: id }, fromBlock: recordBlock });
    expect(claimed.reduce((s, e) => s + e.args.amount!, 0n)).toBe(expectedNet);
    expect(claimed).toHaveLength(5);
    const funding = await f.publicClient.getTransactionReceipt({ hash: a.txHash as Hex });
    expect(parseEventLogs({ abi: dividendDistributorAbi, eventName: 'DistributionCreated', logs: funding.logs })[0].args.total).toBe(expectedNet);

    // The API's rows: applied with the transaction, the totals, and the holder's DIVIDEND operation.
    const holder = f.users[1].address.toLowerCase();
    const [row] = await registry.list('AAPL', { userAddress: holder });
    expect(row).toMatchObject({ status: 'applied', txHash: a.txHash, dividend: { netAmount: '72.8', withholdingAmount: '31.2', withholdingBps: 3000, holders: 5, grossAmount: '104' } });
    expect(row.operations).toEqual([
      expect.objectContaining({ operationType: 'DIVIDEND', operationStatus: 'completed', userAddress: holder, symbol: 'AAPL', shares: '100', amount: '18.2', txHash: payouts.find((p) => p.userAddress === holder)!.txHash }),
    ]);
    // A second run has nothing left to do.
    expect(await scheduler.runOnce()).toEqual({ applied: [], failed: [], waiting: [] });
  });

  it('a holder claims its leaf itself once (a second claim reverts); the push skips it and records the holder\'s transaction', async () => {
    await registry.add({ symbol: 'MSFT', type: 'DIVIDEND', exDate, amount: '0.83' });
    const fundOnly = makeScheduler({ maxPushBatchesPerRun: 0 });
    expect((await fundOnly.runOnce()).waiting).toEqual([`MSFT-${exDate}`]);
    const a = (await getCorporateAction(db, `MSFT-${exDate}`))!;
    expect(a.status).toBe('scheduled');
    expect(a.distributionId).not.toBeNull();

    const me = f.users[0];
    const [mine] = await listPayoutsOfUser(db, me.address, [a.actionId]);
    expect(mine.status).toBe('pending');
    const distributor = c().dividendDistributor!;
    const args = [BigInt(a.distributionId!), me.address, BigInt(mine.amount), mine.proof] as const;
    const wrong = [args[0], args[1], args[2] + 1n, args[3]] as const;
    await expect(f.publicClient.simulateContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'claim', args: wrong, account: me.address }).catch((e) => Promise.reject(toChainError(e)))).rejects.toMatchObject({
      errorName: 'InvalidProof',
    });
    const before = await usdc(me.address);
    const claim = await confirm(me.wallet.writeContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'claim', args }));
    expect((await usdc(me.address)) - before).toBe(BigInt(mine.amount));
    await expect(f.publicClient.simulateContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'claim', args, account: me.address }).catch((e) => Promise.reject(toChainError(e)))).rejects.toMatchObject({
      errorName: 'AlreadyClaimed',
    });

    expect((await scheduler.runOnce()).applied).toEqual([a.actionId]);
    const payouts = await listPayoutsOfAction(db, a.actionId);
    expect(payouts.every((p) => p.status === 'paid')).toBe(true);
    expect(payouts.find((p) => p.userAddress === me.address.toLowerCase())!.txHash).toBe(claim.transactionHash);
    // Paid once: the holder's balance did not move again.
    expect((await usdc(me.address)) - before).toBe(BigInt(mine.amount));
    const sum = payouts.reduce((s, p) => s + BigInt(p.amount), 0n);
    expect(sum).toBe(BigInt(a.netAmount!));
    const d = await f.publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'distribution', args: [BigInt(a.distributionId!)] });
    expect(d.paid).toBe(d.total);
    const [row] = await registry.list('MSFT', { userAddress: me.address });
    expect(row.operations?.[0]).toMatchObject({ operationStatus: 'completed', txHash: claim.transactionHash, amount: (Number(mine.amount) / 1e6).toString() });
  });

  it('fails a dividend its payer cannot fund, naming both amounts; a retry after funding applies it', async () => {
    await registry.add({ symbol: 'TSLA', type: 'DIVIDEND', exDate, amount: '2' });
    const broke = ANVIL_ACCOUNTS[6];
    const poor = makeScheduler({ sender: createTxSender({ publicClient: f.publicClient, account: privateKeyToAccount(broke.privateKey) }) });
    expect((await poor.runOnce()).failed).toEqual([`TSLA-${exDate}`]);
    const [row] = await registry.list('TSLA');
    expect(row.status).toBe('failed');
    expect(row.reason).toBe(`the paying wallet ${broke.address.toLowerCase()} holds 0 of the cash token; the dividend needs 560`);
    expect(await rescheduleFailedAction(db, `TSLA-${exDate}`, clock)).toBe(true);
    expect((await scheduler.runOnce()).applied).toEqual([`TSLA-${exDate}`]);
    expect((await registry.list('TSLA'))[0]).toMatchObject({ status: 'applied', reason: null, dividend: { netAmount: '560' } });
  });

  it('waits while the indexer has not seen a holder of record, then pays it too', async () => {
    const late = privateKeyToAccount(`0x${'22'.repeat(32)}`).address.toLowerCase() as Address;
    const nvda = c().stocks.NVDA;
    await confirm(f.users[0].wallet.writeContract({ address: nvda, abi: stockAbi, functionName: 'transfer', args: [late, 5n * E18] }));
    await registry.add({ symbol: 'NVDA', type: 'DIVIDEND', exDate, amount: '0.01' });
    expect((await scheduler.runOnce()).waiting).toEqual([`NVDA-${exDate}`]);
    expect((await getCorporateAction(db, `NVDA-${exDate}`))!.recordBlock).toBeNull();
    await indexer.syncOnce();
    expect((await scheduler.runOnce()).applied).toEqual([`NVDA-${exDate}`]);
    const [paid] = await listPayoutsOfUser(db, late);
    expect(paid).toMatchObject({ shares: (5n * E18).toString(), status: 'paid' });
    // 5 shares × 0.01 × 70% = 0.035 USD.
    expect(paid.amount).toBe('35000');
  });

  it('refuses a dividend on an unknown symbol, in the past, or on a symbol\'s date already taken, naming the field', async () => {
    const refused = async (input: Parameters<CorporateActionRegistry['add']>[0]) => {
      const err = await registry.add(input).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(input)).toBeInstanceOf(ValidationError);
      return (err as Error).message;
    };
    const today = newYorkDate(clock);
    const yesterday = newYorkDate(clock - DAY);
    expect(await refused({ symbol: 'ZZZZ', type: 'DIVIDEND', exDate, amount: '1' })).toBe('symbol: "ZZZZ" is not listed');
    expect(await refused({ symbol: 'AAPL', type: 'DIVIDEND', exDate: yesterday, amount: '1' })).toBe(`exDate: ${yesterday} is in the past (today in New York is ${today})`);
    expect(await refused({ symbol: 'AAPL', type: 'DIVIDEND', exDate, amount: '0.5' })).toBe(`exDate: AAPL already has a corporate action on ${exDate}`);
    // The file's SPY action takes the date too.
    expect(await refused({ symbol: 'SPY', type: 'DIVIDEND', exDate, amount: '0.5' })).toBe(`exDate: SPY already has a corporate action on ${exDate}`);
    // A split of zero, or one that leaves the share count as it is.
    expect(await refused({ symbol: 'AAPL', type: 'SPLIT', exDate: newYorkDate(clock + 9 * DAY), ratio: '0:1' })).toBe('ratio: required for a SPLIT, like "10:1"');
    expect(await refused({ symbol: 'AAPL', type: 'SPLIT', exDate: newYorkDate(clock + 9 * DAY), ratio: '2:2' })).toBe('ratio: must change the share count');
    expect(await refused({ symbol: 'AAPL', type: 'DIVIDEND', exDate: newYorkDate(clock + 9 * DAY), amount: '0' })).toMatch(/^amount: /);
    // Nothing was stored by the refusals: the day's actions are the ones added above.
    expect((await registry.list()).filter((r) => r.exDate === exDate).map((r) => r.symbol).sort()).toEqual(['AAPL', 'MSFT', 'NVDA', 'SPY', 'TSLA']);
  });

  it('the distributor refuses a distribution from a non-operator and a second one for the same action', async () => {
    const outsiderWallet = f.users[3];
    const ref = distributionRefOf(`AAPL-${exDate}`);
    const args = [ref, c().stocks.AAPL, c().cashToken, `0x${'00'.repeat(32)}` as Hex, 1n, 1n] as const;
    await expect(
      f.publicClient.simulateContract({ address: c().dividendDistributor!, abi: dividendDistributorAbi, functionName: 'createDistribution', args, account: outsiderWallet.address }).catch((e) => Promise.reject(toChainError(e))),
    ).rejects.toMatchObject({ errorName: 'NotOperator' });
    await expect(
      f.publicClient.simulateContract({ address: c().dividendDistributor!, abi: dividendDistributorAbi, functionName: 'createDistribution', args, account: f.operator.account.address }).catch((e) => Promise.reject(toChainError(e))),
    ).rejects.toMatchObject({ errorName: 'DistributionExists' });
  });
});
