import { sendIdempotent, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { IdempotentCallOptions, OrderView } from '../../../perp-types.ts';

export type CancelOrderParameters = { orderId: string } & IdempotentCallOptions;
export type CancelOrderReturnType = OrderView;
export type CancelOrderErrorType = PerpRequestErrorType;

/** `DELETE orders/{orderId}`: the order, CANCELED. Idempotent (see IdempotentCallOptions). */
export function cancelOrder<T = CancelOrderReturnType>(transport: PerpTransport, parameters: CancelOrderParameters): Promise<T> {
  const { orderId, ...opts } = parameters;
  return sendIdempotent<T>(transport, 'DELETE', `orders/${encodeURIComponent(orderId)}`, undefined, opts);
}
