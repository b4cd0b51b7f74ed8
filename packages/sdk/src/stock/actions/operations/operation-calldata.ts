import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { Calldata, TokenAmountInput } from '../../../stock-types.ts';
import { operationPath, type OperationKind } from './operation-path.ts';

export type OperationCalldataParameters = { operation: OperationKind } & TokenAmountInput;
export type OperationCalldataReturnType = Calldata;
export type OperationCalldataErrorType = StockRequestErrorType;

/** `POST {cash|stock}/{deposits|withdrawals}/calldata`: the call moving `tokenAmount` for the wallet to send. */
export function operationCalldata(transport: StockTransport, parameters: OperationCalldataParameters): Promise<OperationCalldataReturnType> {
  const { operation, ...body } = parameters;
  return transport.call('POST', `${operationPath(operation)}/calldata`, { body });
}
