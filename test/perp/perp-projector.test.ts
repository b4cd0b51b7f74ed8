/**
 * The projector on a real sequencer and database: the history rows it writes from the engine's
 * durable events, its cursor, `caughtUp`, and a restart that resumes from the cursor without
 * applying any event twice (order fills and candle volumes would double if it did: they are
 * additive, unlike the insert-or-ignore trade and transaction rows).
 *
 * AAPL-USD: 100 µUSD per tick × lot, maker fee 200 ppm, taker 500 ppm (rounded up).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent, TradeEvent } from '../../src/perp/engine/engine-types.ts';
import { FEE_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';
import { createPerpProjector, PROJECTION_CURSOR_KEY, type PerpProjector } from '../../src/perp/projection/perp-projector.ts';
import { workerProjectionWriter } from '../../src/perp/projection/projection-worker-client.ts';
import { createInProcessGateway, type EngineGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { listPerpCandles } from '../../src/perp/store/perp-candle-store.ts';
import { getOrder, listFundingRates, listOrders, listTrades, listTransactions, type PerpTransactionRecord } from '../../src/perp/store/perp-history-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { xUsdInstrument } from '../support/perp-test-instrument.ts';

const AAPL = 'AAPL-USD';
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const H = 1_717_999_200_000;

const limit = (id: string, ts: number, account: string, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number): EngineCommand => ({
  kind: 'placeOrder', id, ts, account, symbol: AAPL, side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC',
});

/** Deposits, a mark, A's resting sell of 10 (order 1) and B's buy of 4 that fills part of it (order 2). */
const PART_1: EngineCommand[] = [
  { kind: 'deposit', id: 'dep:0xd1-3', ts: H, account: A, amount: 100_000n * USD },
  { kind: 'deposit', id: 'wire-b', ts: H, account: B, amount: 100_000n * USD },
  { kind: 'setMarkPrice', id: 'mark-1', ts: H + 1_000, symbol: AAPL, markPriceTicks: 20_000, indexPriceTicks: 19_990 },
  limit('a-sell', H + 2_000, A, 'SELL', 20_050, 10),
  limit('b-buy-1', H + 10_000, B, 'BUY', 20_100, 4),
];

/** B buys the other 6 (order 3), a new mark, and funding on the 10-lot positions. */
const PART_2: EngineCommand[] = [
  limit('b-buy-2', H + 70_000, B, 'BUY', 20_100, 6),
  { kind: 'setMarkPrice', id: 'mark-2', ts: H + 150_000, symbol: AAPL, markPriceTicks: 20_100, indexPriceTicks: 20_090 },
  { kind: 'applyFunding', id: 'funding-1', ts: H + 3_600_000, symbol: AAPL, rateE9: 123_457n },
];

async function count(db: Db, table: 'perp_orders' | 'perp_trades' | 'perp_transactions' | 'perp_funding_rates' | 'perp_candles'): Promise<number> {
  const r = await db.kysely.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}

const counts = async (db: Db) => ({
  orders: await count(db, 'perp_orders'),
  trades: await count(db, 'perp_trades'),
  transactions: await count(db, 'perp_transactions'),
  fundingRates: await count(db, 'perp_funding_rates'),
  candles: await count(db, 'perp_candles'),
});

/** An account's transactions as (type, amount), oldest event first. */
async function moneyOf(db: Db, account: string): Promise<Array<[string, bigint]>> {
  const { rows } = await listTransactions(db, { account, offset: 0, limit: 100 });
  const seq = (t: PerpTransactionRecord) => Number(t.txId.split(':')[0]);
  return rows.sort((a, b) => seq(a) - seq(b)).map((t) => [t.type, t.amount]);
}

/** Each database with the projection written on the engine's thread and from its worker thread. */
const WITH_WRITERS = testDatabases.flatMap((d) => (['thread', 'worker'] as const).map((writer) => ({ ...d, writer })));
const writerOf = (kind: 'thread' | 'worker', db: Db) =>
  kind === 'worker' ? { writer: (onUnknownReason: (reason: string) => void) => workerProjectionWriter({ database: db.location, feeAccount: FEE_ACCOUNT, onUnknownReason }) } : {};

