import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { BuiltOrder, OrderInput } from '../../../perp-types.ts';
import { validateOrder, type ValidateOrderErrorType } from './validate-order.ts';

export type BuildOrderParameters = OrderInput;
export type BuildOrderReturnType = BuiltOrder;
export type BuildOrderErrorType = PerpRequestErrorType | ValidateOrderErrorType;

/** `POST orders/build`: the EIP-712 order for the wallet to sign, checked first (`validateOrder`) unless the transport's `validateOrders` is off. */
export async function buildOrder(transport: PerpTransport, parameters: BuildOrderParameters): Promise<BuildOrderReturnType> {
  if (transport.validateOrders) await validateOrder(transport, parameters);
  return transport.send('POST', 'orders/build', { body: parameters, idempotent: false });
}
