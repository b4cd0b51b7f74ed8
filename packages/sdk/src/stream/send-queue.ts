/**
 * The client's outgoing frames under the server's message rate (stream-client-core.ts): a token
 * bucket of `burst` frames refilled at `rate` a second, a new connection starting full. What the
 * bucket does not allow now waits, in order, and goes when it has refilled.
 */
import { errorText, OPEN, type Outgoing, type Timer } from './stream-internals.ts';
import type { StreamLogger, WebSocketLike } from './stream-types.ts';

export class SendQueue {
  #outbox: Outgoing[] = [];
  #tokens = 0;
  #refilled = 0;
  #drainTimer: Timer | undefined;

  constructor(
    /** The connection frames go out on now (undefined: none). */
    private readonly socket: () => WebSocketLike | undefined,
    private readonly rate: number,
    private readonly burst: number,
    private readonly log: StreamLogger,
  ) {}

  /** A connection opened: the bucket starts full. */
  open(): void {
    this.#tokens = this.burst;
    this.#refilled = Date.now();
  }

  /** Queues a frame; `drain` sends it when the bucket allows. */
  push(frame: Outgoing): void {
    this.#outbox.push(frame);
  }

  /** Sends what the token bucket allows now, the rest when it has refilled. */
  drain(): void {
    this.#drainTimer = undefined;
    const ws = this.socket();
    if (ws === undefined || ws.readyState !== OPEN) return;
    const now = Date.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#refilled) / 1000) * this.rate);
    this.#refilled = now;
    while (this.#outbox.length > 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      const next = this.#outbox.shift()!;
      try {
        // Marked first: a send that throws may still have written part of the frame.
        next.onSent?.();
        ws.send(next.text);
      } catch (err) {
        this.log('warn', 'send failed', { error: errorText(err) });
        return;
      }
    }
    if (this.#outbox.length > 0 && this.#drainTimer === undefined) {
      this.#drainTimer = setTimeout(() => this.drain(), Math.ceil(((1 - this.#tokens) / this.rate) * 1000));
    }
  }

  /** The connection went: what waits for it is dropped. */
  clear(): void {
    clearTimeout(this.#drainTimer);
    this.#drainTimer = undefined;
    this.#outbox = [];
  }
}
