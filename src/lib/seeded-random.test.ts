import { describe, expect, it } from 'vitest';
import { createPrng, seededUint64, seedFrom, setVenueSeed, venueSeed } from './seeded-random.ts';

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

describe('seededUint64 and the venue seed', () => {
  it('draws 64 bits from (seed, parts): the same parts the same value, another part or seed another', () => {
    const a = seededUint64(7, 'nonce', '0xabc', 12, 0);
    expect(a).toBe(seededUint64(7, 'nonce', '0xabc', 12, 0));
    expect(a).toBeGreaterThanOrEqual(0n);
    expect(a).toBeLessThan(1n << 64n);
    expect(seededUint64(7, 'nonce', '0xabc', 12, 1)).not.toBe(a);
    expect(seededUint64(8, 'nonce', '0xabc', 12, 0)).not.toBe(a);
    // Wide: the high half is used (a value below 2^32 from this draw would be one in 4 billion).
    expect(a >> 32n).not.toBe(0n);
  });

  it('holds one seed per process until cleared; refuses a seed outside 32 bits', () => {
    expect(venueSeed()).toBeUndefined();
    setVenueSeed(4_294_967_295);
    expect(venueSeed()).toBe(4_294_967_295);
    setVenueSeed(undefined);
    expect(venueSeed()).toBeUndefined();
    expect(() => setVenueSeed(-1)).toThrow(RangeError);
    expect(() => setVenueSeed(2 ** 32)).toThrow(RangeError);
    expect(() => setVenueSeed(1.5)).toThrow(RangeError);
    expect(venueSeed()).toBeUndefined();
  });
});
