import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView, StockPage, StockPageQuery } from '../../../stock-types.ts';
import { listOperations } from '../operations/list-operations.ts';

export type ListCashDepositsParameters = { status?: string } & StockPageQuery;
export type ListCashDepositsReturnType = StockPage<OperationView>;
export type ListCashDepositsErrorType = StockRequestErrorType;

/** `GET cash/deposits`. */
export function listCashDeposits(transport: StockTransport, parameters: ListCashDepositsParameters = {}): Promise<ListCashDepositsReturnType> {
  return listOperations(transport, { ...parameters, operation: 'cashDeposit' });
}
