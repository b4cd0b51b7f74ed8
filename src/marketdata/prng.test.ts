import { describe, expect, it } from 'vitest';
import { createPrng, seedFrom } from './prng.ts';

describe('seedFrom', () => {
  it('is a stable 32-bit hash of its parts', () => {
    const a = seedFrom(42, 'AAPL', 1_700_000_000_000);
    expect(a).toBe(seedFrom(42, 'AAPL', 1_700_000_000_000));
    expect(Number.isInteger(a) && a >= 0 && a < 2 ** 32).toBe(true);
    expect(seedFrom(42, 'AAPL', 1_700_000_060_000)).not.toBe(a);
    expect(seedFrom(43, 'AAPL', 1_700_000_000_000)).not.toBe(a);
  });

  it('keeps part boundaries and types apart', () => {
    expect(seedFrom('ab', 'c')).not.toBe(seedFrom('a', 'bc'));
    expect(seedFrom(1)).not.toBe(seedFrom('1'));
  });
});

describe('createPrng', () => {
  it('replays the same sequence from the same seed', () => {
    const a = createPrng(123);
    const b = createPrng(123);
    const xs = Array.from({ length: 100 }, () => a.next());
    expect(Array.from({ length: 100 }, () => b.next())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const c = createPrng(124);
    expect(Array.from({ length: 100 }, () => c.next())).not.toEqual(xs);
  });

  it('gives uniform numbers with the right mean and normals with mean 0 and variance 1', () => {
    const rng = createPrng(seedFrom('stats'));
    const n = 200_000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += rng.next();
    expect(sum / n).toBeCloseTo(0.5, 2);

    let s1 = 0;
    let s2 = 0;
    let beyond2 = 0;
    for (let i = 0; i < n; i++) {
      const z = rng.normal();
      s1 += z;
      s2 += z * z;
      if (Math.abs(z) > 2) beyond2++;
    }
    expect(s1 / n).toBeCloseTo(0, 1);
    expect(s2 / n).toBeGreaterThan(0.98);
    expect(s2 / n).toBeLessThan(1.02);
    // P(|Z| > 2) = 4.55 %
    expect(beyond2 / n).toBeGreaterThan(0.042);
    expect(beyond2 / n).toBeLessThan(0.049);
  });
});
