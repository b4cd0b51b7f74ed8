import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView } from '../../../stock-types.ts';
import { getOperation } from '../operations/get-operation.ts';

export type GetStockWithdrawalParameters = { operationId: string };
export type GetStockWithdrawalReturnType = OperationView;
export type GetStockWithdrawalErrorType = StockRequestErrorType;

/** `GET stock/withdrawals/{operationId}`. */
export function getStockWithdrawal(transport: StockTransport, parameters: GetStockWithdrawalParameters): Promise<GetStockWithdrawalReturnType> {
  return getOperation(transport, { operation: 'stockWithdrawal', operationId: parameters.operationId });
}
