import { describe, expect, test } from 'vitest';
import { applyServingV8Flags } from './v8-serving-flags.ts';

describe('applyServingV8Flags', () => {
  test('turns pretenuring off when the operator named no pretenuring flag', () => {
    expect(applyServingV8Flags(['--enable-source-maps', '--max-old-space-size=4096'])).toBe(true);
  });

  test('keeps an operator\'s own pretenuring flag from the node command line', () => {
    expect(applyServingV8Flags(['--allocation-site-pretenuring'])).toBe(false);
    expect(applyServingV8Flags(['--no-allocation-site-pretenuring'])).toBe(false);
  });
});
