import { orderBasicIssue } from '@tokex/contract';
import type { PerpTransport } from '../../perp-transport.ts';
import type { OrderInput } from '../../../perp-types.ts';
import { TokexValidationError } from '../../../errors.ts';
import { compareDecimal, isDecimalString, isMultipleOf } from '../../../decimal-step.ts';
import { getCachedInstrument } from '../market/get-cached-instrument.ts';

export type ValidateOrderParameters = OrderInput;
export type ValidateOrderReturnType = void;
export type ValidateOrderErrorType = TokexValidationError;

/**
 * Refuses, before anything is sent, an order the venue would refuse for its shape: the contract's
 * stateless rules (side, type, time in force for the type, the price of the LIMIT types, a trigger
 * type's triggerPrice and triggerBy, closePosition only on a trigger and without size,
 * clientOrderId), a size, price or triggerPrice that is not a positive decimal, off the lot or tick,
 * or outside the instrument's size bounds. An unknown symbol, and whether a trigger is already
 * reached, are left to the server.
 */
export async function validateOrder(transport: PerpTransport, parameters: ValidateOrderParameters): Promise<ValidateOrderReturnType> {
  const order = parameters;
  // The venue's stateless rules (the contract's ValidateBasic), with the server's field and reason.
  const issue = orderBasicIssue(order);
  if (issue) throw new TokexValidationError(issue.field, issue.reason);
  // A closePosition trigger has no size: it closes whatever is held when it fires. An empty string
  // passes the contract's rule but not the route's schema (a decimal when present): refused here too.
  if (order.closePosition === true && order.size === '') throw new TokexValidationError('size', 'must be omitted with closePosition: the whole position is closed');
  const size = order.closePosition === true ? undefined : order.size;
  if (order.closePosition !== true && (size === undefined || !isDecimalString(size) || compareDecimal(size, '0') <= 0)) throw new TokexValidationError('size', 'a positive decimal string');
  for (const field of ['price', 'triggerPrice'] as const) {
    const v = order[field];
    if (v !== undefined && (!isDecimalString(v) || compareDecimal(v, '0') <= 0)) throw new TokexValidationError(field, 'a positive decimal string');
  }
  // The lot and tick checks are a convenience: when the instruments cannot be read, the server decides.
  const inst = await getCachedInstrument(transport, { symbol: order.symbol }).catch(() => undefined);
  if (!inst) return;
  if (size !== undefined) {
    if (!isMultipleOf(size, inst.lotSize)) throw new TokexValidationError('size', `${size} is not a multiple of the lot size ${inst.lotSize}`);
    if (compareDecimal(size, inst.minSize) < 0) throw new TokexValidationError('size', `below the minimum size ${inst.minSize}`);
    if (compareDecimal(size, inst.maxSize) > 0) throw new TokexValidationError('size', `above the maximum size ${inst.maxSize}`);
  }
  for (const field of ['price', 'triggerPrice'] as const) {
    const v = order[field];
    if (v !== undefined && !isMultipleOf(v, inst.tickSize)) throw new TokexValidationError(field, `${v} is off the tick: not a multiple of the tick size ${inst.tickSize}`);
  }
}
