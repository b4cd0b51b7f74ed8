import type { PerpTransport } from '../../perp-transport.ts';
import type { AmendInput, PlacedOrder } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { signAmend, type SignAmendErrorType } from './sign-amend.ts';
import { submitAmend, type SubmitAmendErrorType } from './submit-amend.ts';

export type AmendOrderParameters = { account: TypedDataSigner } & AmendInput;
export type AmendOrderReturnType = PlacedOrder;
export type AmendOrderErrorType = SignAmendErrorType | SubmitAmendErrorType;

/**
 * Changes an open order's price and/or total size (fills included) under the same `orderId`:
 * build, `account` signs, submit. A smaller size at the same price keeps the order's queue place; a
 * new price or a larger size re-queues it. A trigger order that has not fired cannot be amended
 * (51031: cancel it and place another).
 */
export async function amendOrder<T = AmendOrderReturnType>(transport: PerpTransport, parameters: AmendOrderParameters): Promise<T> {
  const { account, ...amend } = parameters;
  const { message, signature } = await signAmend(transport, { account, amend });
  return submitAmend<T>(transport, { message, signature });
}
