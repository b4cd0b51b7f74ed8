import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView } from '../../../stock-types.ts';
import { getOperation } from '../operations/get-operation.ts';

export type GetCashDepositParameters = { operationId: string };
export type GetCashDepositReturnType = OperationView;
export type GetCashDepositErrorType = StockRequestErrorType;

/** `GET cash/deposits/{operationId}`. */
export function getCashDeposit(transport: StockTransport, parameters: GetCashDepositParameters): Promise<GetCashDepositReturnType> {
  return getOperation(transport, { operation: 'cashDeposit', operationId: parameters.operationId });
}
