import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/app-error.ts';
import type { Candle, Interval } from '../../src/marketdata/market-types.ts';
import { countCandles, latestCandle, listCandles, upsertCandles } from '../../src/storage/candle-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const MIN = 60_000;
const T0 = 1_700_000_040_000 - (1_700_000_040_000 % MIN);

function candle(symbol: string, interval: Interval, openTime: number, close = '100.5'): Candle {
  return { symbol, interval, openTime, open: '100', high: '101.25', low: '99.75', close, volume: '1234.000000000000000001' };
}

/** n consecutive 1m candles of `symbol` from T0. */
function series(symbol: string, n: number): Candle[] {
  return Array.from({ length: n }, (_, i) => candle(symbol, '1m', T0 + i * MIN, `${100 + i}.${i}`));
}

describe.each(testDatabases)('candle-store ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('round-trips exact decimal strings', async () => {
    const c: Candle = {
      symbol: 'AAPL',
      interval: '1h',
      openTime: T0,
      open: '123456789012345678901234567890.123456789012345678',
      high: '0.000000000000000001',
      low: '0',
      close: '-0.5',
      volume: '100000000000000000000000000',
    };
    await upsertCandles(db, [c]);
    expect(await listCandles(db, { symbol: 'AAPL', interval: '1h', startTime: 0, limit: 10 })).toEqual([c]);
    expect(await latestCandle(db, 'AAPL', '1h')).toEqual(c);
  });

  it('upserts: a second write of the same bar replaces OHLCV, last entry in a call wins', async () => {
    await upsertCandles(db, [candle('AAPL', '1m', T0, '1'), candle('AAPL', '1m', T0 + MIN, '2')]);
    await upsertCandles(db, [candle('AAPL', '1m', T0, '10'), candle('AAPL', '1m', T0, '11'), candle('AAPL', '5m', T0, '5')]);
    expect(await countCandles(db)).toBe(3);
    const bars = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: T0, limit: 10 });
    expect(bars.map((b) => [b.openTime, b.close])).toEqual([
      [T0, '11'],
      [T0 + MIN, '2'],
    ]);
    await upsertCandles(db, []);
    expect(await countCandles(db)).toBe(3);
  });

  it('lists from startTime ascending, bounded by endTime and limit (inclusive bounds)', async () => {
    await upsertCandles(db, [...series('AAPL', 20), ...series('TSLA', 5), candle('AAPL', '5m', T0, '9')]);
    const q = { symbol: 'AAPL', interval: '1m' as const };
    const first = await listCandles(db, { ...q, startTime: T0 + 3 * MIN, limit: 4 });
    expect(first.map((c) => c.openTime)).toEqual([3, 4, 5, 6].map((i) => T0 + i * MIN));
    expect(first[0]).toEqual(series('AAPL', 20)[3]);

    const bounded = await listCandles(db, { ...q, startTime: T0 + 3 * MIN, endTime: T0 + 5 * MIN, limit: 100 });
    expect(bounded.map((c) => c.openTime)).toEqual([3, 4, 5].map((i) => T0 + i * MIN));

    const between = await listCandles(db, { ...q, startTime: T0 + 3 * MIN + 1, endTime: T0 + 4 * MIN - 1, limit: 100 });
    expect(between).toEqual([]);
  });

  it('without startTime lists the latest `limit` candles up to endTime (or now), ascending', async () => {
    await upsertCandles(db, series('AAPL', 20));
    const q = { symbol: 'AAPL', interval: '1m' as const };
    const latest = await listCandles(db, { ...q, limit: 3 });
    expect(latest.map((c) => c.openTime)).toEqual([17, 18, 19].map((i) => T0 + i * MIN));

    const beforeEnd = await listCandles(db, { ...q, endTime: T0 + 10 * MIN, limit: 3 });
    expect(beforeEnd.map((c) => c.openTime)).toEqual([8, 9, 10].map((i) => T0 + i * MIN));

    const all = await listCandles(db, { ...q, limit: 1000 });
    expect(all).toHaveLength(20);

    // "now" bounds the default: a bar opening in the future is not returned.
    await upsertCandles(db, [candle('AAPL', '1m', Date.now() + 3_600_000)]);
    expect((await listCandles(db, { ...q, limit: 1 }))[0]!.openTime).toBe(T0 + 19 * MIN);
  });

  it('answers latestCandle and counts by symbol and interval', async () => {
    expect(await latestCandle(db, 'AAPL', '1m')).toBeUndefined();
    expect(await countCandles(db)).toBe(0);
    await upsertCandles(db, [...series('AAPL', 7), ...series('TSLA', 4), candle('AAPL', '1d', T0)]);
    expect(await latestCandle(db, 'AAPL', '1m')).toEqual(series('AAPL', 7)[6]);
    expect(await countCandles(db)).toBe(12);
    expect(await countCandles(db, 'AAPL')).toBe(8);
    expect(await countCandles(db, 'AAPL', '1m')).toBe(7);
    expect(await countCandles(db, undefined, '1m')).toBe(11);
    expect(await countCandles(db, 'MSFT')).toBe(0);
  });

  it('rejects a limit below 1', async () => {
    await expect(listCandles(db, { symbol: 'AAPL', interval: '1m', limit: 0 })).rejects.toBeInstanceOf(ValidationError);
  });

  it('bulk-loads 300,000 candles in one call, split into statements under the parameter limits', async () => {
    const symbols = ['AAPL', 'TSLA', 'NVDA', 'MSFT', 'AMZN', 'GOOG'];
    const perSymbol = 50_000;
    const all: Candle[] = [];
    for (const s of symbols) {
      for (let i = 0; i < perSymbol; i++) {
        all.push({
          symbol: s,
          interval: '1m',
          openTime: T0 + i * MIN,
          open: '187.12',
          high: '188.5',
          low: '186.995',
          close: `${187 + (i % 100) / 100}`,
          volume: `${i}.5`,
        });
      }
    }
    await upsertCandles(db, all);
    expect(await countCandles(db)).toBe(300_000);
    expect(await countCandles(db, 'NVDA', '1m')).toBe(perSymbol);
    expect(await latestCandle(db, 'MSFT', '1m')).toEqual(all[4 * perSymbol - 1]);
  });
});
