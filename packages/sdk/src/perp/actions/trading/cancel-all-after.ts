import { sendIdempotent, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { CancelAllAfterStatus, IdempotentCallOptions } from '../../../perp-types.ts';

export type CancelAllAfterParameters = { timeoutMs: number } & IdempotentCallOptions;
export type CancelAllAfterReturnType = CancelAllAfterStatus;
export type CancelAllAfterErrorType = PerpRequestErrorType;

/**
 * `POST orders/cancel-all-after`: the dead man's switch. Every open order of the account is
 * cancelled `timeoutMs` (5 000 to 86 400 000) from now unless called again; 0 disarms. Idempotent.
 */
export function cancelAllAfter<T = CancelAllAfterReturnType>(transport: PerpTransport, parameters: CancelAllAfterParameters): Promise<T> {
  const { timeoutMs, ...opts } = parameters;
  return sendIdempotent<T>(transport, 'POST', 'orders/cancel-all-after', { timeoutMs }, opts);
}
