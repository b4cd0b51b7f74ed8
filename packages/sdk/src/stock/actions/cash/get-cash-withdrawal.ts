import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView } from '../../../stock-types.ts';
import { getOperation } from '../operations/get-operation.ts';

export type GetCashWithdrawalParameters = { operationId: string };
export type GetCashWithdrawalReturnType = OperationView;
export type GetCashWithdrawalErrorType = StockRequestErrorType;

/** `GET cash/withdrawals/{operationId}`. */
export function getCashWithdrawal(transport: StockTransport, parameters: GetCashWithdrawalParameters): Promise<GetCashWithdrawalReturnType> {
  return getOperation(transport, { operation: 'cashWithdrawal', operationId: parameters.operationId });
}
