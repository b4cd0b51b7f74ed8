/**
 * The stock API's K-line history over real storage (SQLite, and PostgreSQL when DATABASE_URL is
 * set): adjustment across a 10:1 split and a dividend, 3m and 1w rolled up from the stored 1m and
 * 1d candles (checked against a brute-force roll-up of everything stored), and the limit windows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CorporateAction } from '../../src/marketdata/corporate-actions.ts';
import type { Candle, Interval } from '../../src/marketdata/market-types.ts';
import { dividendFactor, multiply, scaleDecimal, splitFactors } from '../../src/marketdata/price-adjustment.ts';
import { historyBucketStart, readPriceHistory, type HistoryBar, type PriceHistoryQuery } from '../../src/marketdata/price-history.ts';
import { upsertCandles } from '../../src/storage/candle-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const MIN = 60_000;
const DAY = 86_400_000;
const utc = (iso: string) => Date.parse(iso);
const NOW = utc('2026-01-01T00:00:00Z');

function candle(symbol: string, interval: Interval, openTime: number, close: string, volume = '1000'): Candle {
  return { symbol, interval, openTime, open: close, high: close, low: close, close, volume };
}

/** NVDA's days around its 10:1 split (ex-date Monday 2024-06-10), raw: 1200.00 to 1204.00 before, 120.50 to 120.90 after. */
function nvdaDays(): Candle[] {
  const days: Candle[] = [];
  for (let d = 0; d < 14; d++) {
    const t = utc('2024-06-03T00:00:00Z') + d * DAY;
    const weekday = new Date(t).getUTCDay();
    if (weekday === 0 || weekday === 6) continue;
    const before = t < utc('2024-06-10T00:00:00Z');
    days.push(candle('NVDA', '1d', t, before ? `${1200 + d}.00` : `120.${d - 2}0`, before ? '1000' : '10000'));
  }
  return days;
}

const SPLIT: CorporateAction = { symbol: 'NVDA', type: 'SPLIT', exDate: '2024-06-10', ratio: '10:1' };
const DIVIDEND: CorporateAction = { symbol: 'NVDA', type: 'DIVIDEND', exDate: '2024-06-12', amount: '0.12', currency: 'USD' };

function query(q: Partial<PriceHistoryQuery>): PriceHistoryQuery {
  return { symbol: 'NVDA', interval: '1d', endTime: utc('2024-06-30T00:00:00Z'), limit: 100, adjustment: 'all', now: NOW, ...q };
}

/** The largest day-to-day move of closes, as a fraction. */
function largestMove(bars: HistoryBar[]): number {
  let max = 0;
  for (let i = 1; i < bars.length; i++) max = Math.max(max, Math.abs(Number(bars[i].close) / Number(bars[i - 1].close) - 1));
  return max;
}

