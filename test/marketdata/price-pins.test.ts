/**
 * Price pins (`tokex marketdata set-price`) against the market-data service on real storage: the
 * pin is written by the CLI's own function, as the CLI process would, and the service reads it
 * at its next tick.
 */
import { describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import { listCandles } from '../../src/storage/candle-store.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { setMeta } from '../../src/storage/meta-store.ts';
import { ValidationError } from '../../src/errors/app-error.ts';
import { DEMO_SYMBOLS, PERP_INDEX_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createGbmSource, spreadQuote, toCents } from '../../src/marketdata/gbm-source.ts';
import { rollup } from '../../src/marketdata/candle-aggregator.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import { importCandlesCsv } from '../../src/marketdata/csv-importer.ts';
import { HISTORY_META_KEY } from '../../src/marketdata/history-seeder.ts';
import { readPricePins } from '../../src/marketdata/price-pins.ts';
import type { MarketDataService } from '../../src/marketdata/market-data-service.ts';
import { runSetPrice } from '../../src/cli/marketdata-command.ts';
import { allCandles, continuityProblems, MINUTE, useMarketDataServices } from './marketdata-test-helpers.ts';

const START = Date.UTC(2025, 2, 12, 15, 58, 41, 100);
const AAPL = DEMO_SYMBOLS.find((s) => s.symbol === 'AAPL')!;
const BTC = PERP_INDEX_SYMBOLS.find((s) => s.symbol === 'BTC')!;
const source = createGbmSource({ seed: 42 });
const minuteOf = (t: number): number => Math.floor(t / MINUTE) * MINUTE;

/** The refusal `fn` throws: a ValidationError on `field`, its message. */
async function refusal(fn: () => Promise<unknown>, field: string): Promise<string> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as ValidationError).field).toBe(field);
  return (err as ValidationError).message;
}

