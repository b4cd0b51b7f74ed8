import { describe, expect, it } from 'vitest';
import { PERP_INDEX_SYMBOLS } from './symbol-catalog.ts';
import { createGbmSource, toCents } from './gbm-source.ts';

const BTC = PERP_INDEX_SYMBOLS.find((s) => s.symbol === 'BTC')!;
const T0 = Date.UTC(2025, 2, 10, 14, 0);
const source = createGbmSource({ seed: 7 });

describe('GBM path with pin events', () => {
  it('no events is the seeded path', () => {
    expect(source.minuteCandle(BTC, T0, '97000.00', [])).toEqual(source.minuteCandle(BTC, T0, '97000.00'));
    expect(source.tick(BTC, T0 + 12_345, '97000.00', [])).toEqual(source.tick(BTC, T0 + 12_345, '97000.00'));
  });

  it('stands at the pin from its point on; the points before it are the seeded path; the volume is unchanged', () => {
    const events = [{ time: T0 + 20_500, price: '60000.00' }];
    for (let s = 0; s < 20; s++) {
      expect(source.tick(BTC, T0 + s * 1_000, '97000.00', events)).toEqual(source.tick(BTC, T0 + s * 1_000, '97000.00'));
    }
    for (let s = 20; s < 60; s++) expect(source.tick(BTC, T0 + s * 1_000, '97000.00', events).quote.last).toBe('60000.00');
    const full = source.minuteCandle(BTC, T0, '97000.00', events);
    const free = source.minuteCandle(BTC, T0, '97000.00');
    const upToPin = source.tick(BTC, T0 + 19_000, '97000.00').candle;
    expect(full).toEqual({ ...upToPin, low: '60000.00', close: '60000.00', volume: free.volume });
  });

  it('pinned and released at the open is the plain path from the pin', () => {
    const events = [
      { time: T0, price: '60000.00' },
      { time: T0, price: null },
    ];
    expect(source.minuteCandle(BTC, T0, '60000.00', events)).toEqual(source.minuteCandle(BTC, T0, '60000.00'));
  });

  it('after a release walks on from the pin, not from the level the path had before it', () => {
    const events = [
      { time: T0 + 10_000, price: '50000.00' },
      { time: T0 + 30_000, price: null },
    ];
    const lasts = [];
    for (let s = 30; s < 60; s++) lasts.push(toCents(source.tick(BTC, T0 + s * 1_000, '97000.00', events).quote.last));
    for (const c of lasts) expect(Math.abs(c - 5_000_000)).toBeLessThan(50_000);
    expect(new Set(lasts).size).toBeGreaterThan(10);
    const full = source.minuteCandle(BTC, T0, '97000.00', events);
    expect(full.open).toBe('97000.00');
    expect(toCents(full.low)).toBeLessThanOrEqual(5_000_000);
    expect(full.close).toBe(source.tick(BTC, T0 + 59_000, '97000.00', events).quote.last);
  });
});
