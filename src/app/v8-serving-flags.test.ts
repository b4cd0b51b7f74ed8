import { describe, expect, test } from 'vitest';
import { applyServingV8Flags } from './v8-serving-flags.ts';

describe('applyServingV8Flags', () => {
  test('turns pretenuring off when the operator named no pretenuring flag', () => {
    expect(applyServingV8Flags(['stock-api', 'indexer'], ['--enable-source-maps', '--max-old-space-size=4096'])).toBe(true);
  });

  test('keeps an operator\'s own pretenuring flag from the node command line', () => {
    expect(applyServingV8Flags(['stock-api'], ['--allocation-site-pretenuring'])).toBe(false);
    expect(applyServingV8Flags(['stock-api'], ['--no-allocation-site-pretenuring'])).toBe(false);
  });

  test('leaves V8\'s default in a process that runs the perp engine (its objects do live long)', () => {
    expect(applyServingV8Flags(['stock-api', 'perp-engine', 'perp-api'], [])).toBe(false);
    expect(applyServingV8Flags(['all'], [])).toBe(false);
  });
});
