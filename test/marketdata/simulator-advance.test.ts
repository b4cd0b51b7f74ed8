/**
 * The simulator across a sandbox's long advance (docs/sandbox.md "Candles after a jump"): ticked at
 * hourly steps with the jump's window, the whole UTC days strictly inside it are walked by the hour
 * (one 1h candle each, rolled into 4h and 1d; no 1m, 5m or 15m under them), the first and the last
 * day keep their minutes, the path runs on without a gap from one to the other, the same seed gives
 * the same hours, a tick that does not write leaves it all to the next that does, and a restart
 * continues from the last minute without touching the hours. A walk counted from its history (a
 * seeded venue) keeps every minute.
 */
import { describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import { countCandles, listCandles } from '../../src/storage/candle-store.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { compareDecimal, rollup } from '../../src/marketdata/candle-aggregator.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import type { Candle } from '../../src/marketdata/market-types.ts';
import type { MarketDataService } from '../../src/marketdata/market-data-service.ts';
import { allCandles, continuityProblems, DAY, MINUTE, useMarketDataServices } from './marketdata-test-helpers.ts';

const HOUR = 3_600_000;
// Wednesday 12 March 2025, 15:58:41.100 UTC; the jump ends on Saturday the 15th at 05:00 UTC.
const START = Date.UTC(2025, 2, 12, 15, 58, 41, 100);
const END = Date.UTC(2025, 2, 15, 5, 0, 0, 0);
const [AAPL, TSLA] = DEMO_SYMBOLS;
const day = (d: number) => Date.UTC(2025, 2, d);

/** The walk of an advance: a tick at each hour boundary and at the end, writing at the end only. */
async function advance(service: MarketDataService, clock: { t: number }, from: number, to: number, writeAt = (t: number) => t === to): Promise<void> {
  for (let at = (Math.floor(from / HOUR) + 1) * HOUR; ; at += HOUR) {
    clock.t = Math.min(at, to);
    await service.tick({ coarse: { from, to }, write: writeAt(clock.t) });
    if (clock.t === to) return;
  }
}

const between = (candles: readonly Candle[], from: number, to: number) => candles.filter((c) => c.openTime >= from && c.openTime < to);

describe.each(testDatabases)('the simulator across an advance ($name)', ({ open }) => {
  const { openDb, fakeClockService } = useMarketDataServices(open, [AAPL, TSLA]);

  it('walks the days inside the jump by the hour, their first and last day by the minute, with no gap', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock);
    await service.start();
    await advance(service, clock, START, END);

    for (const spec of [AAPL, TSLA]) {
      const minutes = await allCandles(db, spec.symbol, '1m');
      const hours = await allCandles(db, spec.symbol, '1h');
      // No minute on the 13th and 14th; the 12th to its end and the 15th from 00:00 to the end's minute.
      expect(between(minutes, day(13), day(15))).toEqual([]);
      expect(continuityProblems(between(minutes, START - DAY, day(13)))).toEqual([]);
      expect(between(minutes, day(12), day(13)).at(-1)!.openTime).toBe(day(13) - MINUTE);
      const lastDay = between(minutes, day(15), END + MINUTE);
      expect(lastDay.map((c) => c.openTime)).toEqual(Array.from({ length: 5 * 60 + 1 }, (_, i) => day(15) + i * MINUTE));
      expect(continuityProblems(lastDay)).toEqual([]);
      for (const interval of ['5m', '15m'] as const) expect(between(await allCandles(db, spec.symbol, interval), day(13), day(15))).toEqual([]);

      // Two days of hours, each opening at the close before it, from the 12th's last minute to the 15th's first.
      const inside = between(hours, day(13), day(15));
      expect(inside.map((c) => c.openTime)).toEqual(Array.from({ length: 48 }, (_, i) => day(13) + i * HOUR));
      expect(inside[0].open).toBe(between(minutes, day(12), day(13)).at(-1)!.close);
      for (let i = 1; i < inside.length; i++) expect(inside[i].open).toBe(inside[i - 1].close);
      expect(lastDay[0].open).toBe(inside.at(-1)!.close);
      // The path moves (an hour's variance, not a minute's: not all the same price).
      expect(new Set(inside.map((c) => c.close)).size).toBeGreaterThan(40);
      for (const c of inside) {
        expect(compareDecimal(c.low, c.open) <= 0 && compareDecimal(c.low, c.close) <= 0).toBe(true);
        expect(compareDecimal(c.high, c.open) >= 0 && compareDecimal(c.high, c.close) >= 0).toBe(true);
        expect(BigInt(c.volume)).toBeGreaterThan(0n);
      }
      // The 4h and 1d candles of those days are the roll-up of their hours.
      for (const interval of ['4h', '1d'] as const) {
        expect(between(await allCandles(db, spec.symbol, interval), day(13), day(15))).toEqual(rollup(inside, interval));
      }
    }
  });

  it('gives the same hours for the same seed, and writes nothing until a tick that writes', async () => {
    const [a, b] = [await openDb(), await openDb()];
    const clocks = [{ t: START }, { t: START }];
    const services = [fakeClockService(a, clocks[0]), fakeClockService(b, clocks[1])];
    await Promise.all(services.map((s) => s.start()));
    const stored = await countCandles(b);
    // The second walks to a step before the end without writing: nothing new in storage.
    await advance(services[1], clocks[1], START, END, () => false);
    expect(await countCandles(b)).toBe(stored);
    await services[1].tick({ coarse: { from: START, to: END }, write: true });
    await advance(services[0], clocks[0], START, END);
    for (const interval of ['1m', '1h', '1d'] as const) {
      expect(await listCandles(b, { symbol: 'TSLA', interval, startTime: START, limit: 100_000 })).toEqual(await listCandles(a, { symbol: 'TSLA', interval, startTime: START, limit: 100_000 }));
    }
    expect(services[1].getQuote('TSLA')).toEqual(services[0].getQuote('TSLA'));
  });

  it('is started again after the jump from its last minute, the hours as they were', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock);
    await service.start();
    await advance(service, clock, START, END);
    const hours = await allCandles(db, 'AAPL', '1h');
    const last = service.getQuote('AAPL')!;
    await service.stop();

    clock.t = END + 30 * MINUTE;
    const again = fakeClockService(db, clock);
    await again.start();
    expect(await allCandles(db, 'AAPL', '1h').then((h) => between(h, day(13), day(15)))).toEqual(between(hours, day(13), day(15)));
    const minutes = await allCandles(db, 'AAPL', '1m');
    expect(continuityProblems(between(minutes, day(15), clock.t + MINUTE))).toEqual([]);
    expect(between(minutes, day(15), clock.t + MINUTE).length).toBe(5 * 60 + 31);
    expect(again.getQuote('AAPL')!.timestamp).toBe(clock.t);
    expect(last.timestamp).toBe(END);
  });

  it('keeps every minute where the walk counts from its history (a seeded venue: the hour of day it started must not change its prices)', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock, { walkOrigin: 'history' });
    await service.start();
    await advance(service, clock, START, END);
    const minutes = between(await allCandles(db, 'AAPL', '1m'), START - DAY, END);
    expect(continuityProblems(minutes)).toEqual([]);
    expect(between(minutes, day(13), day(15)).length).toBe(2 * 1440);
  });

  it('walks only the minutes the calendar trades: an hour half open is half an hour\'s candle', async () => {
    const db = await openDb();
    const clock = { t: START };
    // NYSE hours: 09:30 to 16:00 New York, 13:30 to 20:00 UTC in March after the clocks changed.
    const service = fakeClockService(db, clock, { calendar: createMarketCalendar('nyse') });
    await service.start();
    await advance(service, clock, START, END);
    const hours = between(await allCandles(db, 'AAPL', '1h'), day(13), day(15));
    // Thursday and Friday: 13:00 (its second half), 14:00 to 19:00; nothing when closed.
    const tradingHours = [13, 14, 15, 16, 17, 18, 19];
    expect(hours.map((c) => c.openTime)).toEqual([13, 14].flatMap((d) => tradingHours.map((h) => Date.UTC(2025, 2, d, h))));
    for (let i = 1; i < hours.length; i++) expect(hours[i].open).toBe(hours[i - 1].close);
    // Saturday the 15th: closed, the price stands at Friday's last close.
    expect(service.getQuote('AAPL')!.last).toBe(hours.at(-1)!.close);
  });
});
