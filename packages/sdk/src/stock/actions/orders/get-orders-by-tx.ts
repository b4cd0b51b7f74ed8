import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { StockOrderView } from '../../../stock-types.ts';

export type GetOrdersByTxParameters = { txHash: string };
export type GetOrdersByTxReturnType = StockOrderView[];
export type GetOrdersByTxErrorType = StockRequestErrorType;

/** `GET orders/tx/{txHash}`: the orders one transaction placed. */
export function getOrdersByTx(transport: StockTransport, parameters: GetOrdersByTxParameters): Promise<GetOrdersByTxReturnType> {
  return transport.call('GET', `/api/v1/orders/tx/${seg(parameters.txHash)}`);
}
