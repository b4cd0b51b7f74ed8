/**
 * The SDK's errors. Every one is a TokexError:
 * - TokexApiError: the API answered a refusal (PerpApiError with the perp `code` and `requestId`,
 *   StockApiError with the stock `code` and `uuid`);
 * - TokexValidationError: the SDK refused the call before sending it (`field: reason`, as the
 *   server would have said);
 * - TokexNetworkError: no answer (connection refused or reset, DNS, timeout);
 * - TokexTimeoutError: a wait for an outcome (a settlement, a payment, a credit) ran out.
 * No message or property ever holds an API secret, a signature or a private key: messages are built
 * from the answer's code and text, the method and the path only.
 */

export class TokexError extends Error {
  override readonly name: string = 'TokexError';
}

export interface TokexApiErrorFields {
  api: 'perp' | 'stock';
  httpStatus: number;
  code: number;
  /** The server's own text (`msg` for perp, `errMsg` for stock). */
  msg: string;
  /** Perp: the answer's `requestId`. */
  requestId?: string;
  /** Stock: the answer's `uuid`. */
  uuid?: string;
  /** Seconds to wait before trying again (the `Retry-After` header of a 429 or 503). */
  retryAfter?: number;
  /** What the refusal carried besides its text (`{field}`, `{outcome: "unknown"}`, a reverted send's `txHash`). */
  data?: unknown;
  /** `METHOD /path` of the call (no query, no headers). */
  endpoint?: string;
}

/**
 * A wait ran out before its outcome was known (`pollUntil` and the flows on it, `waitForWithdrawal`,
 * `depositCollateral`): the order, transfer or credit may still complete. `lastState` is what the
 * last read said (`OPEN`, `processing`, `PENDING`, `not indexed yet`…).
 */
export class TokexTimeoutError extends TokexError {
  override readonly name: string = 'TokexTimeoutError';
  readonly lastState: string;
  constructor(message: string, lastState: string) {
    super(message);
    this.lastState = lastState;
  }
}

/** A refusal answered by either API. */
export class TokexApiError extends TokexError {
  override readonly name: string = 'TokexApiError';
  readonly api: 'perp' | 'stock';
  readonly httpStatus: number;
  readonly code: number;
  readonly msg: string;
  readonly requestId?: string;
  readonly uuid?: string;
  readonly retryAfter?: number;
  readonly data?: unknown;
  readonly endpoint?: string;
  constructor(message: string, f: TokexApiErrorFields) {
    super(message);
    this.api = f.api;
    this.httpStatus = f.httpStatus;
    this.code = f.code;
    this.msg = f.msg;
    if (f.requestId !== undefined) this.requestId = f.requestId;
    if (f.uuid !== undefined) this.uuid = f.uuid;
    if (f.retryAfter !== undefined) this.retryAfter = f.retryAfter;
    if (f.data !== undefined) this.data = f.data;
    if (f.endpoint !== undefined) this.endpoint = f.endpoint;
  }
}

/** The perpetual API's refusal: `code` from its table (docs/perp-api.md "Errors"), `requestId` for support. */
export class PerpApiError extends TokexApiError {
  override readonly name: string = 'PerpApiError';
  declare readonly requestId: string;
  constructor(res: { httpStatus: number; code: number; msg: string; requestId: string; data?: unknown; retryAfter?: number }, endpoint?: string) {
    super(`perp API ${res.code}: ${res.msg} (requestId ${res.requestId})`, { api: 'perp', ...res, endpoint });
  }
}

/** The stock API's refusal: `code` 400, 401 (every authentication failure alike), 404, 429, 500, 503; `uuid` for support. */
export class StockApiError extends TokexApiError {
  override readonly name: string = 'StockApiError';
  declare readonly uuid: string;
  constructor(res: { httpStatus: number; code: number; errMsg: string; uuid: string; data?: unknown; retryAfter?: number }, endpoint?: string) {
    super(`stock API ${res.code}: ${res.errMsg} (uuid ${res.uuid})`, {
      api: 'stock',
      httpStatus: res.httpStatus,
      code: res.code,
      msg: res.errMsg,
      uuid: res.uuid,
      data: res.data,
      retryAfter: res.retryAfter,
      endpoint,
    });
  }
}

/** A call the SDK refused before sending: what the server would refuse and the SDK can know. */
export class TokexValidationError extends TokexError {
  override readonly name: string = 'TokexValidationError';
  constructor(
    /** The request field at fault (`notional`, `timeInForce`, `size`, `price`). */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** No answer came. `sent` says whether the request may have reached the server. */
export class TokexNetworkError extends TokexError {
  override readonly name: string = 'TokexNetworkError';
  constructor(
    message: string,
    /** `false` when the connection was refused or the name did not resolve (nothing was sent); `'unknown'` otherwise. */
    readonly sent: false | 'unknown',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
