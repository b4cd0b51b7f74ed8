/**
 * The perp-engine role's workers on a real sequencer and database, each driven by `runOnce()` on a
 * fake clock: the collateral task (vault deposits credited once, reorgs reversed, withdrawals
 * confirmed), the mark-price task, the funding task and the demo market maker. Every expected price,
 * rate and amount is worked out by hand in the comments.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { START_ROWS, expectStartRows } from '../support/journal-start.ts';
import { EMPTY_BASIS, markPrice } from '../../src/perp/pricing/mark-price.ts';
import { fundingRate, impactPrice, premiumSample } from '../../src/perp/pricing/funding-rate.ts';
import { createInProcessGateway, type EngineGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import {
  collateralEventId,
  getCollateralEvent,
  listCollateralEventsPage,
  listOrphanedCollateralEvents,
  listRefusedCollateralEvents,
  listUnappliedCollateralEvents,
  rollbackCollateralEventsAbove,
  upsertCollateralEvents,
  type NewCollateralEvent,
} from '../../src/perp/store/collateral-event-store.ts';
import { appendJournal, lastJournalSeq, readJournalAfter, type JournalRow } from '../../src/perp/store/engine-journal-store.ts';
import { MAX_AMOUNT } from '../../src/perp/engine/perp-engine.ts';
import { createCollateralTask } from '../../src/perp/workers/collateral-task.ts';
import { createFundingTask } from '../../src/perp/workers/funding-task.ts';
import { createDemoTakerTask } from '../../src/perp/workers/demo-taker-task.ts';
import { createMarketMakerTask } from '../../src/perp/workers/market-maker-task.ts';
import { createMarkPriceTask, type IndexSource } from '../../src/perp/workers/mark-price-task.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { until } from '../support/poll.ts';

const USD = 1_000_000n;
const BTC = 'BTC-USD';
const AAPL = 'AAPL-USD';
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const MM = '0x00000000000000000000000000000000000000cc';
/** An hour boundary: a funding time. */
const H = 1_717_999_200_000;

/** Journal rows the sequencer writes on its first start (journal-start.ts): the workers' commands start at LISTED + 1. */
const LISTED = START_ROWS;

const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function deposit(account: string, amount: bigint, txN: number, blockNumber: number, logIndex = 0): NewCollateralEvent {
  return { kind: 'deposit', account, amount: amount.toString(), txHash: tx(txN), blockNumber, logIndex, blockTimestamp: H + blockNumber * 1_000, withdrawalId: null };
}

interface Logged {
  level: string;
  obj: object;
  msg?: string;
}

