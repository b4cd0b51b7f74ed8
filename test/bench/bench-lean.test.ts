import { describe, expect, it } from 'vitest';
import { benchLean } from '../../bench/perp-orders-bench.ts';

describe('BENCH_PERP_LEAN', () => {
  it('names the parts of the durable path a diagnosis leaves out, and refuses any other', () => {
    expect([...benchLean({})]).toEqual([]);
    expect([...benchLean({ BENCH_PERP_LEAN: 'journal' })]).toEqual(['journal']);
    expect([...benchLean({ BENCH_PERP_LEAN: ' projection , journal ' })].sort()).toEqual(['journal', 'projection']);
    expect(() => benchLean({ BENCH_PERP_LEAN: 'journal,nonces' })).toThrow('BENCH_PERP_LEAN: unknown part nonces (journal, projection)');
  });
});
