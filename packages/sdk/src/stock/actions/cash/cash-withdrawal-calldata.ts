import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, TokenAmountInput } from '../../../stock-types.ts';
import { operationCalldata } from '../operations/operation-calldata.ts';

export type CashWithdrawalCalldataParameters = TokenAmountInput;
export type CashWithdrawalCalldataReturnType = Calldata;
export type CashWithdrawalCalldataErrorType = StockRequestErrorType;

/** `POST cash/withdrawals/calldata`. */
export function cashWithdrawalCalldata(transport: StockTransport, parameters: CashWithdrawalCalldataParameters): Promise<CashWithdrawalCalldataReturnType> {
  return operationCalldata(transport, { ...parameters, operation: 'cashWithdrawal' });
}
