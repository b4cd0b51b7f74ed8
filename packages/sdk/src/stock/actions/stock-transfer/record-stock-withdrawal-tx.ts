import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RecordedOperationTx } from '../../../stock-types.ts';
import { recordOperationTx } from '../operations/record-operation-tx.ts';

export type RecordStockWithdrawalTxParameters = { txHash: string };
export type RecordStockWithdrawalTxReturnType = RecordedOperationTx;
export type RecordStockWithdrawalTxErrorType = StockRequestErrorType;

/** `POST stock/withdrawals/tx`: records a self-submitted withdrawal. */
export function recordStockWithdrawalTx(transport: StockTransport, parameters: RecordStockWithdrawalTxParameters): Promise<RecordStockWithdrawalTxReturnType> {
  return recordOperationTx(transport, { operation: 'stockWithdrawal', txHash: parameters.txHash });
}
