import { seg, sendKey, type SendOptions, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend } from '../../../stock-types.ts';

export type SendCancelOrderParameters = { orderId: string } & SendOptions;
export type SendCancelOrderReturnType = RelayedSend;
export type SendCancelOrderErrorType = StockRequestErrorType;

/** `DELETE orders/{orderId}/send` (One Click): the relayer cancels. */
export function sendCancelOrder(transport: StockTransport, parameters: SendCancelOrderParameters): Promise<SendCancelOrderReturnType> {
  return transport.call('DELETE', `/api/v1/orders/${seg(parameters.orderId)}/send`, sendKey(parameters));
}
