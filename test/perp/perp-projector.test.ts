/**
 * The projector on a real sequencer and database: the history rows it writes from the engine's
 * durable events, its cursor, `caughtUp`, and a restart that resumes from the cursor without
 * applying any event twice (order fills and candle volumes would double if it did: they are
 * additive, unlike the insert-or-ignore trade and transaction rows).
 *
 * AAPL-USD: 100 µUSD per tick × lot, maker fee 200 ppm, taker 500 ppm (rounded up).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { FEE_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';
import { createPerpProjector, PROJECTION_CURSOR_KEY, type PerpProjector } from '../../src/perp/projection/perp-projector.ts';
import { createInProcessGateway, type EngineGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { listPerpCandles } from '../../src/perp/store/perp-candle-store.ts';
import { getOrder, listFundingRates, listTrades, listTransactions, type PerpTransactionRecord } from '../../src/perp/store/perp-history-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const USD = 1_000_000n;
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

describe.each(testDatabases)('perp projector ($name)', ({ open }) => {
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
    const projector = createPerpProjector({ db, gateway, feeAccount: FEE_ACCOUNT, retryMs: 20 });
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
      createdAt: H + 2_000, updatedAt: H + 10_000,
    });
    expect(await getOrder(db, 2)).toMatchObject({ account: B, side: 'BUY', filledLots: 4, filledNotional: 8_020_000n, fee: 4_010n, status: 'FILLED', reason: 'FILLED' });
    const tradeId = (await listTrades(db, { account: A, offset: 0, limit: 10 })).rows[0].tradeId;
    expect((await listTrades(db, { account: A, offset: 0, limit: 10 })).rows).toEqual([
      { tradeId, role: 'MAKER', account: A, symbol: AAPL, orderId: 1, side: 'SELL', priceTicks: 20_050, sizeLots: 4, notional: 8_020_000n, fee: 1_604n, realisedPnl: 0n, ts: H + 10_000 },
    ]);
    expect((await listTrades(db, { account: B, offset: 0, limit: 10 })).rows).toEqual([
      { tradeId, role: 'TAKER', account: B, symbol: AAPL, orderId: 2, side: 'BUY', priceTicks: 20_050, sizeLots: 4, notional: 8_020_000n, fee: 4_010n, realisedPnl: 0n, ts: H + 10_000 },
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
