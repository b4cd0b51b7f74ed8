/**
 * What a watch keeps from a stream: the latest row per key (a trade id, an order id, a position's
 * symbol), in the order they last changed, at most `max`; and which changed since the caller last read.
 */
export class StreamCache<T> {
  private readonly byKey = new Map<string, T>();
  private readonly fresh = new Set<string>();
  constructor(
    private readonly max: number,
    private readonly keyOf: (row: T) => string,
  ) {}
  get rows(): T[] {
    return [...this.byKey.values()];
  }
  put(row: T): void {
    const key = this.keyOf(row);
    // Deleted first, so the map's order is the order of the last change.
    this.byKey.delete(key);
    this.byKey.set(key, row);
    this.fresh.add(key);
    if (this.byKey.size > this.max) {
      const oldest = this.byKey.keys().next().value as string;
      this.byKey.delete(oldest);
      this.fresh.delete(oldest);
    }
  }
  /** CCXT's newUpdates: the rows changed since the last read (the latest row when none did). */
  takeFresh(): T[] {
    const rows = this.rows;
    const out = this.fresh.size === 0 ? rows.slice(-1) : rows.filter((r) => this.fresh.has(this.keyOf(r)));
    this.fresh.clear();
    return out;
  }
}
