import type { SendOptions, StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, StockOrderWithDepositInput } from '../../../stock-types.ts';
import type { TokexValidationError } from '../../../errors.ts';
import { postOrder } from './post-order.ts';

export type SendOrderWithDepositParameters = StockOrderWithDepositInput & { gasLimit?: string | number } & SendOptions;
export type SendOrderWithDepositReturnType = RelayedSend;
export type SendOrderWithDepositErrorType = StockRequestErrorType | TokexValidationError;

/** `POST orders/with-deposit/send` (One Click). */
export function sendOrderWithDeposit(transport: StockTransport, parameters: SendOrderWithDepositParameters): Promise<SendOrderWithDepositReturnType> {
  return postOrder(transport, '/api/v1/orders/with-deposit/send', parameters, true);
}
