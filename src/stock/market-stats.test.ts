import { describe, expect, it } from 'vitest';
import { percentOf } from './market-stats.ts';

const e18 = (s: string) => BigInt(s) * 10n ** 16n; // hundredths → 18 decimals

describe('24-hour change in percent', () => {
  it('is the change over the base to 2 decimals, half away from zero', () => {
    expect(percentOf(e18('1635'), e18('21345'))).toBe('7.66'); // 16.35 / 213.45 = 7.6598…%
    expect(percentOf(-e18('1635'), e18('21345'))).toBe('-7.66');
    expect(percentOf(e18('1'), e18('800'))).toBe('0.13'); // 0.125 % rounds up
    expect(percentOf(-e18('1'), e18('800'))).toBe('-0.13');
    expect(percentOf(e18('1'), e18('1000000'))).toBe('0'); // 0.001 %
    expect(percentOf(0n, e18('100'))).toBe('0');
    expect(percentOf(e18('2980'), e18('20000'))).toBe('14.9');
  });

  it('is null without a base', () => {
    expect(percentOf(e18('5'), 0n)).toBeNull();
  });
});
