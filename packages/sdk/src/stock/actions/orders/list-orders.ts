import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { StockOrderView, StockPage, StockPageQuery } from '../../../stock-types.ts';

export type ListOrdersParameters = { symbol?: string; status?: string; state?: string } & StockPageQuery;
export type ListOrdersReturnType = StockPage<StockOrderView>;
export type ListOrdersErrorType = StockRequestErrorType;

/** `GET orders`: the key's orders (`state`: open, canceling, history). */
export function listOrders(transport: StockTransport, parameters: ListOrdersParameters = {}): Promise<ListOrdersReturnType> {
  return transport.call('GET', '/api/v1/orders', { query: parameters });
}
