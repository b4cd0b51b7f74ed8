import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import type { Db } from '../../src/storage/database.ts';
import { countCandles } from '../../src/storage/candle-store.ts';
import { ValidationError } from '../../src/errors/app-error.ts';
import { INTERVALS } from '../../src/marketdata/market-types.ts';
import { rollup } from '../../src/marketdata/candle-aggregator.ts';
import { CsvValidationError, importCandlesCsv } from '../../src/marketdata/csv-importer.ts';
import { allCandles } from './marketdata-test-helpers.ts';

/** 1m bars from 23:57 to 00:04 UTC, crossing a day: each is valid OHLC. */
function minuteCsv(fromMinute: number, count: number, basePrice = 100): string {
  const rows = ['timestamp,open,high,low,close,volume'];
  for (let i = 0; i < count; i++) {
    const t = (fromMinute + i * 60_000) / 1000; // Unix seconds
    const open = basePrice + i;
    rows.push(`${t},${open}.00,${open + 2}.50,${open - 1}.25,${open + 1}.00,${100 + i}`);
  }
  return rows.join('\n') + '\n';
}

describe.each(testDatabases)('importCandlesCsv ($name)', ({ open }) => {
  let db: Db | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('imports 1m bars and rolls up every higher interval, also across two imports', async () => {
    db = await open();
    const start = Date.UTC(2025, 2, 10, 23, 57);
    expect(await importCandlesCsv({ db, symbol: 'AAPL', interval: '1m', csv: minuteCsv(start, 8) })).toEqual({ imported: 8 });
    const minutes = await allCandles(db, 'AAPL', '1m');
    expect(minutes.length).toBe(8);
    expect(minutes[0]).toEqual({ symbol: 'AAPL', interval: '1m', openTime: start, open: '100.00', high: '102.50', low: '99.25', close: '101.00', volume: '100' });
    for (const interval of INTERVALS.slice(1)) expect(await allCandles(db, 'AAPL', interval), interval).toEqual(rollup(minutes, interval));
    expect((await allCandles(db, 'AAPL', '1d')).map((c) => c.volume)).toEqual([String(100 + 101 + 102), String(103 + 104 + 105 + 106 + 107)]);

    // A second file filling in the rest of the 00:00 5m bucket: the aggregate covers both imports.
    const second = Date.UTC(2025, 2, 11, 0, 5);
    await importCandlesCsv({ db, symbol: 'AAPL', interval: '1m', csv: minuteCsv(second, 3, 50) });
    const all = await allCandles(db, 'AAPL', '1m');
    expect(all.length).toBe(11);
    const fiveMinute = await allCandles(db, 'AAPL', '5m');
    expect(fiveMinute).toEqual(rollup(all, '5m'));
    const day = (await allCandles(db, 'AAPL', '1d')).at(-1)!;
    expect(day).toMatchObject({ openTime: Date.UTC(2025, 2, 11), open: '103.00', low: '49.25', volume: String(103 + 104 + 105 + 106 + 107 + 100 + 101 + 102) });
  });

  it('imports daily bars as they are, without touching other intervals', async () => {
    db = await open();
    const csv = 'Date,Open,High,Low,Close,Volume\n2025-03-10,227.5,230.0,226.1,229.87,51234567\n2025-03-11,229.87,231.25,228,230.5,48765432\n';
    expect(await importCandlesCsv({ db, symbol: 'AAPL', interval: '1d', csv })).toEqual({ imported: 2 });
    expect(await allCandles(db, 'AAPL', '1d')).toEqual([
      { symbol: 'AAPL', interval: '1d', openTime: Date.UTC(2025, 2, 10), open: '227.50', high: '230.00', low: '226.10', close: '229.87', volume: '51234567' },
      { symbol: 'AAPL', interval: '1d', openTime: Date.UTC(2025, 2, 11), open: '229.87', high: '231.25', low: '228.00', close: '230.50', volume: '48765432' },
    ]);
    expect(await countCandles(db, 'AAPL')).toBe(2);
    // Re-importing replaces rather than duplicates.
    await importCandlesCsv({ db, symbol: 'AAPL', interval: '1d', csv: csv.replace('229.87,51234567', '229.90,1') });
    expect(await countCandles(db, 'AAPL')).toBe(2);
    expect((await allCandles(db, 'AAPL', '1d'))[0]).toMatchObject({ close: '229.90', volume: '1' });
  });

  it('writes nothing when any row is invalid, and names the line and field', async () => {
    db = await open();
    const csv = minuteCsv(Date.UTC(2025, 2, 10, 12, 0), 5).replace(/\n([^\n]*),104\n$/, '\n$1,-4\n');
    const err = await importCandlesCsv({ db, symbol: 'AAPL', interval: '1m', csv }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CsvValidationError);
    expect(err).toMatchObject({ field: 'volume', line: 6, code: 'VALIDATION' });
    expect(await countCandles(db)).toBe(0);
    await expect(importCandlesCsv({ db, symbol: '', interval: '1m', csv: minuteCsv(0, 1) })).rejects.toThrow(ValidationError);
    await expect(importCandlesCsv({ db, symbol: 'AAPL', interval: '2m' as never, csv: minuteCsv(0, 1) })).rejects.toThrow(/interval/);
  });
});
