import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, TokenAmountInput } from '../../../stock-types.ts';
import { operationCalldata } from '../operations/operation-calldata.ts';

export type StockWithdrawalCalldataParameters = TokenAmountInput;
export type StockWithdrawalCalldataReturnType = Calldata;
export type StockWithdrawalCalldataErrorType = StockRequestErrorType;

/** `POST stock/withdrawals/calldata`. */
export function stockWithdrawalCalldata(transport: StockTransport, parameters: StockWithdrawalCalldataParameters): Promise<StockWithdrawalCalldataReturnType> {
  return operationCalldata(transport, { ...parameters, operation: 'stockWithdrawal' });
}
