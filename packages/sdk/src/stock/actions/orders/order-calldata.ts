import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, StockOrderInput } from '../../../stock-types.ts';
import type { TokexValidationError } from '../../../errors.ts';
import { postOrder } from './post-order.ts';

export type OrderCalldataParameters = StockOrderInput;
export type OrderCalldataReturnType = Calldata;
export type OrderCalldataErrorType = StockRequestErrorType | TokexValidationError;

/** `POST orders/calldata`: the StockRouter call placing the order, for the wallet to send (checked first unless the transport's `validateOrders` is off). */
export function orderCalldata(transport: StockTransport, parameters: OrderCalldataParameters): Promise<OrderCalldataReturnType> {
  return postOrder(transport, '/api/v1/orders/calldata', parameters, false);
}
