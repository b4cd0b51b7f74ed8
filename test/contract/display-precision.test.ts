/** The display precision the CLI, the examples and the console share (packages/contract/src/common/display-precision.ts). */
import { describe, expect, it } from 'vitest';
import { DISPLAY_PRECISION, displayDecimals, formatDisplayAmount, truncateDecimal } from '@tokex/contract';

describe('display precision', () => {
  it('shows the mUSD remainders of issue 41 as cents, never rounded up', () => {
    expect(formatDisplayAmount('400.000000000000000126', 'mUSD')).toBe('400.00');
    expect(formatDisplayAmount('1550.000000000000000507', 'mUSD')).toBe('1550.00');
    expect(formatDisplayAmount('227.080000000000000001', 'USD')).toBe('227.08');
    // Truncated toward zero: 0.999… is not shown as 1.00.
    expect(formatDisplayAmount('0.999999999999999999', 'mUSD')).toBe('0.99');
  });

  it('pads to the token precision, keeps whole numbers and negatives, and never prints -0', () => {
    expect(formatDisplayAmount('10000', 'USD')).toBe('10000.00');
    expect(formatDisplayAmount('-12.3456', 'USD')).toBe('-12.34');
    expect(formatDisplayAmount('-0.001', 'USD')).toBe('0.00');
    expect(truncateDecimal('007.5', 0)).toBe('7');
    expect(truncateDecimal('0.1234567', 3)).toBe('0.123');
  });

  it('has a precision per token, shares of any stock at six places', () => {
    expect(DISPLAY_PRECISION).toEqual({ USDC: 2, mUSD: 2, USD: 2 });
    expect(displayDecimals('AAPL')).toBe(6);
    expect(formatDisplayAmount('0.440373436674299806', 'AAPL')).toBe('0.440373');
  });

  it('passes through what is not a plain decimal, and refuses a bad precision', () => {
    expect(truncateDecimal('-', 2)).toBe('-');
    expect(truncateDecimal('1e-7', 2)).toBe('1e-7');
    expect(() => truncateDecimal('1', -1)).toThrow(RangeError);
  });
});
