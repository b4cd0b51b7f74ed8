import { describe, expect, it } from 'vitest';
import type { CorporateAction } from './corporate-actions.ts';
import {
  adjustBars,
  adjustmentSteps,
  dividendFactor,
  exDateBoundary,
  multiply,
  ONE,
  ratioOf,
  scaleDecimal,
  splitFactors,
  type AdjustableBar,
} from './price-adjustment.ts';

const DAY = 86_400_000;
const bar = (openTime: number, price: string, volume = '1000'): AdjustableBar => ({ openTime, open: price, high: price, low: price, close: price, volume });

describe('exact factor arithmetic', () => {
  it('reads decimals as ratios and multiplies them reduced', () => {
    expect(ratioOf('12.50')).toEqual({ num: 1250n, den: 100n });
    expect(ratioOf('7')).toEqual({ num: 7n, den: 1n });
    expect(multiply({ num: 2n, den: 3n }, { num: 9n, den: 4n })).toEqual({ num: 3n, den: 2n });
    expect(() => ratioOf('1e3')).toThrow();
  });

  it('rounds once, half up, to 8 places, and pads prices to two', () => {
    expect(scaleDecimal('1200.50', { num: 1n, den: 10n }, 2)).toBe('120.05');
    expect(scaleDecimal('120.00', { num: 1n, den: 10n }, 2)).toBe('12.00');
    expect(scaleDecimal('100', { num: 1n, den: 3n }, 2)).toBe('33.33333333');
    expect(scaleDecimal('200', { num: 1n, den: 3n }, 2)).toBe('66.66666667');
    // Exactly half a unit in the 9th place rounds up.
    expect(scaleDecimal('0.000000015', ONE)).toBe('0.00000002');
    expect(scaleDecimal('0.000000014999', ONE)).toBe('0.00000001');
    expect(scaleDecimal('1000', { num: 10n, den: 1n })).toBe('10000');
    expect(scaleDecimal('0', { num: 1n, den: 7n }, 2)).toBe('0.00');
  });

  it("gives a split's price and volume factors: 10:1 divides prices by 10 and multiplies volumes by 10; 1:10 the reverse", () => {
    expect(splitFactors('10:1')).toEqual({ price: { num: 1n, den: 10n }, volume: { num: 10n, den: 1n } });
    expect(splitFactors('3:2')).toEqual({ price: { num: 2n, den: 3n }, volume: { num: 3n, den: 2n } });
    expect(splitFactors('1:10')).toEqual({ price: { num: 10n, den: 1n }, volume: { num: 1n, den: 10n } });
  });

  it("gives a dividend's factor 1 - d/C exactly, and none for a dividend not below the close", () => {
    // 1 - 0.26 / 200.00 = 199.74 / 200 = 0.9987
    expect(dividendFactor('0.26', '200.00')).toEqual({ num: 9987n, den: 10000n });
    expect(dividendFactor('1.966', '590.63')).toEqual(multiply(ratioOf('588.664'), { num: 100n, den: 59063n }));
    expect(dividendFactor('5', '5.00')).toBeUndefined();
    expect(dividendFactor('6', '5')).toBeUndefined();
  });

  it('takes an ex-date as 00:00 UTC of that day', () => {
    expect(exDateBoundary('2024-06-10')).toBe(Date.UTC(2024, 5, 10));
  });
});

describe('adjustBars', () => {
  const ex = exDateBoundary('2024-06-10');
  const split = { boundary: ex, ...splitFactors('10:1') };

  it('restates bars before the ex-date in the new basis, leaves later bars untouched (their strings as they are)', () => {
    const raw = [bar(ex - 2 * DAY, '1200.40', '1000'), bar(ex - DAY, '1208.00', '2000'), bar(ex, '121.50', '30000'), bar(ex + DAY, '122.0', '7')];
    const out = adjustBars(raw, [split]);
    expect(out.map((b) => [b.close, b.volume])).toEqual([
      ['120.04', '10000'],
      ['120.80', '20000'],
      ['121.50', '30000'],
      ['122.0', '7'],
    ]);
    expect(out[3]).toBe(raw[3]);
    // No cliff: the last bar before the ex-date and the first after it are within 1 %.
    expect(Math.abs(Number(out[2].open) / Number(out[1].close) - 1)).toBeLessThan(0.01);
    expect(adjustBars(raw, [])).toEqual(raw);
  });

  it('multiplies the factors of every later action, in any order given', () => {
    const dividendAt = ex + 30 * DAY;
    const dividend = { boundary: dividendAt, price: dividendFactor('0.26', '130.00')!, volume: ONE };
    const raw = [bar(ex - DAY, '1300.00'), bar(ex + DAY, '130.00'), bar(dividendAt + DAY, '129.74')];
    const out = adjustBars(raw, [dividend, split]);
    // Before both: ÷10 then × (1 - 0.26/130) = 0.998: 1300 → 129.74.
    expect(out.map((b) => [b.close, b.volume])).toEqual([
      ['129.74', '10000'],
      ['129.74', '1000'],
      ['129.74', '1000'],
    ]);
  });

  it('rounds a reverse split\'s volume to 8 places', () => {
    const out = adjustBars([bar(ex - DAY, '1.23', '7')], [{ boundary: ex, ...splitFactors('1:3') }]);
    expect(out[0]).toMatchObject({ close: '3.69', volume: '2.33333333' });
  });
});

describe('adjustmentSteps', () => {
  const actions: CorporateAction[] = [
    { symbol: 'NVDA', type: 'SPLIT', exDate: '2024-06-10', ratio: '10:1' },
    { symbol: 'NVDA', type: 'DIVIDEND', exDate: '2024-06-12', amount: '0.01', currency: 'USD' },
    { symbol: 'NVDA', type: 'DIVIDEND', exDate: '2024-01-02', amount: '0.04', currency: 'USD' },
    { symbol: 'NVDA', type: 'SPLIT', exDate: '2030-01-02', ratio: '2:1' },
  ];
  const first = exDateBoundary('2024-06-01');
  const now = exDateBoundary('2026-01-01');
  const closes: number[] = [];
  const closeBefore = async (boundary: number) => {
    closes.push(boundary);
    return '120.00';
  };

  it('applies the kinds asked for, whose ex-date has come and is after the first bar', async () => {
    const boundaries = async (adjustment: string) => (await adjustmentSteps(actions, adjustment, first, now, closeBefore)).map((s) => new Date(s.boundary).toISOString().slice(0, 10));
    expect(await boundaries('split')).toEqual(['2024-06-10']);
    expect(await boundaries('dividend')).toEqual(['2024-06-12']);
    expect((await boundaries('all')).sort()).toEqual(['2024-06-10', '2024-06-12']);
    expect(await boundaries('raw')).toEqual([]);
    expect(await boundaries('spin-off')).toEqual([]);
    // The close is asked for the dividend's ex-date only.
    expect(new Set(closes)).toEqual(new Set([exDateBoundary('2024-06-12')]));
  });

  it("uses the close before the dividend's ex-date: 1 - 0.01 / 120.00", async () => {
    const [step] = await adjustmentSteps(actions, 'dividend', first, now, closeBefore);
    expect(step.price).toEqual({ num: 11999n, den: 12000n });
    expect(step.volume).toEqual(ONE);
  });
});