describe.each(WITH_WRITERS)('perp projector ($name, written on its $writer)', ({ open, writer }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const cleanup: Array<() => Promise<void>> = [];
  // Registered after useFreshDatabase: runs first, while the database is still open.
  afterEach(async () => {
    for (const stop of cleanup.splice(0).reverse()) await stop();
  });

  async function startSequencer(eventBuffer?: number): Promise<{ sequencer: EngineSequencer; gateway: EngineGateway }> {
    const sequencer = new EngineSequencer({ db, snapshotEvery: 0, ...(eventBuffer === undefined ? {} : { eventBuffer }) });
    await sequencer.start();
    cleanup.push(() => sequencer.stop());
    return { sequencer, gateway: createInProcessGateway(sequencer) };
  }

  async function startProjector(gateway: EngineGateway): Promise<PerpProjector> {
    const projector = createPerpProjector({ ...writerOf(writer, db), db, gateway, feeAccount: FEE_ACCOUNT, retryMs: 20 });
    await projector.start();
    cleanup.push(() => projector.stop());
    return projector;
  }

  async function submitAll(gateway: EngineGateway, commands: EngineCommand[]): Promise<void> {
    for (const c of commands) expect((await gateway.submit(c)).code, c.id).toBe('OK');
  }

  it('writes orders, trades, transactions and the cursor; caughtUp(seq) resolves once the rows are there', async () => {
    const { sequencer, gateway } = await startSequencer();
    const projector = await startProjector(gateway);
    expect(projector.projectedSeq).toBe(0);
    await submitAll(gateway, PART_1);
    const seq = sequencer.engine.lastSeq;
    await projector.caughtUp(seq);

    expect(projector.projectedSeq).toBe(seq);
    expect(await getMeta(db, PROJECTION_CURSOR_KEY)).toBe(String(seq));
    // 4 lots at 20 050 ticks: 8 020 000 µUSD; maker fee 1 604, taker 4 010.
    expect(await getOrder(db, 1)).toEqual({
      orderId: 1, account: A, symbol: AAPL, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', priceTicks: 20_050, sizeLots: 10, requestedSizeLots: 10,
      filledLots: 4, filledNotional: 8_020_000n, fee: 1_604n, status: 'PARTIALLY_FILLED', reason: null, reduceOnly: false, clientOrderId: null,
      createdAt: H + 2_000, updatedAt: H + 10_000, liquidation: false, triggerPriceTicks: null, triggerBy: null, closePosition: false, triggeredAt: null,
    });
    expect(await getOrder(db, 2)).toMatchObject({ account: B, side: 'BUY', filledLots: 4, filledNotional: 8_020_000n, fee: 4_010n, status: 'FILLED', reason: 'FILLED' });
    const tradeId = (await listTrades(db, { account: A, offset: 0, limit: 10 })).rows[0].tradeId;
    expect((await listTrades(db, { account: A, offset: 0, limit: 10 })).rows).toEqual([
      { tradeId, role: 'MAKER', account: A, symbol: AAPL, orderId: 1, side: 'SELL', priceTicks: 20_050, sizeLots: 4, notional: 8_020_000n, fee: 1_604n, realisedPnl: 0n, ts: H + 10_000, liquidation: false },
    ]);
    expect((await listTrades(db, { account: B, offset: 0, limit: 10 })).rows).toEqual([
      { tradeId, role: 'TAKER', account: B, symbol: AAPL, orderId: 2, side: 'BUY', priceTicks: 20_050, sizeLots: 4, notional: 8_020_000n, fee: 4_010n, realisedPnl: 0n, ts: H + 10_000, liquidation: false },
    ]);
    expect(await moneyOf(db, A)).toEqual([['DEPOSIT', 100_000n * USD], ['FEE', -1_604n]]);
    expect(await moneyOf(db, B)).toEqual([['DEPOSIT', 100_000n * USD], ['FEE', -4_010n]]);
    expect((await listTransactions(db, { account: A, offset: 0, limit: 10 })).rows.find((t) => t.type === 'DEPOSIT')!.ref).toBe('0xd1');
    expect(await listTransactions(db, { account: FEE_ACCOUNT, offset: 0, limit: 10 })).toEqual({ total: 0, rows: [] });

    // A seq not reached yet stays pending until its event is written.
    let resolved = false;
    const next = projector.caughtUp(seq + 1).then(() => (resolved = true));
    await projector.caughtUp(seq); // already reached: resolves at once
    expect(resolved).toBe(false);
    expect((await gateway.submit({ kind: 'cancelOrder', id: 'a-cancel', ts: H + 20_000, account: A, orderId: 1 })).code).toBe('OK');
    await next;
    expect(await getOrder(db, 1)).toMatchObject({ filledLots: 4, status: 'CANCELED', reason: 'USER_CANCEL', updatedAt: H + 20_000 });
    expect(await getMeta(db, PROJECTION_CURSOR_KEY)).toBe(String(seq + 1));
  });

  it('writes the events of one write interval in one transaction, and none of them before it', async () => {
    const { sequencer, gateway } = await startSequencer();
    // The first write starts at once (nothing written before it), the next no sooner than 1.5 s after.
    const projector = createPerpProjector({ ...writerOf(writer, db), db, gateway, feeAccount: FEE_ACCOUNT, retryMs: 20, minWriteIntervalMs: 1_500 });
    await projector.start();
    cleanup.push(() => projector.stop());
    const cursorWrites: string[] = [];
    const first = PART_1.slice(0, 3);
    await submitAll(gateway, first);
    const seq1 = sequencer.engine.lastSeq;
    await projector.caughtUp(seq1);
    cursorWrites.push((await getMeta(db, PROJECTION_CURSOR_KEY))!);

    // Two orders, each answered (durable) on its own, inside the interval: not written yet.
    await submitAll(gateway, PART_1.slice(3, 4));
    const seq2 = sequencer.engine.lastSeq;
    await submitAll(gateway, PART_1.slice(4));
    const seq3 = sequencer.engine.lastSeq;
    expect([seq1 < seq2, seq2 < seq3]).toEqual([true, true]);
    expect(projector.projectedSeq).toBe(seq1);
    expect(await count(db, 'perp_orders')).toBe(0);

    // Then both in one write: the cursor goes from seq1 to seq3, never through seq2.
    await new Promise<void>((resolve, reject) => {
      const seen = new Set<number>();
      const poll = setInterval(() => {
        seen.add(projector.projectedSeq);
        if (projector.projectedSeq >= seq3) {
          clearInterval(poll);
          if (seen.has(seq2) && seq2 !== seq3) reject(new Error(`the cursor stopped at ${seq2}`));
          else resolve();
        }
      }, 1);
    });
    cursorWrites.push((await getMeta(db, PROJECTION_CURSOR_KEY))!);
    expect(cursorWrites).toEqual([String(seq1), String(seq3)]);
    expect(await counts(db)).toMatchObject({ orders: 2, trades: 2 });
  });

  it('a caughtUp in this process starts the write it waits for at once, without waiting out the interval', async () => {
    const { sequencer, gateway } = await startSequencer();
    // An interval far longer than the test's timeout: only the wake-up can write the second batch in time.
    const projector = createPerpProjector({ ...writerOf(writer, db), db, gateway, feeAccount: FEE_ACCOUNT, retryMs: 20, minWriteIntervalMs: 600_000 });
    await projector.start();
    cleanup.push(() => projector.stop());
    await submitAll(gateway, PART_1.slice(0, 4));
    const seq1 = sequencer.engine.lastSeq;
    await projector.caughtUp(seq1);
    expect(await count(db, 'perp_orders')).toBe(1);

    // B's buy is durable, and its write waits out the interval…
    await submitAll(gateway, PART_1.slice(4));
    const seq2 = sequencer.engine.lastSeq;
    expect(projector.projectedSeq).toBe(seq1);
    // …until a reader in this process asks for it.
    await projector.caughtUp(seq2);
    expect(projector.projectedSeq).toBe(seq2);
    expect(await getMeta(db, PROJECTION_CURSOR_KEY)).toBe(String(seq2));
    expect(await counts(db)).toMatchObject({ orders: 2, trades: 2 });
    expect(await getOrder(db, 1)).toMatchObject({ filledLots: 4, status: 'PARTIALLY_FILLED' });
  });

  it('a new projector on the same database resumes from the cursor: every event applied once', async () => {
    // A tiny event buffer: the second projector's catch-up is regenerated from the journal.
    const { sequencer, gateway } = await startSequencer(4);
    await submitAll(gateway, PART_1);
    // Started after the history: catches up from seq 1.
    const first = await startProjector(gateway);
    await first.caughtUp(sequencer.engine.lastSeq);
    const cursor = sequencer.engine.lastSeq;
    await first.stop();
    expect(await getMeta(db, PROJECTION_CURSOR_KEY)).toBe(String(cursor));
    const afterPart1 = await counts(db);
    // 2 orders; one fill = 2 trade rows; 2 deposits + 2 fees; trade candles 1m…1d (6), mark and index (6 each).
    expect(afterPart1).toEqual({ orders: 2, trades: 2, transactions: 4, fundingRates: 0, candles: 18 });

    // The engine goes on while no projector runs.
    await submitAll(gateway, PART_2);
    const second = await startProjector(gateway);
    expect(second.projectedSeq).toBe(cursor);
    await second.caughtUp(sequencer.engine.lastSeq);
    expect(await getMeta(db, PROJECTION_CURSOR_KEY)).toBe(String(sequencer.engine.lastSeq));

    // + order 3; + one fill; + 2 fees and 2 funding payments; + 1 rate; + trade 1m bar of minute 1,
    // mark and index 1m bars of minute 2 (the longer bars are the same rows).
    expect(await counts(db)).toEqual({ orders: 3, trades: 4, transactions: 8, fundingRates: 1, candles: 21 });
    // Order 1 got 4 then 6 lots, once each: 20 050 × 10 × 100 µUSD, maker fees 1 604 + 2 406.
    expect(await getOrder(db, 1)).toMatchObject({ filledLots: 10, filledNotional: 20_050_000n, fee: 4_010n, status: 'FILLED', reason: 'FILLED', updatedAt: H + 70_000 });
    expect(await getOrder(db, 2)).toMatchObject({ filledLots: 4, filledNotional: 8_020_000n, fee: 4_010n, status: 'FILLED' });
    expect(await getOrder(db, 3)).toMatchObject({ filledLots: 6, filledNotional: 12_030_000n, fee: 6_015n, status: 'FILLED' });
    // 10 lots × 20 100 × 100 µUSD × 123 457e-9 = 2 481.4857: the long B pays 2 482, the short A gets 2 481.
    expect(await moneyOf(db, A)).toEqual([['DEPOSIT', 100_000n * USD], ['FEE', -1_604n], ['FEE', -2_406n], ['FUNDING', 2_481n]]);
    expect(await moneyOf(db, B)).toEqual([['DEPOSIT', 100_000n * USD], ['FEE', -4_010n], ['FEE', -6_015n], ['FUNDING', -2_482n]]);
    expect(await listFundingRates(db, { symbol: AAPL, limit: 10 })).toEqual([{ symbol: AAPL, fundingTime: H + 3_600_000, rateE9: 123_457n, markPriceTicks: 20_100 }]);
    // The hour's trade bar: both fills once (a replayed part 1 would make it 14 lots and 3 trades).
    expect(await listPerpCandles(db, { symbol: AAPL, kind: 'trade', interval: '1h', limit: 10 })).toEqual([
      { symbol: AAPL, kind: 'trade', interval: '1h', openTime: H, openTicks: 20_050, highTicks: 20_050, lowTicks: 20_050, closeTicks: 20_050, volumeLots: 10, turnover: 20_050_000n, trades: 2 },
    ]);
    expect((await listPerpCandles(db, { symbol: AAPL, kind: 'trade', interval: '1m', limit: 10 })).map((c) => [c.openTime, c.volumeLots, c.trades])).toEqual([
      [H, 4, 1],
      [H + 60_000, 6, 1],
    ]);
    expect(await listPerpCandles(db, { symbol: AAPL, kind: 'mark', interval: '1h', limit: 10 })).toEqual([
      { symbol: AAPL, kind: 'mark', interval: '1h', openTime: H, openTicks: 20_000, highTicks: 20_100, lowTicks: 20_000, closeTicks: 20_100, volumeLots: 0, turnover: 0n, trades: 0 },
    ]);

    // A third start with nothing new writes nothing.
    await second.stop();
    const done = await counts(db);
    const third = await startProjector(gateway);
    expect(third.projectedSeq).toBe(sequencer.engine.lastSeq);
    await third.stop();
    expect(await counts(db)).toEqual(done);
    expect(await getOrder(db, 1)).toMatchObject({ filledLots: 10, fee: 4_010n });
  });
});

