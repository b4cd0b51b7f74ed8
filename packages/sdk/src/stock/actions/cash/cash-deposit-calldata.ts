import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, TokenAmountInput } from '../../../stock-types.ts';
import { operationCalldata } from '../operations/operation-calldata.ts';

export type CashDepositCalldataParameters = TokenAmountInput;
export type CashDepositCalldataReturnType = Calldata;
export type CashDepositCalldataErrorType = StockRequestErrorType;

/** `POST cash/deposits/calldata`. */
export function cashDepositCalldata(transport: StockTransport, parameters: CashDepositCalldataParameters): Promise<CashDepositCalldataReturnType> {
  return operationCalldata(transport, { ...parameters, operation: 'cashDeposit' });
}
