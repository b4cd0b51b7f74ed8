import type { SendOptions, StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, TokenAmountInput } from '../../../stock-types.ts';
import { sendOperation } from '../operations/send-operation.ts';

export type SendCashDepositParameters = TokenAmountInput & { gasLimit?: string | number } & SendOptions;
export type SendCashDepositReturnType = RelayedSend;
export type SendCashDepositErrorType = StockRequestErrorType;

/** `POST cash/deposits/send` (One Click). */
export function sendCashDeposit(transport: StockTransport, parameters: SendCashDepositParameters): Promise<SendCashDepositReturnType> {
  return sendOperation(transport, { ...parameters, operation: 'cashDeposit' });
}
