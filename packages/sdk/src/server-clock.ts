/**
 * A transport's two clocks: the caller's own, and the server's as the offset `syncTime` measured
 * makes it (0 until then). The perp and the stock transports keep them alike.
 */
export interface ServerClock {
  /** Server clock minus local clock in ms (0 until `syncTime`). */
  readonly clockOffsetMs: number;
  setClockOffset(ms: number): void;
  /** The caller's clock, uncorrected. */
  localNow(): number;
  /** The local clock corrected by the server's offset. */
  now(): number;
}

export function createServerClock(local: () => number = Date.now): ServerClock {
  let offset = 0;
  return {
    get clockOffsetMs() {
      return offset;
    },
    setClockOffset(ms: number) {
      offset = ms;
    },
    localNow: () => local(),
    now: () => local() + offset,
  };
}

/** `fields` with the clock's members as its own properties (`clockOffsetMs` stays a live getter). */
export function withServerClock<T extends object>(clock: ServerClock, fields: T): T & ServerClock {
  return Object.defineProperties(fields, Object.getOwnPropertyDescriptors(clock)) as T & ServerClock;
}
