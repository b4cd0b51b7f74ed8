import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView, StockPage, StockPageQuery } from '../../../stock-types.ts';
import { operationPath, type OperationKind } from './operation-path.ts';

export type ListOperationsParameters = { operation: OperationKind; status?: string } & StockPageQuery;
export type ListOperationsReturnType = StockPage<OperationView>;
export type ListOperationsErrorType = StockRequestErrorType;

/** `GET {cash|stock}/{deposits|withdrawals}`. */
export function listOperations(transport: StockTransport, parameters: ListOperationsParameters): Promise<ListOperationsReturnType> {
  const { operation, ...query } = parameters;
  return transport.call('GET', operationPath(operation), { query });
}
