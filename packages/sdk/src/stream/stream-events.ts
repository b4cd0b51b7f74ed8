/**
 * The client's event listeners (`on`/`off`, stream-client-core.ts): a listener that throws is logged
 * and does not stop the others.
 */
import { errorText } from './stream-internals.ts';
import type { StreamClientEvents, StreamLogger } from './stream-types.ts';

export class StreamEvents {
  #listeners = new Map<keyof StreamClientEvents, Set<(...args: any[]) => void>>();

  constructor(private readonly log: StreamLogger) {}

  on<E extends keyof StreamClientEvents>(event: E, listener: StreamClientEvents[E]): void {
    let set = this.#listeners.get(event);
    if (set === undefined) this.#listeners.set(event, (set = new Set()));
    set.add(listener);
  }

  off<E extends keyof StreamClientEvents>(event: E, listener: StreamClientEvents[E]): void {
    this.#listeners.get(event)?.delete(listener);
  }

  emit<E extends keyof StreamClientEvents>(event: E, ...args: Parameters<StreamClientEvents[E]>): void {
    for (const fn of [...(this.#listeners.get(event) ?? [])]) {
      try {
        fn(...args);
      } catch (err) {
        this.log('error', `a "${event}" listener threw`, { error: errorText(err) });
      }
    }
  }
}
