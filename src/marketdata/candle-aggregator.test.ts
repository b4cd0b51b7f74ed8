import { describe, expect, it } from 'vitest';
import type { Candle } from './market-types.ts';
import {
  bucketStart,
  compareDecimal,
  createLiveCandleBook,
  foldTick,
  mergeCandles,
  rollup,
  rollupAll,
} from './candle-aggregator.ts';

const T0 = Date.UTC(2025, 2, 10, 0, 0); // a UTC midnight

function m(i: number, open: string, high: string, low: string, close: string, volume: string): Candle {
  return { symbol: 'AAPL', interval: '1m', openTime: T0 + i * 60_000, open, high, low, close, volume };
}

describe('compareDecimal', () => {
  it('compares exactly across scales and lengths', () => {
    expect(compareDecimal('229.87', '229.870')).toBe(0);
    expect(compareDecimal('229.87', '229.9')).toBeLessThan(0);
    expect(compareDecimal('1000', '999.99')).toBeGreaterThan(0);
    expect(compareDecimal('0.5', '0.45')).toBeGreaterThan(0);
    expect(compareDecimal('12', '12.00000001')).toBeLessThan(0);
    expect(compareDecimal('007.1', '7.10')).toBe(0);
  });
});

describe('bucketStart', () => {
  it('aligns to UTC multiples of the interval', () => {
    const t = Date.UTC(2025, 2, 10, 13, 47, 12);
    expect(bucketStart(t, '1m')).toBe(Date.UTC(2025, 2, 10, 13, 47));
    expect(bucketStart(t, '5m')).toBe(Date.UTC(2025, 2, 10, 13, 45));
    expect(bucketStart(t, '15m')).toBe(Date.UTC(2025, 2, 10, 13, 45));
    expect(bucketStart(t, '1h')).toBe(Date.UTC(2025, 2, 10, 13));
    expect(bucketStart(t, '4h')).toBe(Date.UTC(2025, 2, 10, 12));
    expect(bucketStart(t, '1d')).toBe(Date.UTC(2025, 2, 10));
  });
});

describe('rollup', () => {
  const minutes = [
    m(0, '10.00', '10.50', '9.90', '10.20', '100'),
    m(1, '10.20', '10.30', '10.10', '10.25', '50'),
    m(4, '10.25', '11.00', '10.25', '10.90', '7'),
    m(5, '10.90', '10.95', '9.50', '9.60', '1'),
    m(14, '9.60', '9.70', '9.55', '9.65', '2'),
    m(15, '9.65', '9.80', '9.65', '9.80', '3'),
  ];

  it('builds OHLCV per bucket: first open, last close, extremes, summed volume', () => {
    expect(rollup(minutes, '5m')).toEqual([
      { symbol: 'AAPL', interval: '5m', openTime: T0, open: '10.00', high: '11.00', low: '9.90', close: '10.90', volume: '157' },
      { symbol: 'AAPL', interval: '5m', openTime: T0 + 5 * 60_000, open: '10.90', high: '10.95', low: '9.50', close: '9.60', volume: '1' },
      { symbol: 'AAPL', interval: '5m', openTime: T0 + 10 * 60_000, open: '9.60', high: '9.70', low: '9.55', close: '9.65', volume: '2' },
      { symbol: 'AAPL', interval: '5m', openTime: T0 + 15 * 60_000, open: '9.65', high: '9.80', low: '9.65', close: '9.80', volume: '3' },
    ]);
    expect(rollup(minutes, '15m').map((c) => [c.openTime - T0, c.open, c.high, c.low, c.close, c.volume])).toEqual([
      [0, '10.00', '11.00', '9.50', '9.65', '160'],
      [15 * 60_000, '9.65', '9.80', '9.65', '9.80', '3'],
    ]);
    const [day] = rollup(minutes, '1d');
    expect(day).toMatchObject({ interval: '1d', openTime: T0, open: '10.00', high: '11.00', low: '9.50', close: '9.80', volume: '163' });
    expect(rollupAll(minutes).map((c) => c.interval)).toEqual(['5m', '5m', '5m', '5m', '15m', '15m', '1h', '4h', '1d']);
    expect(rollup([], '1h')).toEqual([]);
  });

  it('sums volumes beyond 2^53 exactly', () => {
    const big = rollup([m(0, '1', '1', '1', '1', '9007199254740993'), m(1, '1', '1', '1', '1', '9007199254740993')], '5m');
    expect(big[0].volume).toBe('18014398509481986');
  });
});

