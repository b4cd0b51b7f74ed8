import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RecordedOperationTx } from '../../../stock-types.ts';
import { recordOperationTx } from '../operations/record-operation-tx.ts';

export type RecordCashWithdrawalTxParameters = { txHash: string };
export type RecordCashWithdrawalTxReturnType = RecordedOperationTx;
export type RecordCashWithdrawalTxErrorType = StockRequestErrorType;

/** `POST cash/withdrawals/tx`: records a self-submitted withdrawal. */
export function recordCashWithdrawalTx(transport: StockTransport, parameters: RecordCashWithdrawalTxParameters): Promise<RecordCashWithdrawalTxReturnType> {
  return recordOperationTx(transport, { operation: 'cashWithdrawal', txHash: parameters.txHash });
}
