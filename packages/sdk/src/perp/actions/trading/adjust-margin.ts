import { sendIdempotent, splitIdempotentOptions, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { IdempotentCallOptions, Position } from '../../../perp-types.ts';

export type AdjustMarginParameters = { symbol: string; amount: string } & IdempotentCallOptions;
export type AdjustMarginReturnType = Position;
export type AdjustMarginErrorType = PerpRequestErrorType;

/** `POST positions/margin`: moves `amount` USD into (positive) or out of (negative) an isolated position. Idempotent. */
export function adjustMargin<T = AdjustMarginReturnType>(transport: PerpTransport, parameters: AdjustMarginParameters): Promise<T> {
  const [body, opts] = splitIdempotentOptions(parameters);
  return sendIdempotent<T>(transport, 'POST', 'positions/margin', body, opts);
}
