import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OrderView, Page, PageQuery } from '../../../perp-types.ts';

export type GetOpenOrdersParameters = { symbol?: string } & PageQuery;
export type GetOpenOrdersReturnType = Page<OrderView>;
export type GetOpenOrdersErrorType = PerpRequestErrorType;

/** `GET orders/open`. */
export function getOpenOrders(transport: PerpTransport, parameters: GetOpenOrdersParameters = {}): Promise<GetOpenOrdersReturnType> {
  return transport.send('GET', 'orders/open', { query: parameters, idempotent: true });
}
