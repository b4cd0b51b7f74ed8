/**
 * A split in the simulator's prices (docs/corporate-actions.md, "Splits"): at the split's minute the
 * path goes on from the price divided by the ratio, the quotes carry the multiplier they are in,
 * and a restart's backfill across the split gives the same prices as the live path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import type { Db } from '../../src/storage/database.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { listCandles } from '../../src/storage/candle-store.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createMarketDataService, type MarketDataService } from '../../src/marketdata/market-data-service.ts';
import { priceSplitsOf, splitEffectiveAt, splitPrice, SPLIT_NOTICE_MS, type PriceSplit } from '../../src/marketdata/price-splits.ts';
import { newYorkDayStart } from '../../src/marketdata/corporate-actions.ts';
import { MINUTE } from './marketdata-test-helpers.ts';

const AAPL = DEMO_SYMBOLS.find((s) => s.symbol === 'AAPL')!;
const MSFT = DEMO_SYMBOLS.find((s) => s.symbol === 'MSFT')!;
const START = Date.UTC(2026, 11, 1, 14, 57, 30);
const SPLIT_AT = Date.UTC(2026, 11, 1, 15, 0, 0);
const split: PriceSplit = { id: 'AAPL-2026-12-01', symbol: 'AAPL', at: SPLIT_AT, numerator: 10n, denominator: 1n };

describe('split prices and times', () => {
  it('divides a price by the ratio, half up to the cent, never below a cent', () => {
    expect(splitPrice('225.00', split)).toBe('22.50');
    expect(splitPrice('225.05', split)).toBe('22.51');
    expect(splitPrice('225.04', split)).toBe('22.50');
    expect(splitPrice('0.04', split)).toBe('0.01');
    expect(splitPrice('22.51', { numerator: 1n, denominator: 10n })).toBe('225.10');
    expect(splitPrice('100', { numerator: 3n, denominator: 2n })).toBe('66.67');
  });

  it('takes effect at 00:00 New York on the ex-date, or the notice after it was added, at a minute boundary', () => {
    expect(splitEffectiveAt('2026-12-01')).toBe(newYorkDayStart('2026-12-01'));
    expect(splitEffectiveAt('2026-12-01', newYorkDayStart('2026-12-01') - 3_600_000)).toBe(newYorkDayStart('2026-12-01'));
    const added = newYorkDayStart('2026-12-01') + 10 * 3_600_000 + 58_000;
    expect(splitEffectiveAt('2026-12-01', added)).toBe(Math.ceil((added + SPLIT_NOTICE_MS) / MINUTE) * MINUTE);
  });

  it('takes the file’s and the table’s splits from the venue’s start, a row replacing the file’s entry', () => {
    const file = [
      { symbol: 'NVDA', type: 'SPLIT' as const, exDate: '2024-06-10', ratio: '10:1' },
      { symbol: 'AAPL', type: 'SPLIT' as const, exDate: '2026-12-01', ratio: '4:1' },
      { symbol: 'AAPL', type: 'DIVIDEND' as const, exDate: '2026-12-02' },
    ];
    const created = newYorkDayStart('2026-12-01') + 3_600_000;
    const rows = [{ symbol: 'AAPL', type: 'SPLIT' as const, exDate: '2026-12-01', ratio: '4:1', status: 'applied' as const, createdAt: created }];
    expect(priceSplitsOf(file, rows, '2026-11-25')).toEqual([
      { id: 'AAPL-2026-12-01', symbol: 'AAPL', exDate: '2026-12-01', at: Math.ceil((created + SPLIT_NOTICE_MS) / MINUTE) * MINUTE, numerator: 4n, denominator: 1n, status: 'applied' },
    ]);
  });
});

describe.each(testDatabases)('the simulator across a split ($name)', ({ open }) => {
  const dbs: Db[] = [];
  const services: MarketDataService[] = [];
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop()));
    await Promise.all(dbs.splice(0).map((db) => db.close()));
  });
  const service = (db: Db, clock: { t: number }, splits: readonly PriceSplit[]) => {
    const s = createMarketDataService({ db, symbols: [AAPL, MSFT], seed: 42, historyDays: 1, now: () => clock.t, autoTick: false, readSplits: async () => splits });
    services.push(s);
    return s;
  };

  it('quotes from the split minute on are the path divided by ten with the multiplier; the other symbol is untouched', async () => {
    const db = await open();
    dbs.push(db);
    const clock = { t: START };
    const live = service(db, clock, [split]);
    await live.start();
    // The last tick before the split minute, then across it.
    clock.t = SPLIT_AT - 1_000;
    await live.tick();
    const before = live.getQuote('AAPL')!;
    expect(before.multiplier).toBeUndefined();
    clock.t = SPLIT_AT;
    await live.tick();
    const after = live.getQuote('AAPL')!;
    expect(after.multiplier).toBe((10n * 10n ** 36n).toString());
    expect(live.getQuote('MSFT')!.multiplier).toBeUndefined();
    // The split minute opens at the previous minute's close divided by ten.
    const [prevMinute] = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: SPLIT_AT - MINUTE, endTime: SPLIT_AT - MINUTE, limit: 1 });
    const [splitMinute] = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: SPLIT_AT, endTime: SPLIT_AT, limit: 1 });
    expect(splitMinute.open).toBe(splitPrice(prevMinute.close, split));
    expect(Number(after.last)).toBeLessThan(Number(before.last) / 5);
    expect(await getQuote(db, 'AAPL')).toMatchObject({ multiplier: (10n * 10n ** 36n).toString(), last: after.last });

    // A restart three minutes later backfills the same prices the live path would have made.
    clock.t = SPLIT_AT + 3 * MINUTE + 2_000;
    await live.tick();
    const liveQuote = live.getQuote('AAPL')!;
    await live.stop();
    const db2Candles = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: SPLIT_AT, endTime: SPLIT_AT + 3 * MINUTE, limit: 10 });

    const other = await open();
    dbs.push(other);
    const clock2 = { t: START };
    const first = service(other, clock2, [split]);
    await first.start();
    await first.stop();
    // Down across the split: the backfill crosses it.
    clock2.t = SPLIT_AT + 3 * MINUTE + 2_000;
    const second = service(other, clock2, [split]);
    await second.start();
    expect(second.getQuote('AAPL')).toEqual(liveQuote);
    expect(await listCandles(other, { symbol: 'AAPL', interval: '1m', startTime: SPLIT_AT, endTime: SPLIT_AT + 3 * MINUTE, limit: 10 })).toEqual(db2Candles);
  });

  it('a split read after its minute began applies at the next minute, not inside the minute under way', async () => {
    const db = await open();
    dbs.push(db);
    const clock = { t: START };
    const splits: PriceSplit[] = [];
    const live = createMarketDataService({ db, symbols: [AAPL], seed: 42, historyDays: 1, now: () => clock.t, autoTick: false, readSplits: async () => splits });
    services.push(live);
    await live.start();
    clock.t = SPLIT_AT + 10_000;
    await live.tick();
    splits.push(split);
    clock.t = SPLIT_AT + 20_000;
    await live.tick();
    expect(live.getQuote('AAPL')!.multiplier).toBeUndefined();
    clock.t = SPLIT_AT + MINUTE;
    await live.tick();
    expect(live.getQuote('AAPL')!.multiplier).toBe((10n * 10n ** 36n).toString());
  });
});
