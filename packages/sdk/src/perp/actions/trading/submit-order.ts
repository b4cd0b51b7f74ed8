import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PlacedOrder, SignedMessage } from '../../../perp-types.ts';
import { hasClientOrderId } from './client-order-id.ts';

export type SubmitOrderParameters = SignedMessage;
export type SubmitOrderReturnType = PlacedOrder;
export type SubmitOrderErrorType = PerpRequestErrorType;

/** `POST orders`: places a signed order; resent on failure when it names a clientOrderId. */
export function submitOrder<T = SubmitOrderReturnType>(transport: PerpTransport, parameters: SubmitOrderParameters): Promise<T> {
  return transport.send('POST', 'orders', { body: parameters, idempotent: hasClientOrderId(parameters.message) });
}
