import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, StockOrderWithDepositInput } from '../../../stock-types.ts';
import type { TokexValidationError } from '../../../errors.ts';
import { postOrder } from './post-order.ts';

export type OrderWithDepositCalldataParameters = StockOrderWithDepositInput;
export type OrderWithDepositCalldataReturnType = Calldata;
export type OrderWithDepositCalldataErrorType = StockRequestErrorType | TokexValidationError;

/** `POST orders/with-deposit/calldata`: deposit `tokenAmount` of cash and place the order in one call. */
export function orderWithDepositCalldata(transport: StockTransport, parameters: OrderWithDepositCalldataParameters): Promise<OrderWithDepositCalldataReturnType> {
  return postOrder(transport, '/api/v1/orders/with-deposit/calldata', parameters, false);
}
