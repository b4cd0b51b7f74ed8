import type { SendOptions, StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, TokenAmountInput } from '../../../stock-types.ts';
import { sendOperation } from '../operations/send-operation.ts';

export type SendCashWithdrawalParameters = TokenAmountInput & { gasLimit?: string | number } & SendOptions;
export type SendCashWithdrawalReturnType = RelayedSend;
export type SendCashWithdrawalErrorType = StockRequestErrorType;

/** `POST cash/withdrawals/send` (One Click). */
export function sendCashWithdrawal(transport: StockTransport, parameters: SendCashWithdrawalParameters): Promise<SendCashWithdrawalReturnType> {
  return sendOperation(transport, { ...parameters, operation: 'cashWithdrawal' });
}
