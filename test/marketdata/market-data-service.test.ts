import { describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import { until } from '../support/poll.ts';
import { countCandles, listCandles } from '../../src/storage/candle-store.ts';
import { getQuote, listQuotes } from '../../src/storage/quote-store.ts';
import { INTERVALS, type Quote } from '../../src/marketdata/market-types.ts';
import { DEMO_SYMBOLS, PERP_INDEX_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createGbmSource, toCents } from '../../src/marketdata/gbm-source.ts';
import { bucketStart, rollup } from '../../src/marketdata/candle-aggregator.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import { createMarketDataService, type MarketDataService } from '../../src/marketdata/market-data-service.ts';
import {
  allCandles,
  breakWrites,
  continuityProblems,
  DAY,
  expectedMinutes,
  firstCandleDifference,
  memoryLogger,
  MINUTE,
  useMarketDataServices,
} from './marketdata-test-helpers.ts';

const START = Date.UTC(2025, 2, 12, 15, 58, 41, 100);
const [AAPL, TSLA] = DEMO_SYMBOLS;
const SYMBOLS = [AAPL, TSLA];

describe.each(testDatabases)('market-data service ($name)', ({ open }) => {
  const { keep, openDb, fakeClockService } = useMarketDataServices(open, SYMBOLS);

  it('starts with history and quotes, and its ticks build the candles history would hold', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock);
    const seen: Quote[] = [];
    const unsubscribe = service.onQuote((q) => seen.push(q));
    await service.start();

    // Quotes in memory and in storage right after start.
    expect(service.listQuotes().map((q) => q.symbol)).toEqual(['AAPL', 'TSLA']);
    for (const q of service.listQuotes()) {
      expect(toCents(q.bid)).toBeLessThan(toCents(q.ask));
      expect(toCents(q.bid)).toBeLessThanOrEqual(toCents(q.last));
      expect(q.timestamp).toBe(START);
      expect(await getQuote(db, q.symbol)).toEqual(q);
    }
    expect(seen.length).toBe(2);

    // Tick every 700 ms across a 5m, 15m, 1h boundary (16:00 UTC) and then some.
    const end = START + 4 * MINUTE;
    while (clock.t < end) {
      clock.t += 700;
      await service.tick();
    }
    expect(seen.length).toBe(2 + 2 * Math.ceil((end - START) / 700));
    expect(seen.at(-1)).toEqual(service.getQuote('TSLA'));

    const source = createGbmSource({ seed: 42 });
    const current = Math.floor(clock.t / MINUTE) * MINUTE;
    for (const spec of SYMBOLS) {
      const minutes = await allCandles(db, spec.symbol, '1m');
      expect(firstCandleDifference(minutes, expectedMinutes(source, spec, Math.floor(START / MINUTE) * MINUTE - DAY, clock.t))).toBeUndefined();
      expect(minutes.at(-1)!.openTime).toBe(current);
      for (const interval of INTERVALS.slice(1)) {
        const stored = await allCandles(db, spec.symbol, interval);
        expect(firstCandleDifference(stored, rollup(minutes, interval)), interval).toBeUndefined();
        expect(stored.at(-1)!.openTime).toBe(bucketStart(clock.t, interval));
      }
      const q = service.getQuote(spec.symbol)!;
      expect(q).toEqual(source.tick(spec, clock.t, minutes.at(-2)!.close).quote);
      expect(await getQuote(db, spec.symbol)).toEqual(q);
    }

    unsubscribe();
    clock.t += 1_000;
    await service.tick();
    expect(seen.length).toBe(2 + 2 * Math.ceil((end - START) / 700));
  });

  it('survives a storage failure in a tick: logs it, keeps quoting, writes everything once storage is back', async () => {
    const db = await openDb();
    const clock = { t: START };
    const logger = memoryLogger();
    const service = fakeClockService(db, clock, { logger });
    await service.start();
    const repair = await breakWrites(db, 'quotes');
    const before = await getQuote(db, 'AAPL');

    // Fail across a minute boundary: the finished minute must still land in its final form.
    for (let i = 0; i < 5; i++) {
      clock.t += 5_000; // 15:58:41 → 15:59:06
      await expect(service.tick()).resolves.toBeUndefined();
    }
    expect(service.getQuote('AAPL')!.timestamp).toBe(clock.t);
    expect(await getQuote(db, 'AAPL')).toEqual(before);
    const errors = logger.lines.filter((l) => l.level === 'error');
    expect(errors.length).toBe(1); // once per outage
    expect(errors[0].msg).toMatch(/tick write failed/);

    await repair();
    clock.t += 1_000;
    await service.tick();
    expect(await getQuote(db, 'AAPL')).toEqual(service.getQuote('AAPL'));
    expect(logger.lines.some((l) => l.level === 'info' && /resumed/.test(l.msg ?? ''))).toBe(true);
    const source = createGbmSource({ seed: 42 });
    const minutes = await allCandles(db, 'AAPL', '1m');
    expect(firstCandleDifference(minutes, expectedMinutes(source, AAPL, Math.floor(START / MINUTE) * MINUTE - DAY, clock.t))).toBeUndefined();
    expect(firstCandleDifference(await allCandles(db, 'AAPL', '5m'), rollup(minutes, '5m'))).toBeUndefined();
  });

  it('can be stopped during a storage outage and started again without writing stale candles', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock);
    await service.start();
    const repair = await breakWrites(db, 'candles');
    clock.t += 30_000; // into the next minute: the finished one and a partial stay pending
    await service.tick();
    await service.stop();
    await repair();
    clock.t += 5 * MINUTE;
    await service.start();
    clock.t += 1_000;
    await service.tick();
    const source = createGbmSource({ seed: 42 });
    const minutes = await allCandles(db, 'AAPL', '1m');
    expect(firstCandleDifference(minutes, expectedMinutes(source, AAPL, Math.floor(START / MINUTE) * MINUTE - DAY, clock.t))).toBeUndefined();
    expect(firstCandleDifference(await allCandles(db, 'AAPL', '15m'), rollup(minutes, '15m'))).toBeUndefined();
  });

  it('restarts after downtime: backfills the gap and continues without holes or duplicates', async () => {
    const db = await openDb();
    const clock = { t: START };
    const first = fakeClockService(db, clock);
    await first.start();
    clock.t += 2_000;
    await first.tick();
    await first.stop();

    clock.t += 42 * MINUTE + 13_000;
    const second = fakeClockService(db, clock);
    await second.start();
    clock.t += 1_000;
    await second.tick();

    const anchor = Math.floor(START / MINUTE) * MINUTE - DAY;
    const source = createGbmSource({ seed: 42 });
    for (const spec of SYMBOLS) {
      const minutes = await allCandles(db, spec.symbol, '1m');
      expect(continuityProblems(minutes)).toEqual([]);
      expect(minutes.length).toBe((Math.floor(clock.t / MINUTE) * MINUTE - anchor) / MINUTE + 1);
      expect(await countCandles(db, spec.symbol, '1m')).toBe(minutes.length);
      expect(firstCandleDifference(minutes, expectedMinutes(source, spec, anchor, clock.t))).toBeUndefined();
      expect(firstCandleDifference(await allCandles(db, spec.symbol, '1h'), rollup(minutes, '1h'))).toBeUndefined();
    }
  });

  it('holds the price while the calendar is closed', async () => {
    const db = await openDb();
    // Friday 2025-03-07 20:59:30 UTC: the last NYSE minute of the week.
    const clock = { t: Date.UTC(2025, 2, 7, 20, 59, 30) };
    const service = fakeClockService(db, clock, { calendar: createMarketCalendar('nyse') });
    await service.start();
    clock.t += 45_000; // 21:00:15, closed
    await service.tick();
    const closedQuote = service.getQuote('AAPL')!;
    const lastMinute = (await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: Date.UTC(2025, 2, 7, 20, 59), limit: 5 }));
    expect(lastMinute.map((c) => c.openTime)).toEqual([Date.UTC(2025, 2, 7, 20, 59)]);
    expect(closedQuote.last).toBe(lastMinute[0].close);
    clock.t += 3 * 3_600_000;
    await service.tick();
    expect(service.getQuote('AAPL')).toMatchObject({ last: closedQuote.last, bid: closedQuote.bid, ask: closedQuote.ask, timestamp: clock.t });
    expect(await countCandles(db, 'AAPL', '1m')).toBe(lastMinute.length + (await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: 0, endTime: Date.UTC(2025, 2, 7, 20, 58), limit: 10_000 })).length);
  });

  it('an always-open symbol (BTC) keeps moving and gets candles over the weekend while the NYSE stock stands still', async () => {
    const db = await openDb();
    const [btc] = PERP_INDEX_SYMBOLS;
    // Saturday 2025-03-08 12:00:30 UTC: NYSE closed since Friday 21:00.
    const clock = { t: Date.UTC(2025, 2, 8, 12, 0, 30) };
    const service = fakeClockService(db, clock, { symbols: [AAPL, btc], calendar: createMarketCalendar('nyse') });
    await service.start();
    const aapl0 = service.getQuote('AAPL')!;
    const btc0 = service.getQuote('BTC')!;
    // History: BTC has every minute of the day back (one day of history, the current minute partial);
    // AAPL's last minute is Friday's close.
    const btcMinutes = await listCandles(db, { symbol: 'BTC', interval: '1m', startTime: 0, limit: 10_000 });
    expect(btcMinutes.length).toBe(24 * 60 + 1);
    expect(btcMinutes.at(-1)!.openTime).toBe(Date.UTC(2025, 2, 8, 12, 0));
    const aaplLast = (await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: 0, limit: 10_000 })).at(-1)!;
    expect(aaplLast.openTime).toBe(Date.UTC(2025, 2, 7, 20, 59));
    expect(aapl0.last).toBe(aaplLast.close);

    const source = createGbmSource({ seed: 42 });
    expect(btc0).toEqual(source.tick(btc, clock.t, btcMinutes.at(-2)!.close).quote);
    const aaplCount = await countCandles(db, 'AAPL', '1m');

    clock.t += 90_000; // 12:02:00
    await service.tick();
    expect(service.getQuote('AAPL')).toEqual({ ...aapl0, timestamp: clock.t });
    expect(await getQuote(db, 'AAPL')).toEqual({ ...aapl0, timestamp: clock.t });
    expect(await countCandles(db, 'AAPL', '1m')).toBe(aaplCount);
    expect((await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: Date.UTC(2025, 2, 7, 21, 0), limit: 10 }))).toEqual([]);
    const btc1 = service.getQuote('BTC')!;
    // The minutes 12:00 and 12:01 are complete and 12:02 has begun: a new candle each.
    const btcAfter = await listCandles(db, { symbol: 'BTC', interval: '1m', startTime: Date.UTC(2025, 2, 8, 12, 0), limit: 10 });
    expect(btcAfter.map((c) => c.openTime)).toEqual([0, 1, 2].map((m) => Date.UTC(2025, 2, 8, 12, m)));
    expect(btcAfter[0]).toEqual(source.minuteCandle(btc, Date.UTC(2025, 2, 8, 12, 0), btcMinutes.at(-2)!.close));
    expect(btcAfter[1]).toEqual(source.minuteCandle(btc, Date.UTC(2025, 2, 8, 12, 1), btcAfter[0].close));
    const live = source.tick(btc, clock.t, btcAfter[1].close);
    expect(btcAfter[2]).toEqual(live.candle);
    expect(btc1).toEqual(live.quote);
    expect(btc1.timestamp).toBe(clock.t);
    expect(await getQuote(db, 'BTC')).toEqual(btc1);
    expect(btc1.last).not.toBe(btc0.last);
  });

  it('ticks on its own timer and stop() waits for the tick in flight', async () => {
    const db = await openDb();
    const service = createMarketDataService({ db, symbols: SYMBOLS, seed: 9, tickMs: 40, historyDays: 1 });
    keep(service);
    const seen: Quote[] = [];
    service.onQuote((q) => seen.push(q));
    await service.start();
    const t0 = service.getQuote('AAPL')!.timestamp;
    // Four ticks of the timer (two symbols each), however long a busy machine takes for them.
    await until(async () => seen.length, (n) => n >= 2 * 4, 20_000);
    await service.stop();
    expect(seen.length).toBeGreaterThanOrEqual(2 * 4);
    const last = service.getQuote('AAPL')!;
    expect(last.timestamp).toBeGreaterThan(t0);
    // Everything the last tick computed is in storage once stop() resolved.
    expect((await listQuotes(db)).find((q) => q.symbol === 'AAPL')).toEqual(last);
    const count = seen.length;
    // A fixed wait on purpose: it proves no tick follows the stop, so there is nothing to poll for.
    // Seven tick periods; a tick would be both told and stored, and both are checked.
    await new Promise((r) => setTimeout(r, 7 * 40));
    expect(seen.length).toBe(count);
    expect((await listQuotes(db)).find((q) => q.symbol === 'AAPL')).toEqual(last);
  });
});
