import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OrderDetail } from '../../../perp-types.ts';

export type GetOrderParameters = { orderId: string };
export type GetOrderReturnType = OrderDetail;
export type GetOrderErrorType = PerpRequestErrorType;

/** `GET orders/{orderId}`: one of the account's orders in any state (UNTRIGGERED, open or done); 40003 when unknown or another account's. */
export function getOrder<T = GetOrderReturnType>(transport: PerpTransport, parameters: GetOrderParameters): Promise<T> {
  return transport.send('GET', `orders/${encodeURIComponent(parameters.orderId)}`, { idempotent: true });
}