describe('mergeCandles and foldTick', () => {
  it('merges a later candle into an earlier one', () => {
    const a = m(0, '10.00', '10.50', '9.90', '10.20', '100');
    const b = m(1, '10.20', '10.60', '10.00', '10.10', '5');
    expect(mergeCandles(a, b)).toEqual({ ...a, high: '10.60', close: '10.10', volume: '105' });
  });

  it('sums decimal volumes exactly (a volume adjusted for a reverse split has decimals)', () => {
    const vol = (x: string, y: string) => mergeCandles(m(0, '1', '1', '1', '1', x), m(1, '1', '1', '1', '1', y)).volume;
    expect(vol('0.1', '0.2')).toBe('0.3');
    expect(vol('2.33333333', '1')).toBe('3.33333333');
    expect(vol('0.5', '0.5')).toBe('1');
    expect(vol('9007199254740993', '0.00000001')).toBe('9007199254740993.00000001');
  });

  it('folds ticks into the bucket, starting a new candle in a new bucket', () => {
    let c = foldTick(undefined, { symbol: 'AAPL', time: T0 + 1_000, price: '10.00', volume: '3' }, '5m');
    c = foldTick(c, { symbol: 'AAPL', time: T0 + 61_000, price: '10.40', volume: '2' }, '5m');
    c = foldTick(c, { symbol: 'AAPL', time: T0 + 121_000, price: '9.80' }, '5m');
    expect(c).toEqual({ symbol: 'AAPL', interval: '5m', openTime: T0, open: '10.00', high: '10.40', low: '9.80', close: '9.80', volume: '5' });
    const next = foldTick(c, { symbol: 'AAPL', time: T0 + 300_000, price: '9.90', volume: '1' }, '5m');
    expect(next).toEqual({ symbol: 'AAPL', interval: '5m', openTime: T0 + 300_000, open: '9.90', high: '9.90', low: '9.90', close: '9.90', volume: '1' });
  });
});

describe('createLiveCandleBook', () => {
  it('merges the partial minute on top of the completed ones without counting it twice', () => {
    const done = [m(0, '10.00', '10.50', '9.90', '10.20', '100'), m(1, '10.20', '10.30', '10.10', '10.25', '50')];
    const book = createLiveCandleBook('AAPL', done);
    const partial1 = m(2, '10.25', '10.40', '10.25', '10.40', '10');
    const first = book.updateMinute(partial1);
    expect(first.map((c) => c.interval)).toEqual(['1m', '5m', '15m', '1h', '4h', '1d']);
    expect(first[1]).toMatchObject({ openTime: T0, open: '10.00', high: '10.50', low: '9.90', close: '10.40', volume: '160' });
    // The same minute, later and bigger: replaces the partial rather than adding to it.
    const partial2 = m(2, '10.25', '10.60', '10.20', '10.30', '25');
    const second = book.updateMinute(partial2);
    expect(second[1]).toMatchObject({ high: '10.60', close: '10.30', volume: '175' });
    const completed = book.completeMinute(m(2, '10.25', '10.60', '10.20', '10.35', '30'));
    expect(completed[5]).toMatchObject({ interval: '1d', close: '10.35', volume: '180' });
    // Next minute: builds on the completed one.
    const third = book.updateMinute(m(3, '10.35', '10.35', '10.35', '10.35', '1'));
    expect(third[1]).toMatchObject({ openTime: T0, close: '10.35', volume: '181' });
    // A minute in the next 5m bucket starts a fresh 5m candle but keeps growing the hour.
    const fifth = book.completeMinute(m(5, '10.35', '10.36', '10.34', '10.36', '4'));
    expect(fifth[1]).toMatchObject({ openTime: T0 + 300_000, open: '10.35', volume: '4' });
    expect(fifth[3]).toMatchObject({ interval: '1h', openTime: T0, volume: '184', high: '10.60', low: '9.90' });
  });
});
