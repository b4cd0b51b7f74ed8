import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PlacedOrder, SignedMessage } from '../../../perp-types.ts';

export type FillOrderParameters = SignedMessage;
export type FillOrderReturnType = PlacedOrder;
export type FillOrderErrorType = PerpRequestErrorType;

/** `POST orders/fill`: an immediate-or-cancel taker order up to its worst price; nothing rests. */
export function fillOrder<T = FillOrderReturnType>(transport: PerpTransport, parameters: FillOrderParameters): Promise<T> {
  return transport.send('POST', 'orders/fill', { body: parameters, idempotent: true });
}
