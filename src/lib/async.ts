/** Small async primitives used across layers, kept once. */

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
 * failed run goes to `onError` and the schedule goes on.
 */
export function periodic(everyMs: number, body: () => Promise<void>, onError: (err: unknown) => void): PeriodicTask {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let current: Promise<void> | undefined;
  const loop = () => {
    if (!running) return;
    current = body().catch(onError);
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
  };
}
