import { describe, expect, it } from 'vitest';
import { displayDecimals, formatDisplayAmount, SHARE_DISPLAY_DECIMALS } from '@tokex/contract';
import { decimalsOf, DISPLAY_DECIMALS, formatAmount, formatCash, formatShares, isPositiveDecimal } from './amount-format.ts';

describe('console amounts', () => {
  it('truncates toward zero at the display precision, never rounding a balance up', () => {
    expect(formatCash('400.000000000000000126')).toBe('400.00');
    expect(formatCash('1550.999999999999999999')).toBe('1550.99');
    expect(formatCash('227.080000000000000001')).toBe('227.08');
    expect(formatCash('-12.349')).toBe('-12.34');
    expect(formatCash('-0.001')).toBe('0.00');
    expect(formatCash('7')).toBe('7.00');
    expect(formatCash('.5')).toBe('0.50');
    expect(formatShares('2')).toBe('2.000000');
    expect(formatShares('0.123456789')).toBe('0.123456');
    expect(formatAmount('95000', 1)).toBe('95000.0');
    expect(formatAmount('0012.5', 0)).toBe('12');
    expect(formatAmount(null, 2)).toBe('—');
    expect(formatAmount('n/a', 2)).toBe('n/a');
  });
  it('shows every figure at the places the CLI and the examples use: the contract package\'s one table', () => {
    expect(DISPLAY_DECIMALS).toEqual({ cash: displayDecimals('mUSD'), shares: SHARE_DISPLAY_DECIMALS, stockPrice: displayDecimals('USD') });
    expect(DISPLAY_DECIMALS.shares).toBe(6);
    for (const [amount, token] of [['0.123456789', 'TSLA'], ['400.000000000000000126', 'mUSD'], ['1550.999999', 'USDC']] as const) {
      expect(token === 'TSLA' ? formatShares(amount) : formatCash(amount)).toBe(formatDisplayAmount(amount, token));
    }
  });
  it('reads a step\'s places and checks form amounts', () => {
    expect(decimalsOf('0.1')).toBe(1);
    expect(decimalsOf('0.0001')).toBe(4);
    expect(decimalsOf('1')).toBe(0);
    expect(decimalsOf('0.010')).toBe(2);
    expect(isPositiveDecimal('0.001')).toBe(true);
    expect(isPositiveDecimal('10')).toBe(true);
    expect(isPositiveDecimal('-1')).toBe(false);
    expect(isPositiveDecimal('0')).toBe(false);
    expect(isPositiveDecimal('1e3')).toBe(false);
    expect(isPositiveDecimal('')).toBe(false);
  });
});
