import { splitSendOptions, type SendOptions, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, TokenAmountInput } from '../../../stock-types.ts';
import { operationPath, type OperationKind } from './operation-path.ts';

export type SendOperationParameters = { operation: OperationKind } & TokenAmountInput & { gasLimit?: string | number } & SendOptions;
export type SendOperationReturnType = RelayedSend;
export type SendOperationErrorType = StockRequestErrorType;

/** `POST {cash|stock}/{deposits|withdrawals}/send` (One Click): the relayer sends the move, under an Idempotency-Key (a fresh one unless given). */
export function sendOperation(transport: StockTransport, parameters: SendOperationParameters): Promise<SendOperationReturnType> {
  const { operation, ...rest } = parameters;
  const [body, key] = splitSendOptions(rest);
  return transport.call('POST', `${operationPath(operation)}/send`, { body, ...key });
}
