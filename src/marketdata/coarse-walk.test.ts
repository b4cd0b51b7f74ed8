import { describe, expect, it } from 'vitest';
import { createCoarseWalk, HOUR, isCoarseHour, openMinutesOf } from './coarse-walk.ts';
import { createGbmSource } from './gbm-source.ts';
import { DEMO_SYMBOLS } from './symbol-catalog.ts';

const MINUTE = 60_000;
const at = (d: number, h: number, m = 0) => Date.UTC(2025, 2, d, h, m);

describe('coarse walk', () => {
  it('takes the hours of the whole UTC days strictly inside the jump, none of its first or last day', () => {
    const jump = { from: at(12, 15, 58), to: at(15, 5) };
    expect(isCoarseHour(jump, at(12, 23))).toBe(false);
    expect(isCoarseHour(jump, at(13, 0))).toBe(true);
    expect(isCoarseHour(jump, at(14, 23))).toBe(true);
    expect(isCoarseHour(jump, at(15, 0))).toBe(false);
    // Not an hour's start.
    expect(isCoarseHour(jump, at(13, 0, 30))).toBe(false);
    // A jump within two days has none.
    expect(isCoarseHour({ from: at(12, 1), to: at(13, 23) }, at(13, 0))).toBe(false);
  });

  it('counts the minutes an hour trades: by its halves, minute by minute where a half is split', () => {
    expect(openMinutesOf(() => true, at(13, 9))).toBe(60);
    expect(openMinutesOf(() => false, at(13, 9))).toBe(0);
    // Open from 09:30: the second half.
    expect(openMinutesOf((ms) => ms >= at(13, 9, 30), at(13, 9))).toBe(30);
    // Open from 09:10 (no calendar does, but counted exactly).
    expect(openMinutesOf((ms) => ms >= at(13, 9, 10), at(13, 9))).toBe(50);
    // Closed from 09:45.
    expect(openMinutesOf((ms) => ms < at(13, 9, 45), at(13, 9))).toBe(45);
  });

  it('makes an hour from the source\'s seeded path: the same each time, from the close before, an hour\'s moves', () => {
    const source = createGbmSource({ seed: 42 });
    const walk = createCoarseWalk(() => source);
    const spec = DEMO_SYMBOLS[1];
    const hour = at(13, 10);
    const c = walk.hourCandle(spec, hour, '250.00', 60);
    expect(walk.hourCandle(spec, hour, '250.00', 60)).toEqual(c);
    expect(c).toMatchObject({ symbol: spec.symbol, interval: '1h', openTime: hour, open: '250.00' });
    // The minute path at that time and price, scaled: its volume sixty minutes' worth.
    const minute = source.minuteCandle(spec, hour, '250.00');
    expect(BigInt(c.volume)).toBe(BigInt(minute.volume) * 60n);
    // Over many hours, the moves are an hour's (about √60 a minute's), not a minute's.
    const spread = (f: (h: number) => { open: string; close: string }) => {
      let sum = 0;
      for (let i = 0; i < 400; i++) {
        const x = f(hour + i * HOUR);
        sum += Math.log(Number(x.close) / Number(x.open)) ** 2;
      }
      return Math.sqrt(sum / 400);
    };
    const ratio = spread((h) => walk.hourCandle(spec, h, '250.00', 60)) / spread((h) => source.minuteCandle(spec, h, '250.00'));
    expect(ratio).toBeGreaterThan(Math.sqrt(60) * 0.8);
    expect(ratio).toBeLessThan(Math.sqrt(60) * 1.2);
  });

  it('stands an hour at a pin in force', () => {
    const walk = createCoarseWalk(() => createGbmSource({ seed: 42 }));
    const hour = at(13, 10);
    const c = walk.hourCandle(DEMO_SYMBOLS[0], hour, '230.00', 60, [{ time: hour, price: '231.00' }]);
    expect(c).toMatchObject({ open: '230.00', high: '231.00', low: '230.00', close: '231.00' });
    expect(hour % MINUTE).toBe(0);
  });
});
