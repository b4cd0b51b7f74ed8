import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PlacedOrder, SignedMessage } from '../../../perp-types.ts';

export type SubmitAmendParameters = SignedMessage;
export type SubmitAmendReturnType = PlacedOrder;
export type SubmitAmendErrorType = PerpRequestErrorType;

/**
 * `POST orders/amend`: applies a signed amendment (`signAmend`); the answer is the order as it
 * stands after it, under the same `orderId`. Resent on failure: a signed amendment is applied once,
 * and sent again answers the order as it stands (`duplicate: true`).
 */
export function submitAmend<T = SubmitAmendReturnType>(transport: PerpTransport, parameters: SubmitAmendParameters): Promise<T> {
  const { message, signature } = parameters;
  return transport.send('POST', 'orders/amend', { body: { message, signature }, idempotent: true });
}
