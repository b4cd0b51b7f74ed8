import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RecordedOperationTx } from '../../../stock-types.ts';
import { recordOperationTx } from '../operations/record-operation-tx.ts';

export type RecordStockDepositTxParameters = { txHash: string };
export type RecordStockDepositTxReturnType = RecordedOperationTx;
export type RecordStockDepositTxErrorType = StockRequestErrorType;

/** `POST stock/deposits/tx`: records a self-submitted deposit. */
export function recordStockDepositTx(transport: StockTransport, parameters: RecordStockDepositTxParameters): Promise<RecordStockDepositTxReturnType> {
  return recordOperationTx(transport, { operation: 'stockDeposit', txHash: parameters.txHash });
}
