/**
 * One error hierarchy for the whole backend. Every error carries a stable `code` (a string the
 * HTTP layers map to their envelopes), a short message that is safe to show a client, an optional
 * `cause` for the log, and whether a worker may retry the operation that raised it.
 *
 * Messages must never contain secrets, signatures or private keys: they reach responses and logs.
 */
export type ErrorCode =
  | 'VALIDATION'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'CHAIN_UNAVAILABLE'
  | 'CHAIN_REVERT'
  | 'REJECTED'
  | 'STORAGE_UNAVAILABLE'
  | 'INTERNAL';

export interface AppErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** Extra facts for the server log only; never sent to a client. */
  detail?: Record<string, unknown>;
  /**
   * Facts the client needs to act on the error (the txHash of a reverted transaction), answered
   * as the envelope's `data`. Never secret material.
   */
  data?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly detail?: Record<string, unknown>;
  readonly data?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.detail = options.detail;
    this.data = options.data;
  }
}

/** A request field failed validation; the message names the field: `notional: required for a market buy`. */
export class ValidationError extends AppError {
  readonly field: string;
  constructor(field: string, reason: string, options?: AppErrorOptions) {
    super('VALIDATION', `${field}: ${reason}`, options);
    this.field = field;
  }
}

/**
 * Which authentication check failed. The stock API never tells (every failure is the same opaque
 * answer); the perp API maps each to its own documented code, as exchanges do.
 */
export type AuthFailure = 'credentials' | 'key' | 'expired' | 'ip' | 'timestamp' | 'signature' | 'replay' | 'scope';

/**
 * Authentication failed. The public message is always the same text; `reason` is for the server
 * log under the request's uuid and must not contain secret material.
 */
export class UnauthorizedError extends AppError {
  readonly reason: string;
  readonly failure: AuthFailure;
  /**
   * What an API that names its failures may answer instead of 'Unauthorized' (the perp API's
   * signature mismatch: the text the signature must cover). Written for the client, never the
   * reason's detail.
   */
  readonly publicMessage?: string;
  constructor(reason: string, options?: AppErrorOptions & { failure?: AuthFailure; publicMessage?: string }) {
    super('UNAUTHORIZED', 'Unauthorized', options);
    this.reason = reason;
    this.failure = options?.failure ?? 'credentials';
    if (options?.publicMessage !== undefined) this.publicMessage = options.publicMessage;
  }
}

/** Authenticated, but the key lacks the permission (perp: HTTP 403; the stock API answers its opaque 401). */
export class ForbiddenError extends AppError {
  constructor(message = 'Forbidden', options?: AppErrorOptions) {
    super('FORBIDDEN', message, options);
  }
}

export class NotFoundError extends AppError {
  /** What was looked for (`order`, `route`, ...): the perp API's code table is keyed by it. */
  readonly what: string;
  /** `reason` replaces `not found` in the message: `symbol: "APPL" is not listed`. */
  constructor(what: string, options?: AppErrorOptions & { reason?: string }) {
    super('NOT_FOUND', `${what}: ${options?.reason ?? 'not found'}`, options);
    this.what = what;
  }
}

/**
 * The reason for a symbol (or another name) that names nothing listed, quoting what the client sent
 * (cut to 40 characters): `"APPL" is not listed`.
 */
export function notListed(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return `${JSON.stringify(shown)} is not listed`;
}

export class ConflictError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super('CONFLICT', message, options);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, options?: AppErrorOptions) {
    super('PAYLOAD_TOO_LARGE', `body: larger than ${limitBytes} bytes`, options);
  }
}

export class RateLimitedError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, options?: AppErrorOptions) {
    super('RATE_LIMITED', 'Too many requests', { retryable: true, ...options });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The chain RPC did not answer (connection refused, timeout, 5xx). Workers retry these. */
export class ChainUnavailableError extends AppError {
  constructor(options?: AppErrorOptions) {
    super('CHAIN_UNAVAILABLE', 'chain: RPC unavailable, try again later', { retryable: true, ...options });
  }
}

/** A contract call reverted; `errorName` is the custom error's name when it could be decoded. */
export class ChainRevertError extends AppError {
  readonly errorName?: string;
  constructor(errorName: string | undefined, options?: AppErrorOptions) {
    super('CHAIN_REVERT', `chain: transaction reverted${errorName ? ` (${errorName})` : ''}`, options);
    this.errorName = errorName;
  }
}

/**
 * The venue refused a valid request on its merits (margin, order flags, state): a business
 * rejection, not a malformed request. `rejection` names the entry of the venue's table (the perp
 * API's: src/perp/perp-error-codes.ts, typed there as PerpRejection); the message says why and is
 * safe to show.
 */
export type Rejection = string;

export class RejectedError extends AppError {
  readonly rejection: Rejection;
  constructor(rejection: Rejection, message: string, options?: AppErrorOptions) {
    super('REJECTED', message, options);
    this.rejection = rejection;
  }
}

export class StorageUnavailableError extends AppError {
  constructor(options?: AppErrorOptions) {
    super('STORAGE_UNAVAILABLE', 'storage: unavailable, try again later', { retryable: true, ...options });
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
