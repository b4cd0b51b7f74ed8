import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView } from '../../../stock-types.ts';
import { operationPath, type OperationKind } from './operation-path.ts';

export type GetOperationParameters = { operation: OperationKind; operationId: string };
export type GetOperationReturnType = OperationView;
export type GetOperationErrorType = StockRequestErrorType;

/** `GET {cash|stock}/{deposits|withdrawals}/{operationId}`. */
export function getOperation(transport: StockTransport, parameters: GetOperationParameters): Promise<GetOperationReturnType> {
  return transport.call('GET', `${operationPath(parameters.operation)}/${seg(parameters.operationId)}`);
}
