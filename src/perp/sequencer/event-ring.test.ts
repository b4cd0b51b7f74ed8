import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EngineEvent } from '../engine/engine-types.ts';
import { EventRing } from './event-ring.ts';

/** A run of events of consecutive seqs, with bigints and nested values as the engine's have. */
function events(from: number, n: number): EngineEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: 'balanceChanged', seq: from + i, ts: 1_700_000_000_000 + from + i, account: `0x${'a'.repeat(40)}`, reason: 'trade',
    delta: -(10n ** 20n) - BigInt(from + i), balance: 123_456_789_012_345_678_901n, commandId: `ord:0x${(from + i).toString(16)}`,
  }) as unknown as EngineEvent);
}
const seqs = (es: readonly EngineEvent[]) => es.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('EventRing', () => {
  it('gives back each event exactly as pushed, bigints included, from any seq it holds', () => {
    const ring = new EventRing(100);
    const pushed = [...events(1, 3), ...events(4, 1), ...events(5, 7)];
    ring.push(pushed.slice(0, 3));
    ring.push(pushed.slice(3, 4));
    ring.push(pushed.slice(4));
    expect(ring.size).toBe(11);
    expect(ring.oldestSeq()).toBe(1);
    expect(ring.since(1)).toEqual(pushed);
    expect(ring.since(6)).toEqual(pushed.slice(5));
    expect(ring.since(12)).toEqual([]);
  });

  it('keeps the last `capacity` once it is a quarter over, and never more than a quarter over', () => {
    const ring = new EventRing(40);
    let next = 1;
    for (let round = 0; round < 60; round++) {
      const n = 1 + (round % 7);
      ring.push(events(next, n));
      next += n;
      const newest = next - 1;
      expect(ring.size).toBeLessThanOrEqual(50);
      expect(ring.size).toBeGreaterThanOrEqual(Math.min(40, newest));
      expect(ring.oldestSeq()).toBe(newest - ring.size + 1);
      expect(seqs(ring.since(1))).toEqual(range(newest - ring.size + 1, newest));
    }
  });

  it('trims inside a run of events, not only whole runs', () => {
    const ring = new EventRing(10);
    ring.push(events(1, 30));
    expect(ring.size).toBe(10);
    expect(ring.oldestSeq()).toBe(21);
    expect(seqs(ring.since(1))).toEqual(range(21, 30));
    expect(seqs(ring.since(25))).toEqual(range(25, 30));
  });

  it('splits a push with a gap in its seqs into runs, and answers by seq across the gap', () => {
    const ring = new EventRing(100);
    ring.push([...events(1, 2), ...events(10, 2)]);
    expect(ring.size).toBe(4);
    expect(seqs(ring.since(2))).toEqual([2, 10, 11]);
    expect(seqs(ring.since(5))).toEqual([10, 11]);
  });

  it('holds nothing with capacity 0, and reset replaces what it holds', () => {
    const none = new EventRing(0);
    none.push(events(1, 5));
    expect(none.size).toBe(0);
    expect(none.oldestSeq()).toBeUndefined();
    const ring = new EventRing(5);
    ring.push(events(1, 3));
    ring.reset(events(100, 8));
    expect(seqs(ring.since(1))).toEqual(range(103, 107));
    expect(ring.oldestSeq()).toBe(103);
  });

  it('holds a restart\'s replayed events in runs, so that reading the last few does not read them all', () => {
    const ring = new EventRing(5_000);
    ring.reset(events(1, 3_000));
    expect(ring.size).toBe(3_000);
    expect(seqs(ring.since(2_990))).toEqual(range(2_990, 3_000));
    expect((ring as unknown as { chunks: Array<{ count: number }> }).chunks.map((c) => c.count)).toEqual([1_024, 1_024, 952]);
  });

  describe('the unserialized tail', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    const chunkCounts = (ring: EventRing) => (ring as unknown as { chunks: Array<{ count: number }> }).chunks.map((c) => c.count);

    it('serializes small runs together: once SEAL_AT (256) events are waiting, or sealAfterMs after the first', () => {
      vi.useFakeTimers();
      const ring = new EventRing(10_000, 20);
      let next = 1;
      // 300 commits of one or two events, as below saturation: the first 256 events make one chunk.
      for (let i = 0; i < 200; i++) {
        const n = 1 + (i % 2);
        ring.push(events(next, n));
        next += n;
      }
      expect(chunkCounts(ring)).toEqual([256]);
      expect(ring.size).toBe(300);
      // The other 44 wait until the timer serializes them.
      vi.advanceTimersByTime(19);
      expect(chunkCounts(ring)).toEqual([256]);
      vi.advanceTimersByTime(1);
      expect(chunkCounts(ring)).toEqual([256, 44]);
      expect(seqs(ring.since(1))).toEqual(range(1, 300));
    });

    it('answers since() and oldestSeq() with the waiting events too, as copies, and starts a new run at a gap in seqs', () => {
      const ring = new EventRing(100);
      const first = events(1, 3);
      ring.push(first);
      expect(ring.oldestSeq()).toBe(1);
      const got = ring.since(2);
      expect(got).toEqual(first.slice(1));
      // Serialized copies, not the pushed objects (a subscriber cannot change what the ring holds).
      expect(got[0]).not.toBe(first[1]);
      ring.push(events(10, 2));
      ring.close();
      expect(chunkCounts(ring)).toEqual([3, 2]);
      expect(seqs(ring.since(0))).toEqual([1, 2, 3, 10, 11]);
    });
  });

  it('stays bounded over many small runs (the dropped runs are let go)', () => {
    const ring = new EventRing(1_000);
    for (let s = 1; s <= 200_000; s += 2) ring.push(events(s, 2));
    expect(ring.size).toBeLessThanOrEqual(1_250);
    expect(seqs(ring.since(0)).at(-1)).toBe(200_000);
    expect((ring as unknown as { chunks: unknown[] }).chunks.length).toBeLessThan(2_000);
  });
});
