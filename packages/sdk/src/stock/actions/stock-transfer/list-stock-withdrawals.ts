import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView, StockPage, StockPageQuery } from '../../../stock-types.ts';
import { listOperations } from '../operations/list-operations.ts';

export type ListStockWithdrawalsParameters = { status?: string } & StockPageQuery;
export type ListStockWithdrawalsReturnType = StockPage<OperationView>;
export type ListStockWithdrawalsErrorType = StockRequestErrorType;

/** `GET stock/withdrawals`. */
export function listStockWithdrawals(transport: StockTransport, parameters: ListStockWithdrawalsParameters = {}): Promise<ListStockWithdrawalsReturnType> {
  return listOperations(transport, { ...parameters, operation: 'stockWithdrawal' });
}
