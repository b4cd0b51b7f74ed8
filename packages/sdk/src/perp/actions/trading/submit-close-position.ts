import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PlacedOrder, SignedMessage } from '../../../perp-types.ts';

export type SubmitClosePositionParameters = SignedMessage;
export type SubmitClosePositionReturnType = PlacedOrder;
export type SubmitClosePositionErrorType = PerpRequestErrorType;

/** `POST positions/close`: a signed reduce-only order (see `closePosition` for the whole flow). */
export function submitClosePosition<T = SubmitClosePositionReturnType>(transport: PerpTransport, parameters: SubmitClosePositionParameters): Promise<T> {
  return transport.send('POST', 'positions/close', { body: parameters, idempotent: true });
}
