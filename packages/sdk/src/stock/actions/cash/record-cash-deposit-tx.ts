import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RecordedOperationTx } from '../../../stock-types.ts';
import { recordOperationTx } from '../operations/record-operation-tx.ts';

export type RecordCashDepositTxParameters = { txHash: string };
export type RecordCashDepositTxReturnType = RecordedOperationTx;
export type RecordCashDepositTxErrorType = StockRequestErrorType;

/** `POST cash/deposits/tx`: records a self-submitted deposit. */
export function recordCashDepositTx(transport: StockTransport, parameters: RecordCashDepositTxParameters): Promise<RecordCashDepositTxReturnType> {
  return recordOperationTx(transport, { operation: 'cashDeposit', txHash: parameters.txHash });
}