// ------------------------------------------------------------------------------------------------
// A liquidation as the liquidated account sees it in its history. The instrument and the figures are
// those of src/perp/engine/risk/liquidation.test.ts ("cancels the account's orders…"): X-USD, 1 tick
// = 1 USD, 1 lot = 1 unit, IM 5 %, MM 2.5 %, maker 0.02 %, taker 0.05 %, liquidation fee 0.5 %.

const X = xUsdInstrument({ markStaleMs: 0, indexStaleMs: 30_000, liquidationFeePpm: 5_000 });
const M = '0x00000000000000000000000000000000000000d4';
const LIQ_AT = H + 16_000;

const xLimit = (id: string, ts: number, account: string, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number, reduceOnly = false): EngineCommand => ({
  kind: 'placeOrder', id, ts, account, symbol: 'X-USD', side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC', reduceOnly,
});
const xMark = (id: string, ts: number, ticks: number): EngineCommand => ({ kind: 'setMarkPrice', id, ts, symbol: 'X-USD', markPriceTicks: ticks, indexPriceTicks: ticks, indexTs: ts });

/**
 * A ($1 000, leverage 20) buys 190 at 100 from M (orders 1, 2) and rests a reduce-only take-profit
 * (3); M bids 300 at 96 (4); B bids 5 at 90 (5) under a 5 s dead man's switch. Mark 97 at the
 * deadline: A's equity 990.5 − 570 = 420.5 < MM 460.75: liquidated through the book, its order 6 (IOC
 * reduce-only at the bankruptcy price 95) selling 190 at M's 96.
 */
