/**
 * A split through the venue's timelock with a delay (docs/corporate-actions.md, "Splits";
 * docs/security.md, "Owner and upgrader"), on a real anvil and SQLite: with the Stock tokens owned by
 * a timelock whose delay is one hour, the split applier does nothing while the split's moment is more
 * than the delay ahead; the delay before it, it schedules `Stock.split` once (one `CallScheduled`,
 * executable exactly at the split's moment and listed among the scheduled changes); a run before the
 * moment sends nothing and leaves the multiplier; once the chain's time reaches the moment the
 * applier executes the operation, the multiplier changes and the row is `applied` with that
 * transaction.
 */
import { parseAbiItem, parseEventLogs, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stockAbi, venueTimelockAbi } from '../../src/chain/abi/generated/index.ts';
import type { DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { handOverToTimelock, readScheduledCalls } from '../../src/chain/owner-actions.ts';
import { senderFor } from '../../src/chain/tx-sender.ts';
import { newYorkDate, newYorkDayStart } from '../../src/marketdata/corporate-actions.ts';
import { splitEffectiveAt } from '../../src/marketdata/price-splits.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import type { Db } from '../../src/storage/database.ts';
import { getCorporateAction } from '../../src/stock/corporate-actions/corporate-action-store.ts';
import { createSplitApplier, splitRefOf } from '../../src/stock/corporate-actions/split-applier.ts';
import { createDividendScheduler } from '../../src/stock/corporate-actions/dividend-scheduler.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import { venueRegistry } from '../support/corporate-action-venue.ts';

const DELAY = 3600;
const M = 10n ** 36n;
const DAY = 86_400_000;
const callScheduled = parseAbiItem('event CallScheduled(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data, bytes32 predecessor, uint256 delay)');
const callExecuted = parseAbiItem('event CallExecuted(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data)');

describe('a split through the timelock with a delay', () => {
  let f: ChainFixture;
  let db: Db;
  let record: DeploymentRecord;
  let timelock: Address;

  beforeAll(async () => {
    f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
    db = await openTestSqlite();
    const { chainId, ...stock } = f.deployment;
    record = structuredClone({ chainId, venues: { stock } }) as DeploymentRecord;
    const r = await handOverToTimelock({ publicClient: f.publicClient, wallet: f.operator, record, delaySeconds: DELAY });
    expect(r.pending).toEqual([]);
    timelock = record.venues.stock.timelock!.address as Address;
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await f?.stop();
  });

  it('is scheduled the delay before its moment, not applied before it, and applied once the chain reaches it', async () => {
    const symbol = DEMO_SYMBOLS[0].symbol;
    const stock = f.deployment.contracts.stocks[symbol];
    expect(await f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'owner' })).toBe(timelock);
    expect(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getMinDelay' })).toBe(BigInt(DELAY));
    const multiplier = () => f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'multiplier' });
    const nonce = () => f.publicClient.getTransactionCount({ address: f.operator.account.address });
    const fromBlock = (await f.publicClient.getBlockNumber()) + 1n;
    const scheduledLogs = () => f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock });
    /** The applier's clock and the chain's, moved together: the next block is mined at `ms`. */
    const setTime = async (ms: number) => {
      await f.testClient.setNextBlockTimestamp({ timestamp: BigInt(Math.floor(ms / 1000)) });
      await f.testClient.mine({ blocks: 1 });
      clock = ms;
    };

    let clock = Date.now();
    const exDate = newYorkDate(clock + 3 * DAY);
    const registry = venueRegistry(f, db, { fileActions: [], symbols: [symbol], now: () => clock });
    const added = await registry.add({ symbol, type: 'SPLIT', exDate, ratio: '4:1' });
    const action = async () => (await getCorporateAction(db, added.actionId))!;
    const moment = splitEffectiveAt(exDate, (await action()).createdAt);
    expect(moment).toBe(newYorkDayStart(exDate));
    expect(moment % 1000).toBe(0);
    const sender = senderFor({ publicClient: f.publicClient, account: f.operator.account });
    const applier = createSplitApplier({ db, publicClient: f.publicClient, sender, stocks: f.deployment.contracts.stocks, fromBlock: 0n, now: () => clock });

    // More than the delay ahead: nothing is sent.
    await setTime(moment - DELAY * 1000 - 60_000);
    let n = await nonce();
    expect(await applier.apply(await action())).toBe('waiting');
    expect(await nonce()).toBe(n);
    expect(await scheduledLogs()).toEqual([]);

    // The delay before the moment: scheduled once, executable exactly at the moment, and visible.
    // The chain a second before it, and the block that will hold the schedule pinned to that
    // moment: left to anvil, that block is stamped from the wall clock, a second late whenever a
    // loaded machine takes a second between the two (as in a full suite run).
    await setTime(moment - DELAY * 1000 - 1000);
    clock = moment - DELAY * 1000;
    await f.testClient.setNextBlockTimestamp({ timestamp: BigInt(clock / 1000) });
    expect(await applier.apply(await action())).toBe('waiting');
    const scheduled = await scheduledLogs();
    expect(scheduled).toHaveLength(1);
    const ref = splitRefOf(added.actionId);
    expect(scheduled[0].args).toMatchObject({ target: stock, delay: BigInt(DELAY) });
    const id = scheduled[0].args.id as Hex;
    expect(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getTimestamp', args: [id] })).toBe(BigInt(moment / 1000));
    const listed = await readScheduledCalls({ publicClient: f.publicClient, record, abis: [stockAbi] });
    expect(listed).toEqual([expect.objectContaining({ id, contract: `stock.stocks.${symbol}`, target: stock, functionName: 'split', args: ['4', '1', ref], readyAt: moment / 1000, timelock })]);
    expect(await multiplier()).toBe(M);
    expect((await action()).status).toBe('scheduled');

    // A second before the moment: still waiting, nothing sent, nothing scheduled twice.
    await setTime(moment - 1000);
    n = await nonce();
    expect(await applier.apply(await action())).toBe('waiting');
    expect(await nonce()).toBe(n);
    expect(await scheduledLogs()).toHaveLength(1);
    expect(await multiplier()).toBe(M);
    expect(await f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'splitApplied', args: [ref] })).toBe(false);

    // The chain reaches the moment: the operation is executed, the multiplier changes.
    await setTime(moment);
    expect(await applier.apply(await action())).toBe('applied');
    expect(await multiplier()).toBe(4n * M);
    const row = await action();
    expect(row.status).toBe('applied');
    const receipt = await f.publicClient.getTransactionReceipt({ hash: row.txHash as Hex });
    expect(receipt.to?.toLowerCase()).toBe(timelock.toLowerCase());
    const [ev] = parseEventLogs({ abi: stockAbi, eventName: 'MultiplierChanged', logs: receipt.logs });
    expect(ev.args).toMatchObject({ ref, oldMultiplier: M, newMultiplier: 4n * M });
    expect((await f.publicClient.getLogs({ address: timelock, event: callExecuted, fromBlock })).map((l) => l.args.id)).toEqual([id]);
    expect(await readScheduledCalls({ publicClient: f.publicClient, record, abis: [stockAbi] })).toEqual([]);

    // A later run finds it applied: nothing sent, not split twice.
    n = await nonce();
    expect(await applier.apply(await action())).toBe('applied');
    expect(await nonce()).toBe(n);
    expect(await multiplier()).toBe(4n * M);
  }, 120_000);
  it('the dividend scheduler hands a split to the applier the delay before its moment, so it applies on time', async () => {
    const symbol = DEMO_SYMBOLS[0].symbol;
    const stock = f.deployment.contracts.stocks[symbol];
    const multiplier = () => f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'multiplier' });
    const before = await multiplier();
    let clock = Number((await f.publicClient.getBlock()).timestamp) * 1000;
    const setTime = async (ms: number) => {
      await f.testClient.setNextBlockTimestamp({ timestamp: BigInt(Math.floor(ms / 1000)) });
      await f.testClient.mine({ blocks: 1 });
      clock = ms;
    };
    const exDate = newYorkDate(clock + 5 * DAY);
    const registry = venueRegistry(f, db, { fileActions: [], symbols: [symbol], now: () => clock });
    const added = await registry.add({ symbol, type: 'SPLIT', exDate, ratio: '2:1' });
    const moment = splitEffectiveAt(exDate, (await getCorporateAction(db, added.actionId))!.createdAt);
    const sender = senderFor({ publicClient: f.publicClient, account: f.operator.account });
    const splits = createSplitApplier({ db, publicClient: f.publicClient, sender, stocks: f.deployment.contracts.stocks, fromBlock: 0n, now: () => clock });
    expect(await splits.leadMs()).toBe(DELAY * 1000);
    const scheduler = createDividendScheduler({ db, publicClient: f.publicClient, sender, deployment: f.deployment, withholdingBps: 0, now: () => clock, splits });

    // The delay before the moment (the evening before the ex-date in New York): scheduled now.
    const fromBlock = (await f.publicClient.getBlockNumber()) + 1n;
    await setTime(moment - DELAY * 1000);
    expect(newYorkDate(clock) < exDate).toBe(true);
    expect(await scheduler.runOnce()).toEqual({ applied: [], failed: [], waiting: [added.actionId] });
    expect((await getCorporateAction(db, added.actionId))!.status).toBe('scheduled');
    // Ready the delay after the block that scheduled it: the moment, or the few seconds a loaded
    // node took to mine that block after it (without the lead it would be the whole delay late).
    const [scheduled] = await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock });
    const readyAt = Number(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getTimestamp', args: [scheduled.args.id!] })) * 1000;
    expect(readyAt).toBeGreaterThanOrEqual(moment - 1000);
    expect(readyAt - moment).toBeLessThan(60_000);
    // At the moment it is ready: applied.
    await setTime(Math.max(moment, readyAt));
    expect(await scheduler.runOnce()).toEqual({ applied: [added.actionId], failed: [], waiting: [] });
    expect(await multiplier()).toBe(2n * before);
  }, 120_000);
});
