/**
 * A binary heap of liquidation triggers with lazy deletion: re-arming a position pushes a new entry
 * and bumps the position's version, so older entries are skipped when popped. The heap is compacted
 * when stale entries outnumber live ones, which keeps it within twice the open positions. The heap
 * itself is binary-heap.ts; here its order, liveness and compaction for liquidation triggers.
 */
import { heapPush, type Before as HeapBefore } from '../binary-heap.ts';
import type { TriggerEntry } from '../state/entities.ts';

/** `before(a, b)`: a belongs nearer the top. Longs: higher trigger first; shorts: lower first. */
type Before = HeapBefore<TriggerEntry>;

export const longBefore: Before = (a, b) => a.trig > b.trig;
export const shortBefore: Before = (a, b) => a.trig < b.trig;

export function isLive(e: TriggerEntry): boolean {
  return e.version === e.pos.trigVersion && e.pos.sizeLots !== 0;
}

/** Drops stale entries and rebuilds the heap (O(n)). */
export function compact(h: TriggerEntry[], before: Before): void {
  const live = h.filter(isLive);
  h.length = 0;
  for (const e of live) heapPush(h, e, before);
}
