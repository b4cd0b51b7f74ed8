import type { SendOptions, StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, TokenAmountInput } from '../../../stock-types.ts';
import { sendOperation } from '../operations/send-operation.ts';

export type SendStockDepositParameters = TokenAmountInput & { gasLimit?: string | number } & SendOptions;
export type SendStockDepositReturnType = RelayedSend;
export type SendStockDepositErrorType = StockRequestErrorType;

/** `POST stock/deposits/send` (One Click). */
export function sendStockDeposit(transport: StockTransport, parameters: SendStockDepositParameters): Promise<SendStockDepositReturnType> {
  return sendOperation(transport, { ...parameters, operation: 'stockDeposit' });
}
