import { ORDER_ID_PATTERN } from '@tokex/contract';
import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { AmendInput, BuiltAmend } from '../../../perp-types.ts';
import { TokexValidationError } from '../../../errors.ts';
import { compareDecimal, isDecimalString } from '../../../decimal-step.ts';

export type BuildAmendParameters = AmendInput;
export type BuildAmendReturnType = BuiltAmend;
export type BuildAmendErrorType = PerpRequestErrorType | TokexValidationError;

const ORDER_ID = new RegExp(ORDER_ID_PATTERN);

/** Refuses, before sending, an amendment the server would refuse for its shape. */
export function validateAmend(input: AmendInput): void {
  if (typeof input.orderId !== 'string' || !ORDER_ID.test(input.orderId)) throw new TokexValidationError('orderId', 'an order id: a positive decimal integer string');
  if (input.price === undefined && input.size === undefined) throw new TokexValidationError('price', 'give a new price, a new size, or both');
  for (const field of ['price', 'size'] as const) {
    const v = input[field];
    if (v !== undefined && (!isDecimalString(v) || compareDecimal(v, '0') <= 0)) throw new TokexValidationError(field, 'a positive decimal string');
  }
}

/**
 * `POST orders/amend/build`: the EIP-712 amendment (new price and/or new total size, fills
 * included) of an open order for the wallet to sign; nothing changes yet. Checked first
 * (`validateAmend`) unless the transport's `validateOrders` is off; the tick, the lot and the band
 * are the server's to check (the order's instrument is not known here).
 */
export function buildAmend(transport: PerpTransport, parameters: BuildAmendParameters): Promise<BuildAmendReturnType> {
  if (transport.validateOrders) validateAmend(parameters);
  return transport.send('POST', 'orders/amend/build', { body: parameters, idempotent: false });
}
