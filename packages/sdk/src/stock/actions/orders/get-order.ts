import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { StockOrderView } from '../../../stock-types.ts';

export type GetOrderParameters = { orderId: string };
export type GetOrderReturnType = StockOrderView;
export type GetOrderErrorType = StockRequestErrorType;

/** `GET orders/{orderId}`. */
export function getOrder(transport: StockTransport, parameters: GetOrderParameters): Promise<GetOrderReturnType> {
  return transport.call('GET', `/api/v1/orders/${seg(parameters.orderId)}`);
}
