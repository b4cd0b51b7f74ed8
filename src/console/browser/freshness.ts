/**
 * Whether the prices a view shows are fresh, judged from the data's own times, never from a socket
 * being open (docs/console.md, "Stale prices"). A price is stale when the server says so (`stale` in
 * a quote or ticker, computed by the API from the quote's time), or when its own time has not moved
 * for `staleAfterMs` of this page's clock: a stream that is connected but silent, or a REST poll
 * that keeps answering the same old quote. The page's clock is only compared with itself, so a
 * browser whose clock is off from the server's still judges right.
 */
export interface StalePrice {
  /** What the page calls it: `AAPL`, `BTC-USD index`. */
  name: string;
}

export class Freshness {
  readonly staleAfterMs: number;
  readonly #clock: () => number;
  readonly #entries = new Map<string, { time: number; advancedAt: number; serverStale: boolean }>();

  constructor(staleAfterMs: number, clock: () => number = () => Date.now()) {
    this.staleAfterMs = staleAfterMs;
    this.#clock = clock;
  }

  /** A price of `name` as shown, with its own time (ms, null when it has none) and the server's `stale`. */
  note(name: string, time: number | null | undefined, serverStale: boolean | undefined): void {
    const t = typeof time === 'number' && Number.isFinite(time) ? time : Number.NEGATIVE_INFINITY;
    const prev = this.#entries.get(name);
    if (prev === undefined || t > prev.time) this.#entries.set(name, { time: t, advancedAt: this.#clock(), serverStale: serverStale === true });
    else prev.serverStale = serverStale === true;
  }

  /** The price is no longer shown (another market chosen). */
  forget(name: string): void {
    this.#entries.delete(name);
  }

  isStale(name: string): boolean {
    const e = this.#entries.get(name);
    return e !== undefined && (e.serverStale || e.time === Number.NEGATIVE_INFINITY || this.#clock() - e.advancedAt > this.staleAfterMs);
  }

  /** Every stale price, by name. */
  stale(): StalePrice[] {
    return [...this.#entries.keys()]
      .filter((name) => this.isStale(name))
      .sort()
      .map((name) => ({ name }));
  }
}
