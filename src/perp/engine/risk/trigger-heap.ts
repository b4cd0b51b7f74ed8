/**
 * A binary heap of liquidation triggers with lazy deletion: re-arming a position pushes a new entry
 * and bumps the position's version, so older entries are skipped when popped. The heap is compacted
 * when stale entries outnumber live ones, which keeps it within twice the open positions.
 */
import type { TriggerEntry } from '../state/entities.ts';

/** `before(a, b)`: a belongs nearer the top. Longs: higher trigger first; shorts: lower first. */
type Before<E = TriggerEntry> = (a: E, b: E) => boolean;

export const longBefore: Before = (a, b) => a.trig > b.trig;
export const shortBefore: Before = (a, b) => a.trig < b.trig;

/** Generic over the entry: the trigger orders' index (triggers/trigger-book.ts) uses the same heap. */
export function heapPush<E>(h: E[], e: E, before: Before<E>): void {
  let i = h.length;
  h.push(e);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(e, h[p])) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = e;
}

export function heapPop<E>(h: E[], before: Before<E>): E | undefined {
  const n = h.length;
  if (n === 0) return undefined;
  const top = h[0];
  const last = h.pop() as E;
  if (n > 1) {
    let i = 0;
    const m = n - 1;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= m) break;
      const r = l + 1;
      const c = r < m && before(h[r], h[l]) ? r : l;
      if (!before(h[c], last)) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = last;
  }
  return top;
}

export function isLive(e: TriggerEntry): boolean {
  return e.version === e.pos.trigVersion && e.pos.sizeLots !== 0;
}

/** Drops stale entries and rebuilds the heap (O(n)). */
export function compact(h: TriggerEntry[], before: Before): void {
  const live = h.filter(isLive);
  h.length = 0;
  for (const e of live) heapPush(h, e, before);
}
