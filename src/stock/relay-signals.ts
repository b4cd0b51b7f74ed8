/**
 * Wake-ups between the stock API and the One Click relayer when both run in one process: the API
 * says a request was queued, the relayer says one was resolved. The journal in the database stays
 * the only truth: across processes each side polls it, and a signal only saves the wait.
 */
import { EventEmitter } from 'node:events';

export interface RelaySignals {
  /** A request was queued. */
  queued(): void;
  onQueued(listener: () => void): () => void;
  /** A request reached a final state (or was signed: its txHash is known). */
  changed(requestId: string): void;
  /**
   * Listens for the next {@link changed} of `requestId` from now on: `wait` resolves then, or after
   * `ms`. Subscribe before reading the request, so that a change in between is not missed.
   */
  nextChange(requestId: string, ms: number): { wait: Promise<void>; cancel(): void };
  /**
   * A relayed transaction was mined: the indexer of this process may look at the chain now rather
   * than at its next poll, since a send's answer waits for its block to be projected.
   */
  mined(): void;
  onMined(listener: () => void): () => void;
}

export function createRelaySignals(): RelaySignals {
  const events = new EventEmitter();
  // Every waiting HTTP request listens: no leak warning for a busy API.
  events.setMaxListeners(0);
  return {
    queued: () => void events.emit('queued'),
    onQueued(listener) {
      events.on('queued', listener);
      return () => void events.off('queued', listener);
    },
    changed: (requestId) => void events.emit(`changed:${requestId}`),
    mined: () => void events.emit('mined'),
    onMined(listener) {
      events.on('mined', listener);
      return () => void events.off('mined', listener);
    },
    nextChange(requestId, ms) {
      const name = `changed:${requestId}`;
      let done!: () => void;
      const wait = new Promise<void>((resolve) => {
        done = () => {
          clearTimeout(timer);
          events.off(name, done);
          resolve();
        };
      });
      const timer = setTimeout(done, ms);
      events.on(name, done);
      return { wait, cancel: done };
    },
  };
}
