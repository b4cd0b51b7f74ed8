import { describe, expect, it } from 'vitest';
import { indexSymbolOf, midTicks } from './index-price.ts';

describe('index price', () => {
  it('indexSymbolOf: the base of the perpetual, or the symbol itself without a dash', () => {
    expect(indexSymbolOf('AAPL-USD')).toBe('AAPL');
    expect(indexSymbolOf('BTC-USD')).toBe('BTC');
    expect(indexSymbolOf('NVDA')).toBe('NVDA');
    expect(indexSymbolOf('A-B-C')).toBe('A');
  });

  it('midTicks: (bid + ask) / 2 in whole ticks, exact', () => {
    // (189.50 + 189.54) / 2 = 189.52 = 18 952 ticks of 0.01.
    expect(midTicks('189.50', '189.54', '0.01')).toBe(18_952n);
    // (64 000.1 + 64 000.4) / 2 = 64 000.25 → ⌊640 002.5⌋ ticks of 0.1.
    expect(midTicks('64000.1', '64000.4', '0.1')).toBe(640_002n);
    // Whole-number tick: (10 + 13) / 2 = 11.5 → 11.
    expect(midTicks('10', '13', '1')).toBe(11n);
    // A coarse tick: 1 234.5 / 5 = 246.9 → 246.
    expect(midTicks('1234', '1235', '5')).toBe(246n);
  });

  it('midTicks: rounds down, never to nearest', () => {
    // (100.01 + 100.02) / 2 = 100.015 → 10 001 ticks, not 10 002.
    expect(midTicks('100.01', '100.02', '0.01')).toBe(10_001n);
    // Just below the next tick: (0.019999 + 0.02) / 2 = 0.0199995 → 1 tick of 0.01.
    expect(midTicks('0.019999', '0.02', '0.01')).toBe(1n);
  });

  it('midTicks: quotes and tick of different decimal scales', () => {
    // bid with 4 decimals, ask with 1, tick with 2: (189.5123 + 189.6) / 2 = 189.55615 → 18 955.
    expect(midTicks('189.5123', '189.6', '0.01')).toBe(18_955n);
    // Tick finer than the quotes: (3000 + 3001) / 2 = 3 000.5 = 3 000 500 ticks of 0.001.
    expect(midTicks('3000', '3001', '0.001')).toBe(3_000_500n);
    // Trailing zeros do not change the value.
    expect(midTicks('189.500000', '189.54', '0.0100')).toBe(18_952n);
  });

  it('midTicks: undefined for a quote that is not two positive decimals, or a mid below one tick', () => {
    for (const [bid, ask, tick] of [
      ['', '1', '0.01'],
      ['abc', '1', '0.01'],
      ['-1', '2', '0.01'],
      ['1', '-2', '0.01'],
      ['1e3', '1000', '0.01'],
      ['1.', '2', '0.01'],
      ['.5', '2', '0.01'],
      ['01', '2', '0.01'],
      [' 1', '2', '0.01'],
      ['1', '2', 'x'],
      ['0', '2', '0.01'],
      ['2', '0', '0.01'],
      ['0', '0', '0.01'],
      ['0.001', '0.002', '0.01'],
    ]) {
      expect(midTicks(bid, ask, tick), `${bid} / ${ask} / ${tick}`).toBeUndefined();
    }
  });
});