function collectingLogger() {
  const logs: Logged[] = [];
  const at = (level: string) => (obj: object, msg?: string) => void logs.push({ level, obj, msg });
  return { logs, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe.each(testDatabases)('perp workers ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const cleanup: Array<() => Promise<void>> = [];
  // Registered after useFreshDatabase: runs first, while the database is still open.
  afterEach(async () => {
    for (const stop of cleanup.splice(0).reverse()) await stop();
  });

  let clock = H;
  const now = () => clock;

  async function startSequencer(opts: { recentResults?: number } = {}): Promise<{ sequencer: EngineSequencer; gateway: EngineGateway }> {
    const sequencer = new EngineSequencer({ db, snapshotEvery: 0, ...opts });
    await sequencer.start();
    cleanup.push(async () => {
      if (sequencer.state === 'running') await sequencer.stop();
    });
    return { sequencer, gateway: createInProcessGateway(sequencer) };
  }

  const journal = (): Promise<JournalRow[]> => readJournalAfter(db, 0, 100_000);
  /** The journal after the listings, which are checked to be exactly those. */
  const workerJournal = async (): Promise<JournalRow[]> => {
    const rows = await journal();
    expectStartRows(rows);
    return rows.slice(LISTED);
  };
  const submitOk = async (gateway: EngineGateway, cmd: EngineCommand) => {
    const r = await gateway.submit(cmd);
    expect(r.code, `${cmd.id}: ${r.ok ? '' : r.message}`).toBe('OK');
    return r;
  };

  describe('collateral task', () => {
    it('credits each deposit row once, in chain order, even when run twice and after a crash between the credit and the mark', async () => {
      let { sequencer, gateway } = await startSequencer({ recentResults: 2 });
      clock = H + 5_000;
      await upsertCollateralEvents(db, [deposit(A, 100n * USD, 3, 11), deposit(A, 500n * USD, 1, 10, 4), deposit(B, 250n * USD, 2, 10, 7)]);
      const task = createCollateralTask({ db, gateway, now });
      expect(await task.runOnce()).toBe(3);

      expect(sequencer.engine.getAccount(A)!.collateral).toBe(600n * USD);
      expect(sequencer.engine.getAccount(B)!.collateral).toBe(250n * USD);
      // One deposit command per row, in (block, log index) order, keyed by the row.
      const ids = [`${tx(1)}-4`, `${tx(2)}-7`, `${tx(3)}-0`];
      expect((await workerJournal()).map((r) => [r.kind, r.commandId, r.ts, r.code])).toEqual(ids.map((id) => ['deposit', `dep:${id}`, H + 5_000, 'OK']));
      for (const id of ids) expect(await getCollateralEvent(db, id)).toMatchObject({ applied: true, appliedAt: H + 5_000, orphaned: false });

      // Again: nothing pending, nothing submitted.
      expect(await task.runOnce()).toBe(0);
      expect(await lastJournalSeq(db)).toBe(LISTED + 3);

      // A crash after the credit, before the mark: the row is unapplied again. The resubmitted
      // deposit is answered from the journal; the row is marked; nothing is credited twice.
      await db.kysely.updateTable('perp_collateral_events').set({ applied: 0, applied_at: null }).where('event_id', '=', ids[0]).execute();
      clock = H + 9_000;
      expect(await task.runOnce()).toBe(1);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(600n * USD);
      expect(await lastJournalSeq(db)).toBe(LISTED + 3);
      expect(await getCollateralEvent(db, ids[0])).toMatchObject({ applied: true, appliedAt: H + 9_000 });

      // The same after a real restart of the engine (answer looked up in the journal, not in memory).
      await sequencer.stop();
      ({ sequencer, gateway } = await startSequencer({ recentResults: 2 }));
      await db.kysely.updateTable('perp_collateral_events').set({ applied: 0, applied_at: null }).where('event_id', 'in', ids).execute();
      const restarted = createCollateralTask({ db, gateway, now });
      expect(await restarted.runOnce()).toBe(3);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(600n * USD);
      expect(sequencer.engine.getAccount(B)!.collateral).toBe(250n * USD);
      expect((await journal()).filter((r) => r.kind === 'deposit').length).toBe(3);
      expect(await lastJournalSeq(db)).toBe(LISTED + 3);
      expect(await listUnappliedCollateralEvents(db, 10)).toEqual([]);
    });

    it('reverses an applied deposit a reorg orphaned: collateral back exactly, row acknowledged, once', async () => {
      const { sequencer, gateway } = await startSequencer();
      await upsertCollateralEvents(db, [deposit(A, 500n * USD, 1, 10), deposit(A, 123_456_789n, 2, 11)]);
      const task = createCollateralTask({ db, gateway, now });
      expect(await task.runOnce()).toBe(2);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(623_456_789n);

      // Block 11 leaves the chain after it was credited; an unapplied deposit in block 12 just goes.
      await upsertCollateralEvents(db, [deposit(B, 7n * USD, 3, 12)]);
      await rollbackCollateralEventsAbove(db, 10);
      expect(await getCollateralEvent(db, `${tx(3)}-0`)).toBeUndefined();
      expect((await listOrphanedCollateralEvents(db, 10)).map((e) => e.eventId)).toEqual([`${tx(2)}-0`]);

      clock = H + 20_000;
      expect(await task.runOnce()).toBe(1);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(500n * USD);
      expect(sequencer.engine.getAccount(B)).toBeUndefined();
      const rows = await workerJournal();
      expect(rows.map((r) => [r.kind, r.commandId, r.code])).toEqual([
        ['deposit', `dep:${tx(1)}-0`, 'OK'],
        ['deposit', `dep:${tx(2)}-0`, 'OK'],
        ['withdraw', `rev:${tx(2)}-0`, 'OK'],
      ]);
      expect(JSON.parse(rows[2].command)).toMatchObject({ account: A, amount: '123456789', ts: H + 20_000 });
      // Acknowledged: the orphan row is gone, and a second round reverses nothing more.
      expect(await getCollateralEvent(db, `${tx(2)}-0`)).toBeUndefined();
      expect(await task.runOnce()).toBe(0);
      expect(await lastJournalSeq(db)).toBe(LISTED + 3);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(500n * USD);
    });

    it('reverses at once a deposit whose row a reorg removed between the credit and the mark', async () => {
      const { sequencer, gateway } = await startSequencer();
      await upsertCollateralEvents(db, [deposit(A, 40n * USD, 1, 10), deposit(A, 2n * USD, 2, 11)]);
      // The indexer rolls block 11 back while the engine is crediting it.
      const racing: Pick<EngineGateway, 'submit'> = {
        async submit(cmd) {
          if (cmd.id === `dep:${tx(2)}-0`) await rollbackCollateralEventsAbove(db, 10);
          return gateway.submit(cmd);
        },
      };
      const task = createCollateralTask({ db, gateway: racing, now });
      expect(await task.runOnce()).toBe(1);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(40n * USD);
      expect((await workerJournal()).map((r) => [r.commandId, r.code])).toEqual([
        [`dep:${tx(1)}-0`, 'OK'],
        [`dep:${tx(2)}-0`, 'OK'],
        [`rev:${tx(2)}-0`, 'OK'],
      ]);
      expect(await getCollateralEvent(db, `${tx(2)}-0`)).toBeUndefined();
    });

    it('a reversal the account cannot cover yet waits (logged once), is retried under a new id, and is taken once when it can be paid, across a restart', async () => {
      let { sequencer, gateway } = await startSequencer();
      const { logs, logger } = collectingLogger();
      const ev = `${tx(1)}-0`;
      await upsertCollateralEvents(db, [deposit(A, 100n * USD, 1, 10)]);
      clock = H;
      const task = createCollateralTask({ db, gateway, now, logger, reversalRetryMs: 30_000 });
      expect(await task.runOnce()).toBe(1);
      // The account withdraws most of the credit before the reorg.
      await submitOk(gateway, { kind: 'withdraw', id: 'user-withdraw', ts: clock, account: A, amount: 80n * USD });
      await rollbackCollateralEventsAbove(db, 9);

      // Refused (20 USD left of a 100 USD credit); the refusal is journalled under the first id.
      expect(await task.runOnce()).toBe(0);
      // Within the retry wait: no new attempt.
      clock = H + 29_999;
      expect(await task.runOnce()).toBe(0);
      // After it: a new id (the first one would be answered with its refusal for ever), refused again.
      clock = H + 30_000;
      expect(await task.runOnce()).toBe(0);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(20n * USD);
      expect((await workerJournal()).map((r) => [r.commandId, r.code])).toEqual([
        [`dep:${ev}`, 'OK'],
        ['user-withdraw', 'OK'],
        [`rev:${ev}`, 'INSUFFICIENT_BALANCE'],
        [`rev:${ev}:1`, 'INSUFFICIENT_BALANCE'],
      ]);
      expect((await listOrphanedCollateralEvents(db, 10)).map((e) => e.eventId)).toEqual([ev]);
      expect(logs.map((l) => [l.level, l.msg, (l.obj as { code: string }).code])).toEqual([
        ['error', 'perp collateral: reorged deposit cannot be reversed yet', 'INSUFFICIENT_BALANCE'],
      ]);

      // A restart (the attempt count is in memory only), and a new deposit on the new branch: the
      // deposit is credited, the earlier attempts are answered from the journal, the next one is taken.
      await sequencer.stop();
      ({ sequencer, gateway } = await startSequencer());
      await upsertCollateralEvents(db, [deposit(A, 200n * USD, 2, 10)]);
      const restarted = createCollateralTask({ db, gateway, now, logger });
      clock = H + 40_000;
      expect(await restarted.runOnce()).toBe(2);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(120n * USD);
      expect((await workerJournal()).slice(4).map((r) => [r.commandId, r.code])).toEqual([
        [`dep:${tx(2)}-0`, 'OK'],
        [`rev:${ev}:2`, 'OK'],
      ]);
      expect(await listOrphanedCollateralEvents(db, 10)).toEqual([]);
      expect(await getCollateralEvent(db, ev)).toBeUndefined();
      // Reversed once: further rounds change nothing.
      clock = H + 100_000;
      expect(await restarted.runOnce()).toBe(0);
      expect(await lastJournalSeq(db)).toBe(LISTED + 6);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(120n * USD);
      expect(logs).toHaveLength(1);
    });

    it('marks a withdrawal row applied without a command or a change of collateral', async () => {
      const { sequencer, gateway } = await startSequencer();
      await upsertCollateralEvents(db, [deposit(A, 100n * USD, 1, 10)]);
      const task = createCollateralTask({ db, gateway, now });
      await task.runOnce();
      // The engine debited the account (the API's withdraw); the vault's Withdrawn log follows.
      await submitOk(gateway, { kind: 'withdraw', id: 'w-1', ts: clock, account: A, amount: 30n * USD });
      const withdrawalId = `0x${'ab'.repeat(32)}`;
      await upsertCollateralEvents(db, [{ kind: 'withdrawal', account: A, amount: (30n * USD).toString(), txHash: tx(9), blockNumber: 12, logIndex: 2, blockTimestamp: H, withdrawalId }]);
      const before = await lastJournalSeq(db);

      clock = H + 30_000;
      expect(await task.runOnce()).toBe(1);
      expect(await getCollateralEvent(db, `${tx(9)}-2`)).toMatchObject({ kind: 'withdrawal', applied: true, appliedAt: H + 30_000, withdrawalId });
      expect(await lastJournalSeq(db)).toBe(before);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(70n * USD);

      // Orphaned, it is acknowledged without a reversal either.
      await rollbackCollateralEventsAbove(db, 11);
      expect(await task.runOnce()).toBe(1);
      expect(await getCollateralEvent(db, `${tx(9)}-2`)).toBeUndefined();
      expect(await lastJournalSeq(db)).toBe(before);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(70n * USD);
      expect(collateralEventId(tx(9), 2)).toBe(`${tx(9)}-2`);
    });

    it('a deposit the engine refuses (above its MAX_AMOUNT) is kept refused with its reason: not credited, not shown credited, not retried, never reversed', async () => {
      let { sequencer, gateway } = await startSequencer();
      const { logs, logger } = collectingLogger();
      // 10^30 + 1 token units: more than the engine takes in one command (10^24 USDC).
      const huge = MAX_AMOUNT + 1n;
      await upsertCollateralEvents(db, [deposit(A, 100n * USD, 1, 10), deposit(A, huge, 2, 11), deposit(B, 5n * USD, 3, 12)]);
      clock = H + 1_000;
      const task = createCollateralTask({ db, gateway, now, logger });
      expect(await task.runOnce()).toBe(3);

      // The deposits on either side are credited; the refused one credits nothing.
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(100n * USD);
      expect(sequencer.engine.getAccount(B)!.collateral).toBe(5n * USD);
      expect((await workerJournal()).map((r) => [r.commandId, r.code])).toEqual([
        [`dep:${tx(1)}-0`, 'OK'],
        [`dep:${tx(2)}-0`, 'INVALID'],
        [`dep:${tx(3)}-0`, 'OK'],
      ]);
      // Not applied (so never CREDITED), out of the pending list, kept with the engine's reason.
      expect(await getCollateralEvent(db, `${tx(2)}-0`)).toMatchObject({ applied: false, appliedAt: H + 1_000, orphaned: false, amount: huge.toString() });
      expect(await listUnappliedCollateralEvents(db, 10)).toEqual([]);
      const refusal = 'INVALID: amount: a positive bigint of micro-USD';
      expect((await listRefusedCollateralEvents(db, 10)).map((e) => [e.eventId, e.status, e.refusal])).toEqual([[`${tx(2)}-0`, 'refused', refusal]]);
      const page = await listCollateralEventsPage(db, { account: A, kind: 'deposit', offset: 0, limit: 10 });
      expect(page.total).toBe(2);
      expect(page.rows.map((e) => [e.eventId, e.status, e.refusal])).toEqual([
        [`${tx(2)}-0`, 'refused', refusal],
        [`${tx(1)}-0`, 'applied', null],
      ]);
      expect(logs.map((l) => [l.level, (l.obj as { eventId: string }).eventId, (l.obj as { code: string }).code])).toEqual([['error', `${tx(2)}-0`, 'INVALID']]);

      // Not tried again, by this task or after a restart.
      expect(await task.runOnce()).toBe(0);
      await sequencer.stop();
      ({ sequencer, gateway } = await startSequencer());
      expect(await createCollateralTask({ db, gateway, now, logger }).runOnce()).toBe(0);
      expect(await lastJournalSeq(db)).toBe(LISTED + 3);
      expect(logs).toHaveLength(1);

      // A reorg takes the refused row away with nothing to reverse; the applied one after it is reversed.
      await rollbackCollateralEventsAbove(db, 10);
      expect(await getCollateralEvent(db, `${tx(2)}-0`)).toBeUndefined();
      expect(await listRefusedCollateralEvents(db, 10)).toEqual([]);
      clock = H + 2_000;
      expect(await createCollateralTask({ db, gateway, now }).runOnce()).toBe(1);
      expect((await workerJournal()).slice(3).map((r) => [r.commandId, r.code])).toEqual([[`rev:${tx(3)}-0`, 'OK']]);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(100n * USD);
      expect(sequencer.engine.getAccount(B)!.collateral).toBe(0n);
    });

    it('a journal write that fails leaves the deposit pending: the ones before it are marked, it and the ones after wait, and the next round credits them once', async () => {
      const { sequencer, gateway } = await startSequencer();
      const { logs, logger } = collectingLogger();
      await upsertCollateralEvents(db, [deposit(A, 10n * USD, 1, 10), deposit(A, 20n * USD, 2, 11), deposit(B, 30n * USD, 3, 12)]);
      // Another writer takes the journal seq the second deposit would get: its batch fails, its
      // outcome unknown to the task.
      const breaking: Pick<EngineGateway, 'submit'> = {
        async submit(cmd) {
          if (cmd.id === `dep:${tx(2)}-0` && (await lastJournalSeq(db)) === LISTED + 1) {
            await appendJournal(db, [
              { seq: sequencer.nextSeq, commandId: 'foreign', kind: 'withdraw', command: '{}', ts: 0, code: 'INVALID', lastEventSeq: sequencer.engine.lastSeq, result: '{"ok":false,"code":"INVALID","message":"x"}' },
            ]);
          }
          return gateway.submit(cmd);
        },
      };
      clock = H + 1_000;
      const task = createCollateralTask({ db, gateway: breaking, now, logger });
      await expect(task.runOnce()).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE', data: { outcome: 'unknown' } });
      expect(await getCollateralEvent(db, `${tx(1)}-0`)).toMatchObject({ applied: true, appliedAt: H + 1_000 });
      expect((await listUnappliedCollateralEvents(db, 10)).map((e) => e.eventId)).toEqual([`${tx(2)}-0`, `${tx(3)}-0`]);
      expect(await listRefusedCollateralEvents(db, 10)).toEqual([]);
      expect(logs).toEqual([]);

      await until(async () => sequencer.state, (s) => s === 'running', 20_000);
      clock = H + 2_000;
      expect(await task.runOnce()).toBe(2);
      expect(sequencer.engine.getAccount(A)!.collateral).toBe(30n * USD);
      expect(sequencer.engine.getAccount(B)!.collateral).toBe(30n * USD);
      expect((await workerJournal()).map((r) => [r.commandId, r.code])).toEqual([
        [`dep:${tx(1)}-0`, 'OK'],
        ['foreign', 'INVALID'],
        [`dep:${tx(2)}-0`, 'OK'],
        [`dep:${tx(3)}-0`, 'OK'],
      ]);
      const page = await listCollateralEventsPage(db, { account: A, kind: 'deposit', offset: 0, limit: 10 });
      expect(page.rows.map((e) => e.status)).toEqual(['applied', 'applied']);
      expect(await task.runOnce()).toBe(0);
    });
  });

  describe('mark-price task', () => {
    it('sets mark and index from the pricing function; submits again only on a move or after the heartbeat', async () => {
      const { sequencer, gateway } = await startSequencer();
      const ticks = new Map<string, bigint>([[BTC, 600_001n], [AAPL, 19_995n], ['ETH-USD', 150_000_000n]]);
      const seen: Array<[string, string]> = [];
      const index: IndexSource = (symbol, tickSize) => {
        seen.push([symbol, tickSize]);
        return ticks.get(symbol);
      };
      clock = H + 1_000;
      const task = createMarkPriceTask({ gateway, engine: () => sequencer.engine, index, now, heartbeatMs: 10_000 });
      await task.runOnce();

      // Asked in the instrument's own tick size.
      expect(seen).toEqual([[BTC, '0.1'], ['ETH-USD', '0.01'], [AAPL, '0.01'], ['TSLA-USD', '0.01'], ['NVDA-USD', '0.01']]);
      // Empty books, no trades: mid and last are the index, the first basis is 0, the mark is the index.
      expect(markPrice(EMPTY_BASIS, { indexTicks: 600_001n, ts: clock }).markTicks).toBe(600_001n);
      expect(sequencer.engine.prices(BTC)).toMatchObject({ markPriceTicks: 600_001, indexPriceTicks: 600_001 });
      expect(sequencer.engine.prices(AAPL)).toMatchObject({ markPriceTicks: 19_995, indexPriceTicks: 19_995 });
      // An index beyond the instrument's maxPriceTicks is capped to it.
      expect(sequencer.engine.prices('ETH-USD')).toMatchObject({ markPriceTicks: 100_000_000, indexPriceTicks: 100_000_000 });
      // No quote: nothing sent.
      expect(sequencer.engine.prices('TSLA-USD')).toMatchObject({ markPriceTicks: 0, indexPriceTicks: 0 });
      expect((await workerJournal()).map((r) => [r.kind, r.commandId, r.ts])).toEqual([
        ['setMarkPrice', `mark:${BTC}:${H + 1_000}`, H + 1_000],
        ['setMarkPrice', `mark:ETH-USD:${H + 1_000}`, H + 1_000],
        ['setMarkPrice', `mark:${AAPL}:${H + 1_000}`, H + 1_000],
      ]);

      // Nothing moved: nothing sent, until the heartbeat has passed.
      clock = H + 2_000;
      await task.runOnce();
      clock = H + 10_999;
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(LISTED + 3);
      clock = H + 11_000;
      await task.runOnce();
      expect((await workerJournal()).slice(3).map((r) => r.commandId)).toEqual([`mark:${BTC}:${H + 11_000}`, `mark:ETH-USD:${H + 11_000}`, `mark:${AAPL}:${H + 11_000}`]);

      // One index moves: only that instrument is sent.
      ticks.set(AAPL, 19_990n);
      clock = H + 12_000;
      await task.runOnce();
      expect((await workerJournal()).slice(6).map((r) => r.commandId)).toEqual([`mark:${AAPL}:${H + 12_000}`]);
      expect(sequencer.engine.prices(AAPL)).toMatchObject({ markPriceTicks: 19_990, indexPriceTicks: 19_990 });
    });

    it('with a book and a last trade: the median of index + basis EMA, mid and last', async () => {
      const { sequencer, gateway } = await startSequencer();
      const index: IndexSource = (symbol) => (symbol === BTC ? 600_000n : undefined);
      const task = createMarkPriceTask({ gateway, engine: () => sequencer.engine, index, now, heartbeatMs: 60_000 });
      clock = H;
      await task.runOnce(); // empty book: mark = index = 600 000, basis EMA 0 at H
      expect(sequencer.engine.prices(BTC)).toMatchObject({ markPriceTicks: 600_000, indexPriceTicks: 600_000 });

      for (const a of [A, B]) await submitOk(gateway, { kind: 'deposit', id: `d-${a}`, ts: H, account: a, amount: 10_000n * USD });
      const limit = (id: string, account: string, side: 'BUY' | 'SELL', priceTicks: number): EngineCommand =>
        ({ kind: 'placeOrder', id, ts: H, account, symbol: BTC, side, type: 'LIMIT', priceTicks, sizeLots: 10, timeInForce: 'GTC' });
      await submitOk(gateway, limit('s1', A, 'SELL', 601_000));
      await submitOk(gateway, limit('b1', B, 'BUY', 601_000)); // last trade 601 000
      await submitOk(gateway, limit('b2', B, 'BUY', 600_400));
      await submitOk(gateway, limit('s2', A, 'SELL', 601_000)); // mid ⌊(600 400 + 601 000) / 2⌋ = 600 700

      clock = H + 15_000;
      await task.runOnce();
      // EMA: 0 + (700 ticks − 0) × 15 s / (15 s + 150 s) = 63.636 363 ticks → index + 63 = 600 063.
      // median(600 063, 600 700, 601 000) = 600 700, inside the 5 % band.
      const basis0 = { microTicks: 0n, at: H };
      const expected = markPrice(basis0, { indexTicks: 600_000n, bestBidTicks: 600_400n, bestAskTicks: 601_000n, lastTradeTicks: 601_000n, ts: H + 15_000 });
      expect(expected).toEqual({ markTicks: 600_700n, midTicks: 600_700n, basis: { microTicks: 63_636_363n, at: H + 15_000 } });
      expect(sequencer.engine.prices(BTC)).toMatchObject({ markPriceTicks: 600_700, indexPriceTicks: 600_000, lastTradePriceTicks: 601_000 });

      // 15 s later the EMA has moved (121.49 ticks) but the median has not: nothing sent.
      const seq = await lastJournalSeq(db);
      clock = H + 30_000;
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(seq);
    });
  });

  describe('funding task', () => {
    it('averages the interval\'s premium samples and submits one applyFunding per instrument at the funding time', async () => {
      const { sequencer, gateway } = await startSequencer();
      const engine = sequencer.engine;
      for (const a of [A, B]) await submitOk(gateway, { kind: 'deposit', id: `d-${a}`, ts: H, account: a, amount: 10_000n * USD });
      const limit = (id: string, account: string, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number): EngineCommand =>
        ({ kind: 'placeOrder', id, ts: H, account, symbol: BTC, side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC' });
      await submitOk(gateway, limit('b1', A, 'BUY', 601_000, 10));
      await submitOk(gateway, limit('b2', A, 'BUY', 600_800, 20));
      await submitOk(gateway, limit('a1', B, 'SELL', 601_500, 10));
      await submitOk(gateway, limit('a2', B, 'SELL', 602_000, 10));

      const ticks = new Map<string, bigint>([[BTC, 600_500n], [AAPL, 20_000n]]);
      const impact = 100n * USD;
      const task = createFundingTask({ gateway, engine: () => sequencer.engine, index: (s) => ticks.get(s), impactNotionalMicros: impact, now });
      const before = await lastJournalSeq(db);

      // Impact bid ($100 into the bids, 10 µUSD per tick × lot): 10 lots at 601 000 (60 100 000) +
      // ⌈39 900 000 / 6 008 000⌉ = 7 lots at 600 800 (42 056 000): ⌊102 156 000 / 170⌋ = 600 917.
      // Impact ask: 10 at 601 500 (60 150 000) + ⌈39 850 000 / 6 020 000⌉ = 7 at 602 000: ⌈102 290 000 / 170⌉ = 601 706.
      const depth = engine.depth(BTC, 1_000)!;
      const bid = impactPrice(depth.bids, 10n, impact, 'bid');
      const ask = impactPrice(depth.asks, 10n, impact, 'ask');
      expect([bid, ask]).toEqual([600_917n, 601_706n]);
      const samples: bigint[] = [];
      const sampleAt = async (t: number, idx: bigint) => {
        clock = t;
        ticks.set(BTC, idx);
        await task.runOnce();
        samples.push(premiumSample(idx, bid, ask));
      };
      await sampleAt(H + 1_000, 600_500n); // over the index by 417 ticks: ⌊417e9 / 600 500⌋ = 694 421
      await sampleAt(H + 1_800_000, 600_600n); // ⌊317e9 / 600 600⌋ = 527 805
      await sampleAt(H + 3_599_999, 600_400n); // ⌊517e9 / 600 400⌋ = 861 092
      expect(samples).toEqual([694_421n, 527_805n, 861_092n]);
      expect(task.pendingSamples(BTC)).toBe(3);
      expect(await lastJournalSeq(db)).toBe(before);

      // The funding time: mean ⌊2 083 318 / 3⌋ = 694 439; interest 12 500 and clamp 62 500 per hour:
      // 694 439 + clamp(12 500 − 694 439, ±62 500) = 631 939 (the cap is 937 500).
      clock = H + 3_600_000;
      await task.runOnce();
      const expected = fundingRate(samples, 3_600_000).rateE9;
      expect(expected).toBe(631_939n);
      const rows = (await journal()).slice(before);
      // Books without a premium (AAPL: empty; the others: no index, no sample) pay the interest alone.
      expect(rows.map((r) => [r.kind, r.commandId, r.ts, JSON.parse(r.command).rateE9, r.code])).toEqual([
        ['applyFunding', `funding:${BTC}:${H + 3_600_000}`, H + 3_600_000, '631939', 'OK'],
        ['applyFunding', `funding:ETH-USD:${H + 3_600_000}`, H + 3_600_000, '12500', 'OK'],
        ['applyFunding', `funding:${AAPL}:${H + 3_600_000}`, H + 3_600_000, '12500', 'OK'],
        ['applyFunding', `funding:TSLA-USD:${H + 3_600_000}`, H + 3_600_000, '12500', 'OK'],
        ['applyFunding', `funding:NVDA-USD:${H + 3_600_000}`, H + 3_600_000, '12500', 'OK'],
      ]);
      expect(engine.prices(BTC)).toMatchObject({ lastFundingTs: H + 3_600_000, lastFundingRateE9: 631_939n });
      // The new interval has its first sample.
      expect(task.pendingSamples(BTC)).toBe(1);

      // Again within the same interval: nothing.
      const after = await lastJournalSeq(db);
      clock = H + 3_600_000 + 5_000;
      await task.runOnce();
      clock = H + 7_199_999;
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(after);
      expect(task.pendingSamples(BTC)).toBe(3);
    });

    it('the interval override sets the funding times and scales the interest', async () => {
      const { sequencer, gateway } = await startSequencer();
      const task = createFundingTask({ gateway, engine: () => sequencer.engine, index: () => undefined, intervalMs: 60_000, now });
      clock = H + 59_000;
      await task.runOnce();
      clock = H + 60_000;
      await task.runOnce();
      // 0.01 % per 8 h × 60 s / 8 h = ⌊100 000 × 60 000 / 28 800 000⌋ = 208.
      expect((await workerJournal()).map((r) => [r.commandId, JSON.parse(r.command).rateE9])).toEqual(
        [BTC, 'ETH-USD', AAPL, 'TSLA-USD', 'NVDA-USD'].map((s) => [`funding:${s}:${H + 60_000}`, '208']),
      );
    });
  });

  describe('market-maker task', () => {
    const quotes = (engine: EngineSequencer['engine'], symbol: string) =>
      engine.openOrders(MM, symbol).map((o) => [o.side, o.priceTicks, o.sizeLots, o.timeInForce, o.account, o.type]);

    it('waits (logged once) for its collateral, then quotes each indexed book two-sided at the formula\'s prices', async () => {
      const { sequencer, gateway } = await startSequencer();
      const { logs, logger } = collectingLogger();
      const task = createMarketMakerTask({ gateway, engine: () => sequencer.engine, account: MM.toUpperCase().replace('0X', '0x'), levels: 3, halfSpreadBps: 5, stepBps: 10, requoteBps: 3, now, logger });
      await submitOk(gateway, { kind: 'setMarkPrice', id: 'm-btc', ts: H, symbol: BTC, markPriceTicks: 600_001, indexPriceTicks: 600_001 });
      await submitOk(gateway, { kind: 'setMarkPrice', id: 'm-aapl', ts: H, symbol: AAPL, markPriceTicks: 20_001, indexPriceTicks: 20_001 });

      clock = H + 1_000;
      await task.runOnce();
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(LISTED + 2);
      expect(logs).toEqual([{ level: 'info', obj: { account: MM }, msg: 'perp market maker: waiting for its collateral to be credited' }]);

      await submitOk(gateway, { kind: 'deposit', id: 'mm-dep', ts: H, account: MM, amount: 1_000_000n * USD });
      clock = H + 2_000;
      await task.runOnce();
      const e = sequencer.engine;
      // BTC index 600 001: level i at 5 + 10 i bps; bids ⌊600 001 × (1 − off)⌋, asks ⌈600 001 × (1 + off)⌉:
      //   9 995 → 599 700.9995 → 599 700;  10 005 → 600 301.0005 → 600 302
      //   9 985 → 599 100.9985 → 599 100;  10 015 → 600 901.0015 → 600 902
      //   9 975 → 598 500.9975 → 598 500;  10 025 → 601 501.0025 → 601 502
      // lots ⌈$2 000 / (price × 10 µUSD)⌉: 334, 334, 335 and 334, 333, 333.
      expect(e.depth(BTC, 10)).toEqual({
        bids: [[599_700, 334], [599_100, 334], [598_500, 335]],
        asks: [[600_302, 334], [600_902, 333], [601_502, 333]],
      });
      // AAPL index 20 001: bids 19 990, 19 970, 19 950; asks 20 012, 20 032, 20 052;
      // lots ⌈$2 000 / (price × 100 µUSD)⌉: 1 001, 1 002, 1 003 and 1 000, 999, 998.
      expect(e.depth(AAPL, 10)).toEqual({
        bids: [[19_990, 1_001], [19_970, 1_002], [19_950, 1_003]],
        asks: [[20_012, 1_000], [20_032, 999], [20_052, 998]],
      });
      const btc = quotes(e, BTC);
      expect(btc).toHaveLength(6);
      for (const q of [...btc, ...quotes(e, AAPL)]) expect(q.slice(3)).toEqual(['POST_ONLY', MM, 'LIMIT']);
      // No index: no quotes.
      for (const s of ['ETH-USD', 'TSLA-USD', 'NVDA-USD']) expect(e.depth(s, 10)).toEqual({ bids: [], asks: [] });
      expect(logs).toHaveLength(1);
    });

    it('started again at the same instant (a restart or a revert where the clock stands still), quotes anew: its ids are not the last run\'s', async () => {
      const { sequencer, gateway } = await startSequencer();
      const make = () => createMarketMakerTask({ gateway, engine: () => sequencer.engine, account: MM, levels: 3, now });
      await submitOk(gateway, { kind: 'deposit', id: 'mm-dep', ts: H, account: MM, amount: 1_000_000n * USD });
      await submitOk(gateway, { kind: 'setMarkPrice', id: 'm-btc', ts: clock, symbol: BTC, markPriceTicks: 600_001, indexPriceTicks: 600_001 });
      clock = H + 1_000;
      await make().runOnce();
      const e = sequencer.engine;
      expect(e.openOrders(MM, BTC)).toHaveLength(6);
      // Its quotes gone (as in a state kept before they were placed), and a new task at the same instant.
      await submitOk(gateway, { kind: 'cancelAll', id: 'gone', ts: clock, account: MM, symbol: BTC });
      expect(e.openOrders(MM, BTC)).toHaveLength(0);
      await make().runOnce();
      expect(e.openOrders(MM, BTC)).toHaveLength(6);
    });

    it('places nothing while the index stays within requoteBps; past it, cancels and requotes that book only', async () => {
      const { sequencer, gateway } = await startSequencer();
      const task = createMarketMakerTask({ gateway, engine: () => sequencer.engine, account: MM, levels: 3, halfSpreadBps: 5, stepBps: 10, requoteBps: 3, now });
      await submitOk(gateway, { kind: 'deposit', id: 'mm-dep', ts: H, account: MM, amount: 1_000_000n * USD });
      const mark = (id: string, symbol: string, ticks: number) => submitOk(gateway, { kind: 'setMarkPrice', id, ts: clock, symbol, markPriceTicks: ticks, indexPriceTicks: ticks });
      await mark('m-btc', BTC, 600_001);
      await mark('m-aapl', AAPL, 20_001);
      clock = H + 1_000;
      await task.runOnce();
      const e = sequencer.engine;
      const btcIds = e.openOrders(MM, BTC).map((o) => o.orderId);
      const aaplIds = e.openOrders(MM, AAPL).map((o) => o.orderId);
      expect([btcIds.length, aaplIds.length]).toEqual([6, 6]);

      // Unchanged: nothing.
      let seq = await lastJournalSeq(db);
      clock = H + 2_000;
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(seq);

      // 149 ticks is 2.48 bps of 600 001: below requoteBps, nothing.
      await mark('m-btc-2', BTC, 600_150);
      seq = await lastJournalSeq(db);
      clock = H + 3_000;
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(seq);

      // 199 ticks is 3.32 bps: BTC requoted around 600 200, AAPL left alone.
      await mark('m-btc-3', BTC, 600_200);
      seq = await lastJournalSeq(db);
      clock = H + 4_000;
      const engineSeq = e.lastSeq;
      await task.runOnce();
      const rows = (await journal()).slice(seq);
      expect(rows[0]).toMatchObject({ kind: 'cancelAll', commandId: `mm:${BTC}:${H + 4_000}:${engineSeq}:3:cancel`, code: 'OK' });
      expect(JSON.parse(rows[0].result).canceledOrderIds).toEqual(btcIds);
      expect(rows.slice(1).map((r) => [r.kind, r.code])).toEqual(Array(6).fill(['placeOrder', 'OK']));
      for (const id of btcIds) expect(e.getOrder(id)).toBeUndefined();
      // 600 200 × 9 995 / 10⁴ = 599 899.9 → 599 899; × 9 985 → 599 299.7 → 599 299; × 9 975 → 598 699.5 → 598 699;
      // × 10 005 → 600 500.1 → 600 501; × 10 015 → 601 100.3 → 601 101; × 10 025 → 601 700.5 → 601 701.
      expect(e.depth(BTC, 10)).toEqual({
        bids: [[599_899, 334], [599_299, 334], [598_699, 335]],
        asks: [[600_501, 334], [601_101, 333], [601_701, 333]],
      });
      expect(e.openOrders(MM, AAPL).map((o) => o.orderId)).toEqual(aaplIds);
    });

    it('a level refused because a client crosses it is not taken for a fill: no requote until one of its orders fills', async () => {
      const { sequencer, gateway } = await startSequencer();
      const task = createMarketMakerTask({ gateway, engine: () => sequencer.engine, account: MM, levels: 3, halfSpreadBps: 5, stepBps: 10, requoteBps: 3, now });
      await submitOk(gateway, { kind: 'deposit', id: 'mm-dep', ts: H, account: MM, amount: 1_000_000n * USD });
      await submitOk(gateway, { kind: 'deposit', id: 'a-dep', ts: H, account: A, amount: 100_000n * USD });
      await submitOk(gateway, { kind: 'setMarkPrice', id: 'm-aapl', ts: H, symbol: AAPL, markPriceTicks: 20_001, indexPriceTicks: 20_001 });
      // A client bids 200.20 before the maker quotes: its first ask (200.12) would cross and is refused.
      await submitOk(gateway, { kind: 'placeOrder', id: 'client-bid', ts: H, account: A, symbol: AAPL, side: 'BUY', type: 'LIMIT', priceTicks: 20_020, sizeLots: 5, timeInForce: 'GTC' });
      clock = H + 1_000;
      await task.runOnce();
      const e = sequencer.engine;
      expect(e.depth(AAPL, 10)!.asks).toEqual([[20_032, 999], [20_052, 998]]);
      const seq = await lastJournalSeq(db);
      clock = H + 2_000;
      await task.runOnce();
      expect(await lastJournalSeq(db)).toBe(seq);

      // Another client sells through the first one's bid into the maker's best bid: one of the
      // maker's orders filled, so it quotes again.
      await submitOk(gateway, { kind: 'deposit', id: 'b-dep', ts: H, account: B, amount: 100_000n * USD });
      await submitOk(gateway, { kind: 'placeOrder', id: 'client-sell', ts: clock, account: B, symbol: AAPL, side: 'SELL', type: 'MARKET', sizeLots: 6 });
      expect(e.depth(AAPL, 1)!.bids).toEqual([[19_990, 1_000]]);
      clock = H + 3_000;
      await task.runOnce();
      expect((await journal()).slice(seq + 2)[0]).toMatchObject({ kind: 'cancelAll', code: 'OK' });
    });
  });

  describe('demo taker task', () => {
    it('takes the market maker\'s quotes with a small market order, leaning against its own position', async () => {
      const { sequencer, gateway } = await startSequencer();
      const TAKER = '0x71be63f3384f5fb98995898a86b02fb2426c5788';
      const maker = createMarketMakerTask({ gateway, engine: () => sequencer.engine, account: MM, levels: 3, halfSpreadBps: 5, stepBps: 10, requoteBps: 3, now });
      const taker = createDemoTakerTask({ gateway, engine: () => sequencer.engine, account: TAKER, now });
      await submitOk(gateway, { kind: 'deposit', id: 'mm-dep', ts: H, account: MM, amount: 1_000_000n * USD });
      await submitOk(gateway, { kind: 'setMarkPrice', id: 'm-btc', ts: H, symbol: BTC, markPriceTicks: 600_001, indexPriceTicks: 600_001 });
      clock = H + 1_000;
      await maker.runOnce();
      // No collateral yet: nothing.
      let seq = await lastJournalSeq(db);
      await taker.runOnce();
      expect(await lastJournalSeq(db)).toBe(seq);

      await submitOk(gateway, { kind: 'deposit', id: 'taker-dep', ts: H, account: TAKER, amount: 100_000n * USD });
      clock = H + 2_000;
      await taker.runOnce();
      const e = sequencer.engine;
      // Flat: it buys ⌈$500 / (600 302 × 10 µUSD)⌉ = 84 lots at the best ask, from the market maker.
      expect(e.getAccount(TAKER)!.positions.find((p) => p.symbol === BTC)).toMatchObject({ sizeLots: 84 });
      expect(e.getAccount(MM)!.positions.find((p) => p.symbol === BTC)).toMatchObject({ sizeLots: -84 });
      expect(e.prices(BTC)!.lastTradePriceTicks).toBe(600_302);
      // Long now: the next order sells ⌈500 000 000 / 5 997 000⌉ = 84 at the best bid (only BTC is quoted).
      clock = H + 3_000;
      await taker.runOnce();
      expect(e.getAccount(TAKER)!.positions.find((p) => p.symbol === BTC)).toMatchObject({ sizeLots: 0 });
      expect(e.prices(BTC)!.lastTradePriceTicks).toBe(599_700);
      seq = await lastJournalSeq(db);
      const rows = (await journal()).slice(seq - 2);
      expect(rows.map((r) => [r.kind, JSON.parse(r.command).side, JSON.parse(r.command).type, r.code])).toEqual([
        ['placeOrder', 'BUY', 'MARKET', 'OK'],
        ['placeOrder', 'SELL', 'MARKET', 'OK'],
      ]);
    });
  });
});
