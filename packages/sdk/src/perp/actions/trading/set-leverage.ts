import { sendIdempotent, splitIdempotentOptions, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { IdempotentCallOptions, Position } from '../../../perp-types.ts';

export type SetLeverageParameters = { symbol: string; leverage: number; marginMode?: 'cross' | 'isolated' } & IdempotentCallOptions;
export type SetLeverageReturnType = Position;
export type SetLeverageErrorType = PerpRequestErrorType;

/** `POST positions/adjust`: leverage (and margin mode while flat). Idempotent. */
export function setLeverage<T = SetLeverageReturnType>(transport: PerpTransport, parameters: SetLeverageParameters): Promise<T> {
  const [body, opts] = splitIdempotentOptions(parameters);
  return sendIdempotent<T>(transport, 'POST', 'positions/adjust', body, opts);
}
