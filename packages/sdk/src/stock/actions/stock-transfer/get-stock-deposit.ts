import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView } from '../../../stock-types.ts';
import { getOperation } from '../operations/get-operation.ts';

export type GetStockDepositParameters = { operationId: string };
export type GetStockDepositReturnType = OperationView;
export type GetStockDepositErrorType = StockRequestErrorType;

/** `GET stock/deposits/{operationId}`. */
export function getStockDeposit(transport: StockTransport, parameters: GetStockDepositParameters): Promise<GetStockDepositReturnType> {
  return getOperation(transport, { operation: 'stockDeposit', operationId: parameters.operationId });
}
