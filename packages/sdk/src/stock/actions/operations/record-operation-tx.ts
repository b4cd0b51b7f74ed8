import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RecordedOperationTx } from '../../../stock-types.ts';
import { operationPath, type OperationKind } from './operation-path.ts';

export type RecordOperationTxParameters = { operation: OperationKind; txHash: string };
export type RecordOperationTxReturnType = RecordedOperationTx;
export type RecordOperationTxErrorType = StockRequestErrorType;

/** `POST {cash|stock}/{deposits|withdrawals}/tx`: records a self-submitted move. */
export function recordOperationTx(transport: StockTransport, parameters: RecordOperationTxParameters): Promise<RecordOperationTxReturnType> {
  return transport.call('POST', `${operationPath(parameters.operation)}/tx`, { body: { txHash: parameters.txHash } });
}