describe.each(testDatabases)('price history ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('raw shows the split as a 90 % cliff; split and all run through it, volumes restated', async () => {
    await upsertCandles(db, nvdaDays());
    const raw = await readPriceHistory(db, [SPLIT], query({ adjustment: 'raw' }));
    expect(raw.map((b) => b.close)).toEqual(nvdaDays().map((c) => c.close));
    expect(largestMove(raw)).toBeGreaterThan(0.89);

    const split = await readPriceHistory(db, [SPLIT], query({ adjustment: 'split' }));
    expect(largestMove(split)).toBeLessThan(0.02);
    expect(split.slice(0, 5).map((b) => [b.close, b.volume])).toEqual([
      ['120.00', '10000'],
      ['120.10', '10000'],
      ['120.20', '10000'],
      ['120.30', '10000'],
      ['120.40', '10000'],
    ]);
    // From the ex-date on, the stored bars as they are.
    expect(split.slice(5)).toEqual(raw.slice(5));
    // No action in the table (or only one whose ex-date has not come): raw.
    expect(await readPriceHistory(db, [], query({}))).toEqual(raw);
    expect(await readPriceHistory(db, [SPLIT], query({ now: utc('2024-06-09T00:00:00Z') }))).toEqual(raw);
    expect(await readPriceHistory(db, [SPLIT], query({ adjustment: 'spin-off' }))).toEqual(raw);
    expect(await readPriceHistory(db, [SPLIT], query({ adjustment: 'dividend' }))).toEqual(raw);
  });

  it('dividend back-adjusts by 1 - d / (close before the ex-date); all multiplies both factors, rounded once', async () => {
    await upsertCandles(db, nvdaDays());
    // The close before 2024-06-12 is 2024-06-11's: 120.60 raw; 1 - 0.12 / 120.60 = 120.48 / 120.60 = 1004 / 1005.
    const factor = dividendFactor('0.12', '120.60')!;
    expect(factor).toEqual({ num: 1004n, den: 1005n });
    const dividend = await readPriceHistory(db, [SPLIT, DIVIDEND], query({ adjustment: 'dividend' }));
    const raw = await readPriceHistory(db, [], query({}));
    expect(dividend.map((b) => b.close)).toEqual(raw.map((b) => (b.openTime < utc('2024-06-12T00:00:00Z') ? scaleDecimal(b.close, factor, 2) : b.close)));
    expect(dividend[6].close).toBe('120.48'); // 2024-06-11: 120.60 × 1004/1005
    expect(dividend.map((b) => b.volume)).toEqual(raw.map((b) => b.volume));

    const all = await readPriceHistory(db, [SPLIT, DIVIDEND], query({ adjustment: 'all' }));
    const both = multiply(factor, splitFactors('10:1').price);
    expect(all[0].close).toBe(scaleDecimal('1200.00', both, 2));
    // 1200 ÷ 10 × 1004/1005 = 119.880597014925…, rounded half up at the 8th place.
    expect(all[0].close).toBe('119.88059701');
    expect(all[0].volume).toBe('10000');
    expect(largestMove(all)).toBeLessThan(0.02);
  });

  it('1w is rolled up from the adjusted days, weeks opening Monday 00:00 UTC', async () => {
    await upsertCandles(db, nvdaDays());
    const weeks = await readPriceHistory(db, [SPLIT], query({ interval: '1w', adjustment: 'split' }));
    expect(weeks.map((w) => new Date(w.openTime).toISOString())).toEqual(['2024-06-03T00:00:00.000Z', '2024-06-10T00:00:00.000Z']);
    expect(weeks[0]).toMatchObject({ open: '120.00', high: '120.40', low: '120.00', close: '120.40', volume: '50000', closeTime: utc('2024-06-10T00:00:00Z') - 1 });
    expect(weeks[1]).toMatchObject({ open: '120.50', high: '120.90', close: '120.90', volume: '50000' });
    const rawWeeks = await readPriceHistory(db, [SPLIT], query({ interval: '1w', adjustment: 'raw' }));
    expect(rawWeeks[0]).toMatchObject({ open: '1200.00', high: '1204.00', volume: '5000' });
  });

  it('3m is rolled up from the 1m candles, adjusted first; limit windows take whole bars only', async () => {
    const friday = utc('2024-06-07T19:55:00Z');
    const monday = utc('2024-06-10T13:30:00Z');
    const minutes = [
      ...[0, 1, 2, 3, 4].map((i) => candle('NVDA', '1m', friday + i * MIN, `${1200 + i}.00`, '10')),
      ...[0, 1, 2, 3, 4, 5].map((i) => candle('NVDA', '1m', monday + i * MIN, `${120 + i}.00`, '100')),
    ];
    await upsertCandles(db, minutes);
    const end = utc('2024-06-10T14:00:00Z');
    const bars = await readPriceHistory(db, [SPLIT], query({ interval: '3m', adjustment: 'split', endTime: end }));
    expect(bars.map((b) => [new Date(b.openTime).toISOString().slice(11, 16), b.open, b.high, b.close, b.volume])).toEqual([
      ['19:54', '120.00', '120.10', '120.10', '200'],
      ['19:57', '120.20', '120.40', '120.40', '300'],
      ['13:30', '120.00', '122.00', '122.00', '300'],
      ['13:33', '123.00', '125.00', '125.00', '300'],
    ]);
    expect(bars[0].closeTime - bars[0].openTime).toBe(3 * MIN - 1);
    // The latest two; the first two from a startTime inside a bar (that bar opens before it: left out).
    expect((await readPriceHistory(db, [SPLIT], query({ interval: '3m', endTime: end, limit: 2 }))).map((b) => b.openTime)).toEqual([monday, monday + 3 * MIN]);
    expect((await readPriceHistory(db, [SPLIT], query({ interval: '3m', startTime: friday, endTime: end, limit: 2 }))).map((b) => b.openTime)).toEqual([
      friday + 2 * MIN,
      monday,
    ]);
    // An endTime inside a bar takes the whole bar (it opens before endTime).
    expect((await readPriceHistory(db, [SPLIT], query({ interval: '3m', endTime: monday + MIN, limit: 1 })))[0]).toMatchObject({ openTime: monday, volume: '300' });
  });

  it('3m and 1w agree with a brute-force roll-up of everything stored, for any window and limit', async () => {
    const symbols = ['P0', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8', 'P9', 'P10', 'P11'];
    let run = 0;
    const T0 = utc('2024-06-03T00:00:00Z');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<'3m' | '1w'>('3m', '1w'),
        // Each of 61 slots is stored when its draw is below the density: from empty to every slot.
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 61, maxLength: 61 }),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 6 }),
        fc.option(fc.integer({ min: 0, max: 70 }), { nil: undefined }),
        fc.integer({ min: 0, max: 70 }),
        async (interval, draws, density, limit, startSlot, endSlot) => {
          const symbol = symbols[run++ % symbols.length] + `-${run}`;
          const step = interval === '3m' ? MIN : DAY;
          const base: Interval = interval === '3m' ? '1m' : '1d';
          const slots = draws.flatMap((draw, slot) => (draw < density ? [slot] : []));
          const rows = slots.map((s) => candle(symbol, base, T0 + s * step, `${100 + s}.00`, String(s + 1)));
          await upsertCandles(db, rows);
          const startTime = startSlot === undefined ? undefined : T0 + startSlot * step + 1;
          const endTime = T0 + endSlot * step;
          const got = await readPriceHistory(db, [], { symbol, interval, startTime, endTime, limit, adjustment: 'raw', now: NOW });
          // Reference: every stored row rolled up, then the window and the limit.
          const buckets = new Map<number, Candle[]>();
          for (const r of rows) {
            const b = historyBucketStart(r.openTime, interval);
            buckets.set(b, [...(buckets.get(b) ?? []), r]);
          }
          let expected = [...buckets.entries()]
            .filter(([b]) => b <= endTime && (startTime === undefined || b >= startTime))
            .map(([b, rs]) => ({ openTime: b, open: rs[0].open, close: rs[rs.length - 1].close, volume: String(rs.reduce((v, r) => v + Number(r.volume), 0)) }));
          expected = startTime === undefined ? expected.slice(-limit) : expected.slice(0, limit);
          expect(got.map((b) => ({ openTime: b.openTime, open: b.open, close: b.close, volume: b.volume }))).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});
