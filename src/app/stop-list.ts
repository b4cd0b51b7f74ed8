/** Shutdown steps collected while something starts, run in reverse order; a failing step does not stop the rest. */
import type { Logger } from '../lib/logger.ts';

export type Stop = () => Promise<void>;

export interface StopList {
  add(stop: Stop): void;
  /** Runs every step added so far, last first, once. */
  stopAll(): Promise<void>;
}

export function createStopList(logger: Pick<Logger, 'warn'>): StopList {
  const steps: Stop[] = [];
  return {
    add: (stop) => void steps.push(stop),
    async stopAll() {
      while (steps.length > 0) {
        const step = steps.pop()!;
        try {
          await step();
        } catch (err) {
          logger.warn({ err }, 'shutdown step failed');
        }
      }
    },
  };
}

/** Runs `start` with a stop list of its own; when it throws, whatever it had started is stopped again. */
export async function startGuarded<T>(logger: Pick<Logger, 'warn'>, start: (stops: StopList) => Promise<T>): Promise<{ value: T; stop: Stop }> {
  const stops = createStopList(logger);
  try {
    return { value: await start(stops), stop: () => stops.stopAll() };
  } catch (err) {
    await stops.stopAll();
    throw err;
  }
}
