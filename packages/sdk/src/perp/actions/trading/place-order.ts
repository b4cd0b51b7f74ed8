import type { PerpTransport } from '../../perp-transport.ts';
import type { PlacedOrder } from '../../../perp-types.ts';
import { signOrder, type SignOrderErrorType, type SignOrderParameters } from './sign-order.ts';
import { submitOrder } from './submit-order.ts';

export type PlaceOrderParameters = SignOrderParameters;
export type PlaceOrderReturnType = PlacedOrder;
export type PlaceOrderErrorType = SignOrderErrorType;

/** Builds, signs and places an order: the answer carries its status and fills so far. */
export async function placeOrder<T = PlaceOrderReturnType>(transport: PerpTransport, parameters: PlaceOrderParameters): Promise<T> {
  const { message, signature } = await signOrder(transport, parameters);
  return submitOrder<T>(transport, { message, signature });
}
