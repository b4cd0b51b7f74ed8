import type { SendOptions, StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, TokenAmountInput } from '../../../stock-types.ts';
import { sendOperation } from '../operations/send-operation.ts';

export type SendStockWithdrawalParameters = TokenAmountInput & { gasLimit?: string | number } & SendOptions;
export type SendStockWithdrawalReturnType = RelayedSend;
export type SendStockWithdrawalErrorType = StockRequestErrorType;

/** `POST stock/withdrawals/send` (One Click). */
export function sendStockWithdrawal(transport: StockTransport, parameters: SendStockWithdrawalParameters): Promise<SendStockWithdrawalReturnType> {
  return sendOperation(transport, { ...parameters, operation: 'stockWithdrawal' });
}
