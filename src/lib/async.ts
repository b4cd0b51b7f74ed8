/** Small async primitives used across layers, kept once. */
import { timedVenueRun } from './venue-clock-walk.ts';

/** Resolves after `ms`, or at once when `signal` aborts (never rejects: callers check the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface Lock {
  /** Runs `fn` after every earlier `run` has settled; a failure does not block the next one. */
  run<T>(fn: () => Promise<T>): Promise<T>;
}

/** A FIFO mutex for one in-process critical section (a nonce sequence, a file). */
export function createLock(): Lock {
  let tail: Promise<void> = Promise.resolve();
  return {
    run<T>(fn: () => Promise<T>): Promise<T> {
      const result = tail.then(fn);
      tail = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
  };
}

export interface PeriodicTask {
  start(): void;
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>;
  /** One run now (tests, or a caller that wants the work done before it goes on). */
  runOnce(): Promise<void>;
}

/**
 * Runs `body` every `everyMs` after the previous run settled (runs never overlap) until stopped; a
 * failed run goes to `onError` and the schedule goes on. A timed run is skipped while a sandbox's
 * clock advance walks (venue-clock-walk.ts: the advance runs the roles' tasks itself); `runOnce` never is.
 */
export function periodic(everyMs: number, body: () => Promise<void>, onError: (err: unknown) => void): PeriodicTask {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let current: Promise<void> | undefined;
  const loop = () => {
    if (!running) return;
    current = (timedVenueRun(body) ?? Promise.resolve()).catch(onError);
    void current.finally(() => {
      current = undefined;
      if (running) timer = setTimeout(loop, everyMs);
    });
  };
  return {
    start() {
      if (running) return;
      running = true;
      loop();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await current;
    },
    runOnce: body,
  };
}

/** Promises waiting for a position (a sequence number) to be reached. */
export interface PositionWaiters {
  /** Resolves once `reached(p)` has been called with p ≥ `position`. */
  wait(position: number): Promise<void>;
  /** The position now reached: every waiter at or below it resolves. */
  reached(position: number): void;
  /** Resolves every waiter (a stop: nobody waits for ever). */
  releaseAll(): void;
  /** How many wait. */
  readonly size: number;
}

export function createPositionWaiters(): PositionWaiters {
  const waiters: Array<{ position: number; resolve: () => void }> = [];
  return {
    wait: (position) => new Promise((resolve) => waiters.push({ position, resolve })),
    reached(position) {
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].position <= position) {
          waiters[i].resolve();
          waiters.splice(i, 1);
        }
      }
    },
    releaseAll() {
      for (const w of waiters.splice(0)) w.resolve();
    },
    get size() {
      return waiters.length;
    },
  };
}

export interface SerialRuns {
  /**
   * Starts a run after any in progress or queued (a failed run does not stop the next); resolves
   * with it. `instead`: this run calls it rather than the body (a run with arguments), in the same queue.
   */
  run(instead?: () => Promise<void>): Promise<void>;
  /** Runs on every whole multiple of `everyMs` (a slow run delays the next instead of shifting them all) until `cancel`. */
  every(everyMs: number): void;
  /** No more timed runs; a run in progress goes on (`settled` waits for it). */
  cancel(): void;
  /** Resolves once no run is in progress or queued. */
  settled(): Promise<void>;
}

/**
 * Runs of `body` one after another, on demand or on a clock-aligned timer (`onError` gets a timed
 * run's failure). A timed run is skipped while a sandbox's clock advance walks, as `periodic`'s.
 */
export function serialRuns(body: () => Promise<void>, onError: (err: unknown) => void): SerialRuns {
  let inFlight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timed = false;
  const run = (instead?: () => Promise<void>): Promise<void> => {
    const r = (inFlight ?? Promise.resolve()).then(instead ?? body);
    const settled = r.catch(() => undefined);
    inFlight = settled;
    void settled.then(() => {
      if (inFlight === settled) inFlight = undefined;
    });
    return r;
  };
  const schedule = (everyMs: number): void => {
    if (!timed) return;
    const delay = everyMs - (Date.now() % everyMs) || everyMs;
    timer = setTimeout(() => {
      timer = undefined;
      (timedVenueRun(() => run()) ?? Promise.resolve())
        .catch(onError)
        .finally(() => schedule(everyMs));
    }, delay);
  };
  return {
    run,
    every(everyMs) {
      timed = true;
      schedule(everyMs);
    },
    cancel() {
      timed = false;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
    async settled() {
      while (inFlight !== undefined) {
        const current = inFlight;
        await current;
        if (inFlight === current) inFlight = undefined;
      }
    },
  };
}
