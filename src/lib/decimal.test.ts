import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/app-error.ts';
import { formatDecimal, mulDiv, parseDecimal, rescale } from './decimal.ts';

describe('parseDecimal', () => {
  it('scales exact decimal strings', () => {
    expect(parseDecimal('12.5', { field: 'amount', decimals: 6 })).toBe(12_500_000n);
    expect(parseDecimal('0.000001', { field: 'amount', decimals: 6 })).toBe(1n);
    expect(parseDecimal('123456789012345678901234567890', { field: 'q', decimals: 0 })).toBe(123456789012345678901234567890n);
  });

  it.each([
    ['-1', 'must be a non-negative decimal string like "12.5"'],
    ['1e3', 'must be a non-negative decimal string like "12.5"'],
    [' 1', 'must be a non-negative decimal string like "12.5"'],
    ['01', 'must be a non-negative decimal string like "12.5"'],
    ['1.', 'must be a non-negative decimal string like "12.5"'],
    ['0', 'must be greater than zero'],
    ['0.0000001', 'at most 6 decimal places'],
  ])('rejects %j naming the field', (input, reason) => {
    const err = (() => {
      try {
        parseDecimal(input, { field: 'tokenAmount', decimals: 6 });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).message).toBe(`tokenAmount: ${reason}`);
  });

  it('rejects numbers: amounts travel as strings', () => {
    expect(() => parseDecimal(12.5, { field: 'price', decimals: 2 })).toThrow('price: must be a decimal string');
  });

  it('allows zero when asked', () => {
    expect(parseDecimal('0', { field: 'x', decimals: 2, positive: false })).toBe(0n);
  });
});

describe('formatDecimal', () => {
  it('prints the shortest exact form', () => {
    expect(formatDecimal(12_500_000n, 6)).toBe('12.5');
    expect(formatDecimal(1n, 18)).toBe('0.000000000000000001');
    expect(formatDecimal(-1_500n, 3)).toBe('-1.5');
    expect(formatDecimal(0n, 18)).toBe('0');
  });

  it('agrees with the arithmetic definition on any value and scale, and round-trips with parseDecimal', () => {
    // The definition: whole part by division, fraction by remainder, trailing zeros dropped.
    const reference = (value: bigint, decimals: number) => {
      const abs = value < 0n ? -value : value;
      const base = 10n ** BigInt(decimals);
      let out = (abs / base).toString();
      if (abs % base !== 0n) out += '.' + (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
      return value < 0n ? '-' + out : out;
    };
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 256n), max: 1n << 256n }), fc.integer({ min: 0, max: 36 }), (value, decimals) => {
        const text = formatDecimal(value, decimals);
        expect(text).toBe(reference(value, decimals));
        if (value > 0n) expect(parseDecimal(text, { field: 'x', decimals, max: 1n << 300n })).toBe(value);
      }),
      { numRuns: 2_000 },
    );
  });

  it('round-trips with parseDecimal', () => {
    for (const s of ['1', '0.1', '99999999.123456', '0.000001']) {
      expect(formatDecimal(parseDecimal(s, { field: 'x', decimals: 6 }), 6)).toBe(s);
    }
  });
});

describe('rounding helpers', () => {
  it('rounds down by default and up on request', () => {
    expect(mulDiv(10n, 10n, 3n)).toBe(33n);
    expect(mulDiv(10n, 10n, 3n, 'ceil')).toBe(34n);
    expect(mulDiv(9n, 1n, 3n, 'ceil')).toBe(3n);
    expect(rescale(1_234_567n, 6, 2)).toBe(123n);
    expect(rescale(1_234_567n, 6, 2, 'ceil')).toBe(124n);
    expect(rescale(5n, 6, 18)).toBe(5_000_000_000_000n);
  });
});
