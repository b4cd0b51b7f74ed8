import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OperationView, StockPage, StockPageQuery } from '../../../stock-types.ts';
import { listOperations } from '../operations/list-operations.ts';

export type ListCashWithdrawalsParameters = { status?: string } & StockPageQuery;
export type ListCashWithdrawalsReturnType = StockPage<OperationView>;
export type ListCashWithdrawalsErrorType = StockRequestErrorType;

/** `GET cash/withdrawals`. */
export function listCashWithdrawals(transport: StockTransport, parameters: ListCashWithdrawalsParameters = {}): Promise<ListCashWithdrawalsReturnType> {
  return listOperations(transport, { ...parameters, operation: 'cashWithdrawal' });
}
