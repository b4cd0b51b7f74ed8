import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import type { Db } from '../../src/storage/database.ts';
import { countCandles, listCandles, upsertCandles } from '../../src/storage/candle-store.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import { INTERVAL_MS, INTERVALS } from '../../src/marketdata/market-types.ts';
import { DEMO_SYMBOLS, PERP_INDEX_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createGbmSource } from '../../src/marketdata/gbm-source.ts';
import { bucketStart, rollup, rollupAll } from '../../src/marketdata/candle-aggregator.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import { HISTORY_META_KEY, seedHistory } from '../../src/marketdata/history-seeder.ts';
import { allCandles, continuityProblems, DAY, expectedMinutes, firstCandleDifference, MINUTE } from './marketdata-test-helpers.ts';

// A fixed clock: mid-minute, mid-day, so the current minute is partial and the day has a past.
const NOW = Date.UTC(2025, 2, 12, 15, 41, 27, 250);
const CURRENT = Math.floor(NOW / MINUTE) * MINUTE;
const [AAPL, TSLA] = DEMO_SYMBOLS;
const [BTC] = PERP_INDEX_SYMBOLS;

describe.each(testDatabases)('seedHistory ($name)', ({ name, open }) => {
  const dbs: Db[] = [];
  const openDb = async (): Promise<Db> => {
    const db = await open();
    dbs.push(db);
    return db;
  };
  afterEach(async () => {
    await Promise.all(dbs.splice(0).map((db) => db.close()));
  });

  it('writes a symbol-day per transaction and gives timers a turn between them (a lease keeps renewing while it seeds)', async () => {
    const db = await openDb();
    let turns = 0;
    const timer = setInterval(() => (turns += 1), 0);
    try {
      const result = await seedHistory({ db, symbols: [AAPL, TSLA], seed: 42, days: 3, now: NOW });
      // Three whole days and today's part, per symbol: four slices each.
      expect(result.slices).toBe(2 * 4);
      expect(result.minutesGenerated).toBe(2 * (3 * 1440 + 1));
    } finally {
      clearInterval(timer);
    }
    // One transaction holding the loop (the old seed on SQLite) let the timer run no time at all.
    expect(turns).toBeGreaterThanOrEqual(7);
  });

  it('seeds 30 days of every interval, aggregates equal to the roll-up of the 1m candles', async () => {
    const db = await openDb();
    // Five symbols on SQLite, as the embedded stack seeds; two keep PostgreSQL's run short. (Speed is
    // the benchmark's business, not this test's.)
    const symbols = name === 'sqlite' ? DEMO_SYMBOLS : DEMO_SYMBOLS.slice(0, 2);
    const result = await seedHistory({ db, symbols, seed: 42, now: NOW });

    expect(result.fresh).toBe(true);
    expect(result.anchor).toBe(CURRENT - 30 * DAY);
    expect(result.minutesGenerated).toBe(symbols.length * (30 * 1440 + 1));
    expect(JSON.parse((await getMeta(db, HISTORY_META_KEY))!)).toMatchObject({ anchor: CURRENT - 30 * DAY, seed: '42', days: 30 });

    for (const [i, spec] of symbols.entries()) {
      const minutes = await allCandles(db, spec.symbol, '1m');
      expect(minutes.length).toBe(30 * 1440 + 1);
      expect(minutes[0].openTime).toBe(CURRENT - 30 * DAY);
      expect(minutes[0].open).toBe(spec.startPrice);
      expect(minutes.at(-1)!.openTime).toBe(CURRENT);
      expect(continuityProblems(minutes)).toEqual([]);
      for (const interval of INTERVALS) {
        // Reading every aggregate back is the slow part of this test: in full for two symbols.
        const stored = i < 2 ? await allCandles(db, spec.symbol, interval) : [
          ...(await listCandles(db, { symbol: spec.symbol, interval, startTime: 0, limit: 1 })),
          ...(await listCandles(db, { symbol: spec.symbol, interval, endTime: NOW, limit: 1 })),
        ];
        expect(stored[0].openTime, interval).toBeLessThanOrEqual(NOW - 30 * DAY);
        expect(stored.at(-1)!.openTime, interval).toBe(bucketStart(NOW, interval));
        expect(stored.at(-1)!.openTime - stored[0].openTime + INTERVAL_MS[interval], interval).toBeGreaterThanOrEqual(30 * DAY);
        if (i < 2 && interval !== '1m') expect(firstCandleDifference(stored, rollup(minutes, interval)), interval).toBeUndefined();
      }
      // The state the live service continues from.
      const state = result.symbols.get(spec.symbol)!;
      expect(state.minute).toBe(CURRENT);
      expect(state.prevClose).toBe(minutes.at(-2)!.close);
      const today = minutes.filter((c) => c.openTime >= bucketStart(NOW, '1d') && c.openTime < CURRENT);
      expect(today.length).toBe((CURRENT - bucketStart(NOW, '1d')) / MINUTE);
      // The live aggregates' base: each interval's roll-up of the finished minutes of its current bucket.
      for (const interval of INTERVALS.filter((x) => x !== '1m')) {
        const finished = today.filter((c) => c.openTime >= bucketStart(CURRENT, interval));
        expect(state.bases.get(interval), interval).toEqual(finished.length === 0 ? undefined : rollup(finished, interval)[0]);
      }
    }
    // Every interval of every symbol is there.
    for (const spec of symbols) {
      for (const interval of INTERVALS) expect(await countCandles(db, spec.symbol, interval)).toBe(Math.floor((NOW - bucketStart(CURRENT - 30 * DAY, interval)) / INTERVAL_MS[interval]) + 1);
    }
  });

  it('is reproducible from seed and anchor, and another seed gives another history', async () => {
    const [a, b, c] = [await openDb(), await openDb(), await openDb()];
    await seedHistory({ db: a, symbols: [AAPL, TSLA], seed: 7, days: 1, now: NOW });
    await seedHistory({ db: b, symbols: [AAPL, TSLA], seed: 7, days: 1, now: NOW });
    await seedHistory({ db: c, symbols: [AAPL, TSLA], seed: 8, days: 1, now: NOW });
    for (const interval of INTERVALS) {
      for (const spec of [AAPL, TSLA]) {
        const fromA = await allCandles(a, spec.symbol, interval);
        expect(fromA.length).toBeGreaterThan(0);
        expect(firstCandleDifference(await allCandles(b, spec.symbol, interval), fromA)).toBeUndefined();
        expect(firstCandleDifference(await allCandles(c, spec.symbol, interval), fromA)).toBeDefined();
      }
    }
    // And equal to what the source computes directly from the anchor.
    const source = createGbmSource({ seed: 7 });
    expect(firstCandleDifference(await allCandles(a, 'AAPL', '1m'), expectedMinutes(source, AAPL, CURRENT - DAY, NOW))).toBeUndefined();
  });

  it('backfills the gap after a restart: no holes, no duplicates, as if it had kept running', async () => {
    const db = await openDb();
    await seedHistory({ db, symbols: [AAPL, TSLA], seed: 42, days: 1, now: NOW });
    const stoppedMinute = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: CURRENT, limit: 1 });
    const later = NOW + 3 * 3_600_000 + 17 * MINUTE + 5_000;
    const result = await seedHistory({ db, symbols: [AAPL, TSLA], seed: 42, days: 1, now: later });
    expect(result.fresh).toBe(false);
    expect(result.anchor).toBe(CURRENT - DAY);
    const laterMinute = Math.floor(later / MINUTE) * MINUTE;
    // The minute the first run stopped in (stored partial) is completed, then every minute after it.
    expect(result.minutesGenerated).toBe(2 * ((laterMinute - CURRENT) / MINUTE + 1));

    const source = createGbmSource({ seed: 42 });
    for (const spec of [AAPL, TSLA]) {
      const minutes = await allCandles(db, spec.symbol, '1m');
      expect(firstCandleDifference(minutes, expectedMinutes(source, spec, CURRENT - DAY, later))).toBeUndefined();
      expect(await countCandles(db, spec.symbol, '1m')).toBe((laterMinute - (CURRENT - DAY)) / MINUTE + 1);
      for (const interval of INTERVALS.slice(1)) {
        expect(firstCandleDifference(await allCandles(db, spec.symbol, interval), rollup(minutes, interval)), interval).toBeUndefined();
      }
    }
    const completed = (await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: CURRENT, limit: 1 }))[0];
    expect(completed.open).toBe(stoppedMinute[0].open);
    expect(BigInt(completed.volume)).toBeGreaterThan(BigInt(stoppedMinute[0].volume));

    // A start within the same minute writes nothing new but the current minute.
    const again = await seedHistory({ db, symbols: [AAPL, TSLA], seed: 42, days: 1, now: later + 1_000 });
    expect(again.minutesGenerated).toBe(2);
    expect(await countCandles(db, 'AAPL', '1m')).toBe((laterMinute - (CURRENT - DAY)) / MINUTE + 1);
    // Each start builds its aggregates from the stored ones (not the day's minutes): still the
    // roll-up of the minutes, and the live base of every interval that of its bucket's finished minutes.
    for (const spec of [AAPL, TSLA]) {
      const minutes = await allCandles(db, spec.symbol, '1m');
      for (const interval of INTERVALS.slice(1)) {
        expect(firstCandleDifference(await allCandles(db, spec.symbol, interval), rollup(minutes, interval)), interval).toBeUndefined();
        const finished = minutes.filter((c) => c.openTime >= bucketStart(laterMinute, interval) && c.openTime < laterMinute);
        expect(again.symbols.get(spec.symbol)!.bases.get(interval), interval).toEqual(rollup(finished, interval)[0]);
      }
    }
  });

  it('continues from the close of a last candle it did not generate, and seeds a newly listed symbol', async () => {
    const db = await openDb();
    await seedHistory({ db, symbols: [AAPL], seed: 42, days: 1, now: NOW });
    // Real data imported over the last minutes, ending at a price the simulator would never pick.
    const imported = { symbol: 'AAPL', interval: '1m' as const, openTime: CURRENT + MINUTE, open: '300.00', high: '310.00', low: '299.00', close: '305.55', volume: '12345' };
    await upsertCandles(db, [imported, ...rollupAll([imported])]);
    const later = CURRENT + 10 * MINUTE + 30_000;
    const result = await seedHistory({ db, symbols: [AAPL, TSLA], seed: 42, days: 1, now: later });
    const after = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: CURRENT + MINUTE, limit: 100 });
    expect(after[0]).toEqual(imported);
    expect(after[1].open).toBe('305.55');
    expect(after.at(-1)!.openTime).toBe(CURRENT + 10 * MINUTE);
    // TSLA was not listed before: it gets a full history of its own.
    expect(await countCandles(db, 'TSLA', '1m')).toBe(1440 + 1);
    expect(result.symbols.get('TSLA')!.minute).toBe(CURRENT + 10 * MINUTE);
  });

  it('writes no candles for closed minutes and holds the price over the closure', async () => {
    const db = await openDb();
    const calendar = createMarketCalendar('nyse');
    // Monday 2025-03-10 15:00 UTC (11:00 EDT); two days back covers Friday's session and the weekend.
    const now = Date.UTC(2025, 2, 10, 15, 0, 30);
    await seedHistory({ db, symbols: [AAPL], seed: 42, days: 3, now, calendar });
    const minutes = await allCandles(db, 'AAPL', '1m');
    for (const c of minutes) expect(calendar.isOpen(c.openTime)).toBe(true);
    // Three days back is Friday 7 March 15:00 UTC: Friday to the 21:00 UTC close, then Monday from 13:30 UTC to now.
    expect(minutes.length).toBe(360 + 90 + 1);
    const fridayLast = minutes.find((c) => c.openTime === Date.UTC(2025, 2, 7, 20, 59))!;
    const mondayFirst = minutes.find((c) => c.openTime === Date.UTC(2025, 2, 10, 13, 30))!;
    expect(mondayFirst.open).toBe(fridayLast.close);
    expect(await allCandles(db, 'AAPL', '1d')).toEqual(rollup(minutes, '1d'));
    expect((await allCandles(db, 'AAPL', '1d')).map((c) => c.openTime)).toEqual([Date.UTC(2025, 2, 7), Date.UTC(2025, 2, 10)]);
  });

  it('gives an always-open symbol (BTC) every minute of the weekend while the NYSE stock stands still', async () => {
    const db = await openDb();
    const calendar = createMarketCalendar('nyse');
    const source = createGbmSource({ seed: 42 });
    // Saturday 2025-03-08 12:00:30 UTC: one day back is Friday 12:00 UTC, NYSE open 14:30 to 21:00 UTC.
    const saturday = Date.UTC(2025, 2, 8, 12, 0, 30);
    const first = await seedHistory({ db, symbols: [AAPL, BTC], seed: 42, days: 1, now: saturday, calendar });
    const fridayNoon = Date.UTC(2025, 2, 7, 12, 0);
    const fridayLast = Date.UTC(2025, 2, 7, 20, 59);

    // BTC: all 1440 minutes of the day back plus the current one, exactly as the source walks them.
    const btc = await allCandles(db, 'BTC', '1m');
    expect(btc.length).toBe(1441);
    expect(btc[0]).toMatchObject({ openTime: fridayNoon, open: '97000.00' });
    expect(btc.at(-1)!.openTime).toBe(Date.UTC(2025, 2, 8, 12, 0));
    expect(firstCandleDifference(btc, expectedMinutes(source, BTC, fridayNoon, saturday))).toBeUndefined();
    expect((await allCandles(db, 'BTC', '1d')).map((c) => c.openTime)).toEqual([Date.UTC(2025, 2, 7), Date.UTC(2025, 2, 8)]);
    // AAPL: Friday's session only (14:30 to 20:59 UTC), nothing on Saturday.
    const aapl = await allCandles(db, 'AAPL', '1m');
    expect(aapl.length).toBe(390);
    expect(aapl[0].openTime).toBe(Date.UTC(2025, 2, 7, 14, 30));
    expect(aapl.at(-1)!.openTime).toBe(fridayLast);
    expect(first.minutesGenerated).toBe(1441 + 390);
    expect(first.symbols.get('AAPL')!.prevClose).toBe(aapl.at(-1)!.close);
    expect(first.symbols.get('BTC')!.prevClose).toBe(btc.at(-2)!.close);

    // A restart on Sunday: BTC is backfilled minute by minute (Saturday 12:00 completed, then on to
    // Sunday 12:00), AAPL gets nothing and its price is still Friday's close.
    const sunday = Date.UTC(2025, 2, 9, 12, 0, 30);
    const second = await seedHistory({ db, symbols: [AAPL, BTC], seed: 42, days: 1, now: sunday, calendar });
    // 1441 for BTC, plus AAPL's last stored minute (Friday 20:59) generated again to the same candle:
    // the seeder re-checks a last candle the simulator made, as it may have been cut mid-minute.
    expect(second.minutesGenerated).toBe(1441 + 1);
    const btcLater = await allCandles(db, 'BTC', '1m');
    expect(btcLater.length).toBe(2 * 1440 + 1);
    expect(firstCandleDifference(btcLater, expectedMinutes(source, BTC, fridayNoon, sunday))).toBeUndefined();
    expect(btcLater.at(-2)!.close).not.toBe(btc.at(-2)!.close);
    expect(second.symbols.get('BTC')!.prevClose).toBe(btcLater.at(-2)!.close);
    expect(await allCandles(db, 'AAPL', '1m')).toEqual(aapl);
    expect(second.symbols.get('AAPL')!.prevClose).toBe(aapl.at(-1)!.close);
    expect((await allCandles(db, 'AAPL', '1d')).map((c) => c.openTime)).toEqual([Date.UTC(2025, 2, 7)]);
    expect((await allCandles(db, 'BTC', '1d')).map((c) => c.openTime)).toEqual([Date.UTC(2025, 2, 7), Date.UTC(2025, 2, 8), Date.UTC(2025, 2, 9)]);
  });
});
