import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView, StockPage, StockPageQuery } from '../../../stock-types.ts';
import { listOperations } from '../operations/list-operations.ts';

export type ListStockDepositsParameters = { status?: string } & StockPageQuery;
export type ListStockDepositsReturnType = StockPage<OperationView>;
export type ListStockDepositsErrorType = StockRequestErrorType;

/** `GET stock/deposits`. */
export function listStockDeposits(transport: StockTransport, parameters: ListStockDepositsParameters = {}): Promise<ListStockDepositsReturnType> {
  return listOperations(transport, { ...parameters, operation: 'stockDeposit' });
}
