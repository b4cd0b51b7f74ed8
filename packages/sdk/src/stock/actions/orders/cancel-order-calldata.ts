import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata } from '../../../stock-types.ts';

export type CancelOrderCalldataParameters = { orderId: string };
export type CancelOrderCalldataReturnType = Calldata;
export type CancelOrderCalldataErrorType = StockRequestErrorType;

/** `DELETE orders/{orderId}/calldata`: the cancel call for the wallet to send. */
export function cancelOrderCalldata(transport: StockTransport, parameters: CancelOrderCalldataParameters): Promise<CancelOrderCalldataReturnType> {
  return transport.call('DELETE', `/api/v1/orders/${seg(parameters.orderId)}/calldata`);
}
