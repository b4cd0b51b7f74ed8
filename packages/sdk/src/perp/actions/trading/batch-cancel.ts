import { sendIdempotent, splitIdempotentOptions, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { BatchCancelResult, IdempotentCallOptions } from '../../../perp-types.ts';

export type BatchCancelParameters = ({ orderIds: string[] } | { symbol: string }) & IdempotentCallOptions;
export type BatchCancelReturnType = BatchCancelResult;
export type BatchCancelErrorType = PerpRequestErrorType;

/** `POST orders/batch-cancel` by ids or by symbol: `{canceled, failed}`. Idempotent. */
export function batchCancel<T = BatchCancelReturnType>(transport: PerpTransport, parameters: BatchCancelParameters): Promise<T> {
  const [body, opts] = splitIdempotentOptions(parameters);
  return sendIdempotent<T>(transport, 'POST', 'orders/batch-cancel', body, opts);
}
