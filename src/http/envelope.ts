/**
 * Each API answers in its own envelope (the stock API `{code, errMsg, uuid, data, t}`, the perp API
 * `{code, msg, data, requestId}`); the shared HTTP machinery only needs to know how to render an
 * error in it.
 */
import type { AppError } from '../errors/app-error.ts';

export interface ErrorRendering {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface EnvelopeFormat {
  renderError(err: AppError, requestId: string): ErrorRendering;
}
