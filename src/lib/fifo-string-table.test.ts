import { describe, expect, it } from 'vitest';
import { FifoStringTable } from './fifo-string-table.ts';

/** A tiny deterministic generator, so a failure names its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('FifoStringTable', () => {
  it('finds each key with its number and text, and answers -1 for a key never added', () => {
    const t = new FifoStringTable();
    t.push('ord:a', 1, '{"ok":true}');
    t.push('ord:b', 2);
    t.push('ord:ü→€', 3, 'naïve ✓');
    expect(t.size).toBe(3);
    expect(t.numberAt(t.find('ord:a'))).toBe(1);
    expect(t.textAt(t.find('ord:a'))).toBe('{"ok":true}');
    expect(t.textAt(t.find('ord:b'))).toBeUndefined();
    expect(t.textAt(t.find('ord:ü→€'))).toBe('naïve ✓');
    expect(t.find('ord:c')).toBe(-1);
    expect(t.find('')).toBe(-1);
  });

  it('removes from the front in insertion order', () => {
    const t = new FifoStringTable();
    for (let i = 0; i < 5; i++) t.push(`k${i}`, i * 10);
    expect(t.oldestNumber()).toBe(0);
    expect(t.shift()).toBe(true);
    expect(t.find('k0')).toBe(-1);
    expect(t.oldestNumber()).toBe(10);
    expect(t.numberAt(t.find('k1'))).toBe(10);
    for (let i = 1; i < 5; i++) expect(t.shift()).toBe(true);
    expect(t.shift()).toBe(false);
    expect(t.oldestNumber()).toBeUndefined();
    expect(t.size).toBe(0);
  });

  it('tells keys with the same hash apart by their bytes', () => {
    // Two keys whose 32-bit FNV-1a hashes are equal (searched for here: eleven pairs are among the
    // first 300,000 of these keys), so the byte comparison, not the hash, must decide.
    const fnv = (k: string): number => {
      let h = 0x811c9dc5;
      for (let i = 0; i < k.length; i++) h = Math.imul(h ^ k.charCodeAt(i), 0x01000193);
      return h | 0;
    };
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; i < 300_000 && pair === undefined; i++) {
      const k = `ord:${((i * 2654435761) >>> 0).toString(16)}`;
      const other = seen.get(fnv(k));
      if (other !== undefined) pair = [other, k];
      else seen.set(fnv(k), k);
    }
    expect(pair).toBeDefined();
    const [a, b] = pair!;
    expect(fnv(a)).toBe(fnv(b));
    const t = new FifoStringTable({ initialCapacity: 16 });
    t.push(a, 1);
    expect(t.find(b)).toBe(-1);
    t.push(b, 2);
    expect(t.numberAt(t.find(a))).toBe(1);
    expect(t.numberAt(t.find(b))).toBe(2);
    // The first one leaves from the front; the second is still found by its bytes.
    t.shift();
    expect(t.find(a)).toBe(-1);
    expect(t.numberAt(t.find(b))).toBe(2);
  });

  it('agrees with a Map through growth and chunk turnover (model check)', () => {
    for (const seed of [1, 7, 42, 1234]) {
      const r = rng(seed);
      // Small chunks and a small start, so growth and chunk drops happen many times.
      const t = new FifoStringTable({ initialCapacity: 16, chunkBytes: 1_024 });
      const model = new Map<string, { num: number; text: string | undefined }>();
      let next = 0;
      for (let step = 0; step < 20_000; step++) {
        const op = r();
        if (op < 0.55) {
          const key = `cmd-${next}-${'x'.repeat(Math.floor(r() * 40))}`;
          const text = r() < 0.8 ? `{"seq":${next},"pad":"${'é'.repeat(Math.floor(r() * 200))}"}` : undefined;
          t.push(key, next, text);
          model.set(key, { num: next, text });
          next++;
        } else if (op < 0.85) {
          const shifted = t.shift();
          const first = model.keys().next();
          expect(shifted).toBe(!first.done);
          if (!first.done) model.delete(first.value);
        } else {
          const probe = `cmd-${Math.floor(r() * (next + 5))}`;
          expect(t.find(probe)).toBe(-1);
        }
        expect(t.size).toBe(model.size);
      }
      for (const [key, v] of model) {
        const h = t.find(key);
        expect(h).toBeGreaterThanOrEqual(0);
        expect(t.numberAt(h)).toBe(v.num);
        expect(t.textAt(h)).toBe(v.text);
      }
      expect(t.oldestNumber()).toBe(model.size === 0 ? undefined : model.values().next().value!.num);
    }
  });

  it('holds the bytes of the entries it keeps, not of every entry it ever held', () => {
    const t = new FifoStringTable({ chunkBytes: 4_096 });
    const text = 'r'.repeat(100);
    for (let i = 0; i < 50_000; i++) {
      t.push(`ord:${i}`, i, text);
      if (t.size > 1_000) t.shift();
    }
    expect(t.size).toBe(1_000);
    expect(t.oldestNumber()).toBe(49_000);
    // 1,000 entries of about 110 bytes are 27 chunks' worth; one more may be partly written, and
    // the room kept for a write's worst case (3 bytes a code unit) leaves each chunk's tail unused.
    expect(t.bytesHeld).toBeLessThanOrEqual(30 * 4_096);
    expect(t.bytesHeld).toBeGreaterThanOrEqual(27 * 4_096);
  });

  it('takes an entry larger than a chunk, and clear forgets everything', () => {
    const t = new FifoStringTable({ chunkBytes: 1_024 });
    const big = 'y'.repeat(10_000);
    t.push('big', 1, big);
    t.push('small', 2, 's');
    expect(t.textAt(t.find('big'))).toBe(big);
    expect(t.textAt(t.find('small'))).toBe('s');
    t.clear();
    expect(t.size).toBe(0);
    expect(t.find('big')).toBe(-1);
    t.push('big', 3, 'again');
    expect(t.textAt(t.find('big'))).toBe('again');
  });
});
