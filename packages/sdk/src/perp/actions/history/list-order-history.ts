import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OrderStatus, OrderView, Page, PageQuery } from '../../../perp-types.ts';

export type ListOrderHistoryParameters = { symbol?: string; status?: OrderStatus } & PageQuery;
export type ListOrderHistoryReturnType = Page<OrderView>;
export type ListOrderHistoryErrorType = PerpRequestErrorType;

/** `GET orders/history`. */
export function listOrderHistory(transport: PerpTransport, parameters: ListOrderHistoryParameters = {}): Promise<ListOrderHistoryReturnType> {
  return transport.send('GET', 'orders/history', { query: parameters, idempotent: true });
}
