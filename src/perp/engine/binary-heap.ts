/**
 * A binary heap over a plain array, generic over the entry and its order: the liquidation triggers
 * (risk/trigger-heap.ts) and the trigger orders' index (triggers/trigger-book.ts) both keep theirs in
 * one. Apart from both, and from the entities their entries point at, so that neither imports the other.
 */

/** `before(a, b)`: a belongs nearer the top. */
export type Before<E> = (a: E, b: E) => boolean;

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
