import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, TokenAmountInput } from '../../../stock-types.ts';
import { operationCalldata } from '../operations/operation-calldata.ts';

export type StockDepositCalldataParameters = TokenAmountInput;
export type StockDepositCalldataReturnType = Calldata;
export type StockDepositCalldataErrorType = StockRequestErrorType;

/** `POST stock/deposits/calldata`: wallet shares into the exchange balance. */
export function stockDepositCalldata(transport: StockTransport, parameters: StockDepositCalldataParameters): Promise<StockDepositCalldataReturnType> {
  return operationCalldata(transport, { ...parameters, operation: 'stockDeposit' });
}