describe.each(testDatabases)('price pins ($name)', ({ open }) => {
  const { openDb, fakeClockService } = useMarketDataServices(open, [AAPL, BTC]);
  const step = async (service: MarketDataService, clock: { t: number }, ms: number): Promise<void> => {
    clock.t += ms;
    await service.tick();
  };

  it('quotes exactly the pinned price from the next tick on, with its spread, and the candles follow', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock);
    await service.start();
    await step(service, clock, 1_000);
    const before = service.getQuote('BTC')!;
    expect(before.last).not.toBe('60000.00');

    const setAt = clock.t;
    const result = await runSetPrice(db, { symbol: 'btc', price: '60000', now: setAt });
    expect(result).toEqual({ symbol: 'BTC', pinned: true, price: '60000.00', setAt });
    expect([...(await readPricePins(db, ['BTC', 'AAPL'])).values()]).toEqual([{ symbol: 'BTC', price: '60000.00', setAt: clock.t }]);
    // Nothing moves before the service's next tick.
    expect(service.getQuote('BTC')).toEqual(before);

    await step(service, clock, 1_000); // 15:58:43.100
    const pinned = spreadQuote('BTC', 6_000_000, BTC.spreadBps, clock.t);
    expect(pinned).toMatchObject({ last: '60000.00', bid: '59994.00', ask: '60006.00' });
    expect(service.getQuote('BTC')).toEqual(pinned);
    expect(await getQuote(db, 'BTC')).toEqual(pinned);
    // AAPL is not pinned: still its seeded path.
    const aaplMinutes = await allCandles(db, 'AAPL', '1m');
    expect(service.getQuote('AAPL')).toEqual(source.tick(AAPL, clock.t, aaplMinutes.at(-2)!.close).quote);

    // The minute of the pin: its seeded path up to the pin, then the jump (a crash of about 38 %).
    const pinMinute = minuteOf(clock.t);
    const [live] = await listCandles(db, { symbol: 'BTC', interval: '1m', startTime: pinMinute, limit: 1 });
    expect(live.close).toBe('60000.00');
    expect(live.low).toBe('60000.00');
    expect(toCents(live.open)).toBeGreaterThan(9_000_000);

    // Every tick after, across two minute boundaries (and a 5m one at 16:00), quotes the pin.
    const end = clock.t + 2 * MINUTE;
    while (clock.t < end) {
      await step(service, clock, 700);
      expect(service.getQuote('BTC')).toEqual(spreadQuote('BTC', 6_000_000, BTC.spreadBps, clock.t));
    }
    const minutes = await allCandles(db, 'BTC', '1m');
    expect(continuityProblems(minutes)).toEqual([]);
    const after = minutes.filter((c) => c.openTime >= pinMinute);
    expect(after.map((c) => c.openTime)).toEqual([0, 1, 2].map((i) => pinMinute + i * MINUTE));
    expect(after[0]).toMatchObject({ open: live.open, high: live.high, low: '60000.00', close: '60000.00' });
    // The finished pin minute: its seeded path from the open until the pin took effect, then flat.
    expect(after[0]).toEqual(source.minuteCandle(BTC, pinMinute, live.open, [{ time: setAt, price: '60000.00' }]));
    for (const c of after.slice(1)) expect(c).toMatchObject({ open: '60000.00', high: '60000.00', low: '60000.00', close: '60000.00' });
    // The aggregates are the roll-up of those 1m candles.
    const fives = await allCandles(db, 'BTC', '5m');
    expect(fives.at(-1)).toEqual(rollup(minutes, '5m').at(-1));
    expect(fives.at(-1)!.close).toBe('60000.00');
  });

  it('a release resumes the seeded walk from the pinned price; a second pin replaces the first at once', async () => {
    const db = await openDb();
    const clock = { t: START };
    const service = fakeClockService(db, clock);
    await service.start();
    await runSetPrice(db, { symbol: 'BTC', price: '150000.50', now: clock.t });
    await step(service, clock, 1_000);
    expect(service.getQuote('BTC')!.last).toBe('150000.50');
    // A crash straight after the spike: the new pin from the next tick.
    await runSetPrice(db, { symbol: 'BTC', price: '20000', now: clock.t });
    await step(service, clock, 1_000);
    expect(service.getQuote('BTC')!.last).toBe('20000.00');
    await step(service, clock, 30_000); // 15:59:13.100, a whole minute pinned in between
    expect(service.getQuote('BTC')!.last).toBe('20000.00');

    const released = await runSetPrice(db, { symbol: 'BTC', release: true });
    expect(released).toEqual({ symbol: 'BTC', pinned: false, released: true, price: '20000.00' });
    expect((await readPricePins(db, ['BTC'])).size).toBe(0);
    const releaseMinute = minuteOf(clock.t + 1_000);
    const events = [{ time: releaseMinute, price: '20000.00' }, { time: clock.t + 1_000, price: null }];
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      await step(service, clock, 1_000);
      const q = service.getQuote('BTC')!;
      // Exactly the minute's seeded path, walking on from the pin from the release on.
      expect(q).toEqual(source.tick(BTC, clock.t, '20000.00', events).quote);
      seen.push(q.last);
    }
    // It walks again (a second's step of BTC is a few dollars at 20 000), close to where it was pinned.
    expect(new Set(seen).size).toBeGreaterThan(5);
    for (const last of seen) expect(Math.abs(toCents(last) - 2_000_000)).toBeLessThan(20_000); // within 1 %
    // The next minute opens from the walked close and goes on.
    await step(service, clock, MINUTE);
    const minutes = await allCandles(db, 'BTC', '1m');
    expect(continuityProblems(minutes)).toEqual([]);
    const finished = minutes.find((c) => c.openTime === releaseMinute)!;
    expect(finished).toEqual(source.minuteCandle(BTC, releaseMinute, '20000.00', events));
    expect(minutes.at(-1)).toEqual(source.tick(BTC, clock.t, minutes.at(-2)!.close).candle);
  });

  it('a pin and its release inside one minute: the walk resumes from the pin, not from where it stood before', async () => {
    const db = await openDb();
    const clock = { t: START }; // 15:58:41.100
    const service = fakeClockService(db, clock, { symbols: [BTC] });
    await service.start();
    const minute = minuteOf(START);
    const open = (await listCandles(db, { symbol: 'BTC', interval: '1m', startTime: minute, limit: 1 }))[0].open;
    expect(Math.abs(toCents(open) - 9_700_000)).toBeLessThan(970_000); // the walk is near its 97 000 start
    const setAt = clock.t;
    await runSetPrice(db, { symbol: 'BTC', price: '50000', now: setAt });
    await step(service, clock, 1_000);
    expect(service.getQuote('BTC')!.last).toBe('50000.00');
    await runSetPrice(db, { symbol: 'BTC', release: true });
    await step(service, clock, 1_000);
    const events = [{ time: setAt, price: '50000.00' }, { time: clock.t, price: null }];
    for (let i = 0; i < 10; i++) {
      const q = service.getQuote('BTC')!;
      expect(q).toEqual(source.tick(BTC, clock.t, open, events).quote);
      expect(Math.abs(toCents(q.last) - 5_000_000)).toBeLessThan(50_000);
      await step(service, clock, 1_000);
    }
    const [candle] = await listCandles(db, { symbol: 'BTC', interval: '1m', startTime: minute, limit: 1 });
    expect(candle).toEqual(source.tick(BTC, clock.t, open, events).candle);
    expect(candle.open).toBe(open);
    expect(toCents(candle.low)).toBeLessThanOrEqual(5_000_000 + 50_000);
  });

  it('a pin while the market is closed moves the quote, no candle; released, the session opens from it', async () => {
    const db = await openDb();
    // Saturday 2025-03-08 12:00:30 UTC: NYSE closed until Monday 13:30 UTC (EDT).
    const clock = { t: Date.UTC(2025, 2, 8, 12, 0, 30) };
    const service = fakeClockService(db, clock, { symbols: [AAPL], calendar: createMarketCalendar('nyse') });
    await service.start();
    const count = (await allCandles(db, 'AAPL', '1m')).length;
    await runSetPrice(db, { symbol: 'AAPL', price: '150', now: clock.t });
    await step(service, clock, 1_000);
    expect(service.getQuote('AAPL')).toEqual(spreadQuote('AAPL', 15_000, AAPL.spreadBps, clock.t));
    await runSetPrice(db, { symbol: 'AAPL', release: true });
    await step(service, clock, 1_000);
    // Released while closed: the price stands at the pin, not back at Friday's close.
    expect(service.getQuote('AAPL')!.last).toBe('150.00');
    expect((await allCandles(db, 'AAPL', '1m')).length).toBe(count);

    clock.t = Date.UTC(2025, 2, 10, 13, 30, 5);
    await service.tick();
    const [first] = await listCandles(db, { symbol: 'AAPL', interval: '1m', startTime: Date.UTC(2025, 2, 10), limit: 5 });
    expect(first.openTime).toBe(Date.UTC(2025, 2, 10, 13, 30));
    expect(first).toEqual(source.tick(AAPL, clock.t, '150.00').candle);
    expect(first.open).toBe('150.00');
  });

  it('keeps a pin across a restart: the minute it stopped in is completed under the pin and the gap stands at it', async () => {
    const db = await openDb();
    const clock = { t: START };
    const first = fakeClockService(db, clock, { symbols: [BTC] });
    await first.start();
    await step(first, clock, 1_000);
    const setAt = clock.t;
    await runSetPrice(db, { symbol: 'BTC', price: '60000', now: setAt });
    await step(first, clock, 1_000);
    await first.stop();
    const pinMinute = minuteOf(setAt);
    const [partial] = await listCandles(db, { symbol: 'BTC', interval: '1m', startTime: pinMinute, limit: 1 });

    clock.t += 3 * MINUTE + 20_000;
    const second = fakeClockService(db, clock, { symbols: [BTC] });
    await second.start();
    expect(second.getQuote('BTC')!.last).toBe('60000.00');
    await step(second, clock, 1_000);
    expect(second.getQuote('BTC')!.last).toBe('60000.00');
    const minutes = await allCandles(db, 'BTC', '1m');
    expect(continuityProblems(minutes)).toEqual([]);
    const since = minutes.filter((c) => c.openTime >= pinMinute);
    expect(since.length).toBe((minuteOf(clock.t) - pinMinute) / MINUTE + 1);
    // The stopped-in minute, completed as the running service would have finished it.
    expect(since[0]).toEqual(source.minuteCandle(BTC, pinMinute, partial.open, [{ time: setAt, price: '60000.00' }]));
    for (const c of since.slice(1)) expect(c).toMatchObject({ open: '60000.00', high: '60000.00', low: '60000.00', close: '60000.00' });
  });

  it('refuses an unknown symbol, a price that is not a positive decimal of cents, and a symbol the simulator does not quote', async () => {
    const db = await openDb();
    expect(await refusal(() => runSetPrice(db, { symbol: 'DOGE', price: '1' }), 'symbol')).toBe(
      'symbol: unknown symbol "DOGE"; simulated: AAPL, TSLA, NVDA, MSFT, SPY, BTC, ETH',
    );
    expect(await refusal(() => runSetPrice(db, { symbol: 'BTC-USD', release: true }), 'symbol')).toMatch(
      /^symbol: unknown symbol "BTC-USD" \(use the underlying, e.g\. BTC\)/,
    );
    for (const bad of ['0', '0.00', '-5', 'abc', '1e5', '60,000', '', ' ', '.5', '5.']) {
      expect(await refusal(() => runSetPrice(db, { symbol: 'BTC', price: bad }), 'price'), bad).toMatch(/^price: must be a positive decimal/);
    }
    expect(await refusal(() => runSetPrice(db, { symbol: 'BTC', price: '60000.001' }), 'price')).toBe(
      'price: at most two decimal places, the simulator quotes whole cents (got 60000.001)',
    );
    expect(await refusal(() => runSetPrice(db, { symbol: 'BTC' }), 'price')).toMatch(/^price: required/);
    expect(await refusal(() => runSetPrice(db, { symbol: 'BTC', price: '1', release: true }), 'price')).toMatch(/either --price or --release/);
    // Trailing zeros beyond the cents are only cents.
    expect(await runSetPrice(db, { symbol: 'ETH', price: '3000.100' })).toMatchObject({ price: '3000.10' });

    // Imported history only (CSV): its prices are not the simulator's.
    await importCandlesCsv({ db, symbol: 'GOOG', interval: '1d', csv: 'date,open,high,low,close,volume\n2025-03-10,170,172,169,171.5,1000\n' });
    expect(await refusal(() => runSetPrice(db, { symbol: 'goog', price: '100' }), 'symbol')).toBe(
      'symbol: GOOG is not simulated: its prices come from imported history, which a pin cannot move',
    );
    // A database whose history another source made.
    await setMeta(db, HISTORY_META_KEY, JSON.stringify({ version: 1, anchor: 0, seed: '42', days: 30, source: 'csv-feed', createdAt: 0 }));
    expect(await refusal(() => runSetPrice(db, { symbol: 'AAPL', price: '100' }), 'symbol')).toBe(
      'symbol: AAPL is quoted from the "csv-feed" source, not the simulator: its price cannot be pinned',
    );
    // Nothing was pinned by a refusal (ETH's pin is the one accepted above).
    expect([...(await readPricePins(db, ['AAPL', 'BTC', 'ETH', 'GOOG', 'DOGE'])).keys()]).toEqual(['ETH']);
    // Releasing what is not pinned is no error.
    await setMeta(db, HISTORY_META_KEY, JSON.stringify({ version: 1, anchor: 0, seed: '42', days: 30, source: 'gbm', createdAt: 0 }));
    expect(await runSetPrice(db, { symbol: 'BTC', release: true })).toEqual({ symbol: 'BTC', pinned: false, released: false, price: null });
  });
});
