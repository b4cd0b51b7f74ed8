import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RecordedOrderTx } from '../../../stock-types.ts';

export type RecordOrderTxParameters = { txHash: string };
export type RecordOrderTxReturnType = RecordedOrderTx;
export type RecordOrderTxErrorType = StockRequestErrorType;

/** `POST orders/tx`: records a self-submitted order transaction. */
export function recordOrderTx(transport: StockTransport, parameters: RecordOrderTxParameters): Promise<RecordOrderTxReturnType> {
  return transport.call('POST', '/api/v1/orders/tx', { body: { txHash: parameters.txHash } });
}