const LIQUIDATION: EngineCommand[] = [
  { kind: 'deposit', id: 'm-dep', ts: H, account: M, amount: 1_000_000n * USD },
  { kind: 'deposit', id: 'dep:0xa1a1-0', ts: H, account: A, amount: 1_000n * USD },
  { kind: 'deposit', id: 'b-dep', ts: H, account: B, amount: 10_000n * USD },
  { kind: 'setLeverage', id: 'a-lev', ts: H + 1_000, account: A, symbol: 'X-USD', leverage: 20 },
  xMark('mark-100', H + 2_000, 100),
  xLimit('m-ask', H + 3_000, M, 'SELL', 100, 190),
  xLimit('a-buy', H + 4_000, A, 'BUY', 100, 190),
  xLimit('a-take-profit', H + 6_000, A, 'SELL', 150, 10, true),
  xLimit('m-bid', H + 7_000, M, 'BUY', 96, 300),
  xLimit('b-bid', H + 8_000, B, 'BUY', 90, 5),
  { kind: 'cancelAllAfter', id: 'b-switch', ts: H + 11_000, account: B, timeoutMs: 5_000 },
  xMark('mark-97', LIQ_AT, 97),
];

describe.each(WITH_WRITERS)('perp projector: a liquidation in the history ($name, written on its $writer)', ({ open, writer }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of cleanup.splice(0).reverse()) await stop();
  });

  it('the liquidation order (marked) and the cancelled orders, its fill as the account\'s trade, the realised loss and the fee as transactions', async () => {
    const sequencer = new EngineSequencer({ db, snapshotEvery: 0, engineOptions: { instruments: [X] } });
    await sequencer.start();
    cleanup.push(() => sequencer.stop());
    const gateway = createInProcessGateway(sequencer, { serialize: true });
    // One event a write: the liquidation order's fill meets the order as the database gives it back
    // (its mark read from the stored row).
    const projector = createPerpProjector({ ...writerOf(writer, db), db, gateway, feeAccount: FEE_ACCOUNT, retryMs: 20, maxBatch: 1 });
    await projector.start();
    cleanup.push(() => projector.stop());
    const events: EngineEvent[] = [];
    for (const c of LIQUIDATION) {
      const r = await gateway.submit(c);
      expect(r.code, c.id).toBe('OK');
      events.push(...r.events);
    }
    await projector.caughtUp(sequencer.engine.lastSeq);
    const liq = events.find((e) => e.type === 'liquidation')!;
    expect(liq).toMatchObject({ account: A, method: 'BOOK', orderId: 6, closedLots: 190, bankruptcyPriceTicks: 95, fee: 91_200_000n });

    const base = { account: A, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', filledLots: 0, filledNotional: 0n, fee: 0n, reduceOnly: true, clientOrderId: null, liquidation: false, triggerPriceTicks: null, triggerBy: null, closePosition: false, triggeredAt: null };
    expect((await listOrders(db, { account: A, offset: 0, limit: 10 })).rows).toEqual([
      // 190 × 96 = 18 240 USD; no taker fee on a liquidation order.
      { ...base, orderId: 6, timeInForce: 'IOC', priceTicks: 95, sizeLots: 190, requestedSizeLots: 190, filledLots: 190, filledNotional: 18_240n * USD, status: 'FILLED', reason: 'FILLED', createdAt: LIQ_AT, updatedAt: LIQ_AT, liquidation: true },
      { ...base, orderId: 3, timeInForce: 'GTC', priceTicks: 150, sizeLots: 10, requestedSizeLots: 10, status: 'CANCELED', reason: 'LIQUIDATION', createdAt: H + 6_000, updatedAt: LIQ_AT },
      // 0.05 % of 19 000 = 9.5.
      { ...base, orderId: 2, side: 'BUY', timeInForce: 'GTC', priceTicks: 100, sizeLots: 190, requestedSizeLots: 190, filledLots: 190, filledNotional: 19_000n * USD, fee: 9_500_000n, status: 'FILLED', reason: 'FILLED', reduceOnly: false, createdAt: H + 4_000, updatedAt: H + 4_000 },
    ]);
    expect(await getOrder(db, 5)).toMatchObject({ account: B, status: 'CANCELED', reason: 'CANCEL_AFTER', updatedAt: LIQ_AT, liquidation: false });
    expect(await getOrder(db, 4)).toMatchObject({ account: M, status: 'PARTIALLY_FILLED', filledLots: 190, fee: 3_648_000n, liquidation: false });

    const fill = events.find((e): e is TradeEvent => e.type === 'trade' && e.takerOrderId === 6)!;
    const entry = events.find((e): e is TradeEvent => e.type === 'trade' && e.takerOrderId === 2)!;
    const trade = { account: A, symbol: 'X-USD', role: 'TAKER' };
    expect((await listTrades(db, { account: A, offset: 0, limit: 10 })).rows).toEqual([
      // 18 240 − 19 000 = −760 realised.
      { ...trade, tradeId: fill.seq, orderId: 6, side: 'SELL', priceTicks: 96, sizeLots: 190, notional: 18_240n * USD, fee: 0n, realisedPnl: -760n * USD, ts: LIQ_AT, liquidation: true },
      { ...trade, tradeId: entry.seq, orderId: 2, side: 'BUY', priceTicks: 100, sizeLots: 190, notional: 19_000n * USD, fee: 9_500_000n, realisedPnl: 0n, ts: H + 4_000, liquidation: false },
    ]);
    // M's side of the same fill is an ordinary trade.
    expect((await listTrades(db, { account: M, orderId: 4, offset: 0, limit: 10 })).rows).toEqual([
      { tradeId: fill.seq, role: 'MAKER', account: M, symbol: 'X-USD', orderId: 4, side: 'BUY', priceTicks: 96, sizeLots: 190, notional: 18_240n * USD, fee: 3_648_000n, realisedPnl: 760n * USD, ts: LIQ_AT, liquidation: false },
    ]);

    const { rows } = await listTransactions(db, { account: A, offset: 0, limit: 10 });
    const bySeq = rows.sort((a, b) => Number(a.txId.split(':')[0]) - Number(b.txId.split(':')[0]));
    expect(bySeq).toEqual([
      { txId: `${events.find((e) => e.type === 'balanceChanged' && e.account === A)!.seq}:DEPOSIT`, account: A, type: 'DEPOSIT', symbol: null, amount: 1_000n * USD, ref: '0xa1a1', ts: H },
      { txId: `${entry.seq}:FEE:T`, account: A, type: 'FEE', symbol: 'X-USD', amount: -9_500_000n, ref: '2', ts: H + 4_000 },
      { txId: `${fill.seq}:REALISED_PNL:T`, account: A, type: 'REALISED_PNL', symbol: 'X-USD', amount: -760n * USD, ref: '6', ts: LIQ_AT },
      // min(0.5 % × 18 240 = 91.2, surplus 190 × (96 − 95) = 190).
      { txId: `${liq.seq}:LIQUIDATION_FEE`, account: A, type: 'LIQUIDATION_FEE', symbol: 'X-USD', amount: -91_200_000n, ref: '6', ts: LIQ_AT },
    ]);
    // What the transactions add up to is the balance the engine holds: 1 000 − 9.5 − 760 − 91.2.
    expect(rows.reduce((sum, t) => sum + t.amount, 0n)).toBe(139_300_000n);
    expect(sequencer.engine.getAccount(A)!.collateral).toBe(139_300_000n);
    expect((await listTransactions(db, { account: A, types: ['LIQUIDATION_FEE'], offset: 0, limit: 10 })).total).toBe(1);
  });

  it('a balance reason it does not know is written as OTHER and logged once', async () => {
    const strange = (seq: number) =>
      ({ type: 'balanceChanged', seq, ts: H, commandId: `rebate-${seq}`, account: A, collateral: BigInt(seq) * USD, delta: USD, reason: 'rebate' }) as unknown as EngineEvent;
    // A feed of a newer engine's events: two movements of a reason this build lacks, and an event type it lacks.
    const feed = [strange(1), strange(2), { type: 'somethingNew', seq: 3, ts: H, commandId: 'x' } as unknown as EngineEvent];
    const gateway = {
      subscribe(fromSeq: number, listener: (e: EngineEvent) => void) {
        setImmediate(() => feed.filter((e) => e.seq >= fromSeq).forEach(listener));
        return () => {};
      },
    };
    const warnings: unknown[] = [];
    const logger = { warn: (o: unknown) => warnings.push(o), error: () => {}, info: () => {} };
    const projector = createPerpProjector({ ...writerOf(writer, db), db, gateway, feeAccount: FEE_ACCOUNT, retryMs: 20, maxBatch: 1, logger: logger as never });
    await projector.start();
    cleanup.push(() => projector.stop());
    await projector.caughtUp(3);
    expect((await listTransactions(db, { account: A, offset: 0, limit: 10 })).rows.map((t) => [t.txId, t.type, t.amount, t.ref])).toEqual([
      ['2:OTHER', 'OTHER', USD, 'rebate-2'],
      ['1:OTHER', 'OTHER', USD, 'rebate-1'],
    ]);
    expect(warnings).toEqual([{ reason: 'rebate' }]);
  });
});

