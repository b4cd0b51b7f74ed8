import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PlacedOrder, SignedMessage } from '../../../perp-types.ts';

export type SubmitOrderParameters = SignedMessage;
export type SubmitOrderReturnType = PlacedOrder;
export type SubmitOrderErrorType = PerpRequestErrorType;

/** `POST orders`: places a signed order; resent on failure as it is (the same signed order is the same order: docs/perp-api.md "Idempotency"). */
export function submitOrder<T = SubmitOrderReturnType>(transport: PerpTransport, parameters: SubmitOrderParameters): Promise<T> {
  return transport.send('POST', 'orders', { body: parameters, idempotent: true });
}
