/**
 * Price paths of the sandbox's `POST /prices` (docs/sandbox.md, "Price paths"): a series of pins of
 * one underlying, each stored at its offset from the request (`afterMs`), as `tokex marketdata
 * set-price` stores one (src/marketdata/price-pins.ts); the simulator quotes each from its next tick.
 * The request is answered at once with the schedule: a path is a script to play, and a client that
 * waits for a step reads the quote (or the `quotes` stream) as it would for a real move.
 *
 * One path per underlying: a new path, a pin or a release of it cancels the steps still to come
 * (the pin in force stays). After the last step its price stays pinned until a pin or a release.
 * Held in the process (timers): a restart drops the steps to come, not the pin in force.
 */
import type { SandboxPricePath } from '@tokex/contract';
import { ValidationError } from '../errors/app-error.ts';
import type { Logger } from '../lib/logger.ts';
import { parsePinPrice, setPricePin, simulatedSymbol } from '../marketdata/price-pins.ts';
import type { DbExecutor } from '../storage/database.ts';

export interface PricePathDeps {
  /** The database the simulator reads its pins from. */
  db: DbExecutor;
  logger: Pick<Logger, 'info' | 'warn'>;
}

interface Running {
  timers: NodeJS.Timeout[];
  /** The steps' writes, one after the other: a step never lands before the one before it. */
  writes: Promise<void>;
}

/** A step's price with the field named as the body has it (`path.1.price`). */
function stepPrice(input: string, i: number): string {
  try {
    return parsePinPrice(input);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(`path.${i}.price`, err.message.slice('price: '.length));
    throw err;
  }
}

export function createPricePaths(deps: PricePathDeps) {
  const running = new Map<string, Running>();

  /**
   * Cancels the steps still to come of `underlying`'s path; whether one was running. Resolves once
   * a step being written has landed, so that a pin made after it is not overwritten by it.
   */
  const cancel = async (underlying: string): Promise<boolean> => {
    const path = running.get(underlying);
    if (path === undefined) return false;
    for (const t of path.timers) clearTimeout(t);
    running.delete(underlying);
    await path.writes;
    deps.logger.info({ symbol: underlying }, 'sandbox: price path cancelled');
    return true;
  };

  return {
    cancel,

    /**
     * Starts a path of `symbol` (an underlying, as the simulator names it): every step checked
     * first, the steps at offset 0 stored before the answer, the others at their moments.
     */
    async start(symbol: string, steps: ReadonlyArray<{ price: string; afterMs: number }>): Promise<SandboxPricePath> {
      const prices = steps.map((s, i) => stepPrice(s.price, i));
      for (let i = 1; i < steps.length; i++) {
        if (steps[i].afterMs < steps[i - 1].afterMs) throw new ValidationError(`path.${i}.afterMs`, `must not be before the step before it (${steps[i - 1].afterMs})`);
      }
      const underlying = (await simulatedSymbol(deps.db, symbol)).symbol;
      const replaced = await cancel(underlying);
      const startedAt = Date.now();
      const path: Running = { timers: [], writes: Promise.resolve() };
      running.set(underlying, path);
      const pin = async (i: number) => {
        try {
          // Dated by the pin rules' own clock, as a single pin is.
          await setPricePin(deps.db, { symbol: underlying, price: prices[i] });
        } catch (err) {
          deps.logger.warn({ err: (err as Error).message, symbol: underlying, step: i }, 'sandbox: a price path step could not be pinned');
        }
      };
      const last = steps.length - 1;
      for (let i = 0; i <= last; i++) {
        if (steps[i].afterMs > 0) continue;
        await pin(i);
      }
      for (let i = 0; i <= last; i++) {
        if (steps[i].afterMs === 0) continue;
        // Timers of equal delay fire in the order set, so equal offsets keep the body's order.
        const timer = setTimeout(() => {
          // A path cancelled while a step was due runs none of its steps after.
          if (running.get(underlying) !== path) return;
          path.writes = path.writes.then(async () => {
            // Cancelled while the step before was written: this one is not.
            if (running.get(underlying) !== path) return;
            await pin(i);
            if (i === last && running.get(underlying) === path) running.delete(underlying);
          });
        }, startedAt + steps[i].afterMs - Date.now());
        timer.unref();
        path.timers.push(timer);
      }
      if (steps[last].afterMs === 0) running.delete(underlying);
      deps.logger.info({ symbol: underlying, steps: steps.length, replaced }, 'sandbox: price path started');
      return {
        symbol: underlying,
        startedAt,
        path: steps.map((s, i) => ({ price: prices[i], afterMs: s.afterMs, at: startedAt + s.afterMs })),
        endsAt: startedAt + steps[last].afterMs,
        replaced,
      };
    },

    /** At the stack's stop: no step runs after it. */
    async stop(): Promise<void> {
      await Promise.all([...running.keys()].map((underlying) => cancel(underlying)));
    },
  };
}

export type PricePaths = ReturnType<typeof createPricePaths>;