// The same over HTTP, on a default instrument: AAPL-USD (0.01 USD tick, 0.01 lot: 100 µUSD per tick
// × lot), MM 2.5 %, liquidation fee 1 %.
describe.each(perpHarnessVariants())('a liquidation over HTTP ($name)', (variant) => {
  let h: PerpHarness;
  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('orders/history marks the liquidation order, trades its fill, account/transactions the realised loss and the fee', async () => {
    const { client: api } = await h.key({ userAddress: `0x${'a7'.repeat(20)}` });
    const a = `0x${'a7'.repeat(20)}`;
    const m = `0x${randomBytes(20).toString('hex')}`;
    const venue = h.venue!;
    const submit = async (c: Record<string, unknown>) => {
      const r = await venue.gateway.submit({ id: `t-${randomBytes(6).toString('hex')}`, ts: Date.now(), ...c } as EngineCommand);
      expect(r.code, String(c.kind)).toBe('OK');
      return r;
    };
    await venue.deposit(m, 1_000_000n * USD);
    await venue.deposit(a, 1_000n * USD);
    await submit({ kind: 'setLeverage', account: a, symbol: AAPL, leverage: 20 });
    await venue.mark(AAPL, 10_000);
    const place = (account: string, side: string, priceTicks: number, sizeLots: number, reduceOnly = false) =>
      submit({ kind: 'placeOrder', account, symbol: AAPL, side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC', reduceOnly });
    await place(m, 'SELL', 10_000, 19_000);
    await place(a, 'BUY', 10_000, 19_000); // 190 at 100: taker fee 9.5
    await place(a, 'SELL', 15_000, 1_000, true);
    await place(m, 'BUY', 9_600, 30_000);
    // Mark 97: equity 990.5 − 570 = 420.5 < MM 460.75, above ⅔ MM: the book. Bankruptcy 97 − 420.5 /
    // 190 = 94.7868… → 94.79 (the tick above); the order sells 190 at 96: −760 realised; the fee is
    // min(1 % × 18 240 = 182.4, surplus 18 240 − 190 × 94.79 = 229.9) = 182.4.
    await venue.mark(AAPL, 9_700);
    await venue.settled();

    const history = await api.get<{ total: number; rows: any[] }>('orders/history');
    expect(history.total).toBe(3);
    const [liqOrder, takeProfit, buy] = history.rows;
    expect(liqOrder).toEqual({
      orderId: liqOrder.orderId, clientOrderId: null, symbol: AAPL, side: 'SELL', type: 'LIMIT', timeInForce: 'IOC', price: '94.79', size: '190', filledSize: '190',
      remainingSize: '0', avgPrice: '96', fee: '0', status: 'FILLED', reason: 'FILLED', reduceOnly: true, liquidation: true, createdAt: liqOrder.createdAt, updatedAt: liqOrder.createdAt,
      triggerPrice: null, triggerBy: null, triggeredAt: null, closePosition: false,
    });
    expect(takeProfit).toMatchObject({ price: '150', status: 'CANCELED', reason: 'LIQUIDATION', liquidation: false });
    expect(buy).toMatchObject({ side: 'BUY', status: 'FILLED', fee: '9.5', liquidation: false });
    expect((await api.get<{ rows: any[] }>('orders/history', { status: 'CANCELED' })).rows.map((o) => o.reason)).toEqual(['LIQUIDATION']);

    const trades = await api.get<{ total: number; rows: any[] }>('trades');
    expect(trades.rows.map((t) => [t.orderId, t.side, t.role, t.price, t.size, t.notional, t.fee, t.realisedPnl, t.liquidation])).toEqual([
      [liqOrder.orderId, 'SELL', 'TAKER', '96', '190', '18240', '0', '-760', true],
      [buy.orderId, 'BUY', 'TAKER', '100', '190', '19000', '9.5', '0', false],
    ]);

    const txs = await api.get<{ total: number; rows: any[] }>('account/transactions');
    const seq = (t: { id: string }) => Number(t.id.split(':')[0]);
    expect(txs.rows.sort((x, y) => seq(x) - seq(y)).map((t) => [t.type, t.symbol, t.amount, t.ref])).toEqual([
      ['DEPOSIT', null, '1000', 'harness'],
      ['FEE', AAPL, '-9.5', buy.orderId],
      ['REALISED_PNL', AAPL, '-760', liqOrder.orderId],
      ['LIQUIDATION_FEE', AAPL, '-182.4', liqOrder.orderId],
    ]);
    expect((await api.get<{ rows: any[] }>('account/transactions', { type: 'LIQUIDATION_FEE' })).rows.map((t) => t.amount)).toEqual(['-182.4']);
    // 1 000 − 9.5 − 760 − 182.4.
    expect((await api.get<any>('account')).balance).toBe('48.1');
  });
});
