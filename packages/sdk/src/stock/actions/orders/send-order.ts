import type { SendOptions, StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { RelayedSend, StockOrderInput } from '../../../stock-types.ts';
import type { TokexValidationError } from '../../../errors.ts';
import { postOrder } from './post-order.ts';

export type SendOrderParameters = StockOrderInput & { gasLimit?: string | number } & SendOptions;
export type SendOrderReturnType = RelayedSend;
export type SendOrderErrorType = StockRequestErrorType | TokexValidationError;

/** `POST orders/send` (One Click): the relayer places the order for the key's wallet, under an Idempotency-Key (a fresh one unless given). */
export function sendOrder(transport: StockTransport, parameters: SendOrderParameters): Promise<SendOrderReturnType> {
  return postOrder(transport, '/api/v1/orders/send', parameters, true);
}
