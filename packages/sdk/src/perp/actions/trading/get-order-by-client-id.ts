import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OrderDetail } from '../../../perp-types.ts';

export type GetOrderByClientIdParameters = { clientOrderId: string };
export type GetOrderByClientIdReturnType = OrderDetail;
export type GetOrderByClientIdErrorType = PerpRequestErrorType;

/**
 * `GET orders/client/{clientOrderId}`: one of the account's orders in any state, by the
 * clientOrderId it was signed with; 40003 when none. The way to learn an order's fate after an
 * answer was lost (a dropped connection, a timeout).
 */
export function getOrderByClientId<T = GetOrderByClientIdReturnType>(transport: PerpTransport, parameters: GetOrderByClientIdParameters): Promise<T> {
  return transport.send('GET', `orders/client/${encodeURIComponent(parameters.clientOrderId)}`, { idempotent: true });
}
