/**
 * Errors of the stream client. Server refusals keep the API's numeric code (perp 10000, 10003, 2000x,
 * 30001, 40002, 42900, 50002; stock 400, 401, 404, 410, 429, 500) and the request id they answer;
 * failures found by the client itself have a string code (`CLOSED`, `TIMEOUT`, ...). No message ever
 * holds an API secret or a signature.
 */
import type { StreamOrderAction } from '@tokex/contract';
import { TokexError } from './errors.ts';

export type { StreamOrderAction };

export type StreamClientErrorCode =
  /** close() was called: pending promises reject with StreamClosedError. */
  | 'CLOSED'
  /** The subscription was ended by unsubscribe() before it was answered. */
  | 'UNSUBSCRIBED'
  /** No WebSocket implementation: pass the `WebSocket` option. */
  | 'NO_WEBSOCKET'
  /** A private channel needs apiKey and apiSecret. */
  | 'NO_CREDENTIALS'
  /** Already subscribed to this channel and symbol on this client. */
  | 'DUPLICATE_SUBSCRIPTION'
  /** The connection could not be opened or was lost (reconnecting goes on). */
  | 'CONNECTION'
  /** reconnect.maxAttempts consecutive connection attempts failed: the client stopped. */
  | 'RECONNECT_EXHAUSTED'
  /** A frame the client could not understand. */
  | 'PROTOCOL'
  /** An order request (`placeOrder`, …) had no result within its timeout. */
  | 'TIMEOUT';

export class StreamError extends TokexError {
  override readonly name: string = 'StreamError';
  constructor(
    /** The API's code from an error frame, or the client's own string code. */
    readonly code: number | StreamClientErrorCode,
    /** The server's `msg`, or the client's description. */
    readonly msg: string,
    /** The id of the client message this answers, when there is one. */
    readonly id?: string,
    /** The stream concerned, when there is one. */
    readonly channel?: string,
    readonly symbol?: string,
  ) {
    super(typeof code === 'number' ? `${msg} (code ${code})` : msg);
  }
}

/** What pending promises reject with after close(). */
export class StreamClosedError extends StreamError {
  override readonly name: string = 'StreamClosedError';
  constructor(msg = 'stream client closed') {
    super('CLOSED', msg);
  }
}

/**
 * An order request over the perpetual stream (`placeOrder`, `placeBatch`, `cancelOrder`,
 * `amendOrder`) that did not succeed. `code` is the API's (the `result` frame's, as REST would have
 * answered: 10000 with `data.field`, 42900 with `data.retryAfter`, 51xxx the engine's refusals…), or
 * the client's own: `TIMEOUT` (no result in time), `CONNECTION` (the connection dropped before the
 * result), `NO_CREDENTIALS`. `sent` says whether the server may have received it: `true` for an
 * answer, `false` when it never left (the server did nothing), `'unknown'` when it left without an
 * answer: the order may have been applied, so look it up (`GET orders/client/{clientOrderId}`, the
 * `orders` stream) before sending it again.
 */
export class StreamOrderError extends StreamError {
  override readonly name: string = 'StreamOrderError';
  constructor(
    code: number | StreamClientErrorCode,
    msg: string,
    id: string | undefined,
    readonly action: StreamOrderAction,
    /** The result's `data` (`{field}`, `{retryAfter}`, …); `{}` when it had none. */
    readonly data: Record<string, unknown> = {},
    readonly sent: boolean | 'unknown' = true,
  ) {
    super(code, msg, id);
  }

  /** Seconds to wait before the next order (on 42900). */
  get retryAfter(): number | undefined {
    const r = this.data.retryAfter;
    return typeof r === 'number' ? r : undefined;
  }
}
