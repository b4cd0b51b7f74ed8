import { MAX_BATCH_ORDERS } from '@tokex/contract';
import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { BatchOrdersResult, SignedMessage } from '../../../perp-types.ts';
import { TokexValidationError } from '../../../errors.ts';

export type SubmitBatchOrdersParameters = { orders: ReadonlyArray<SignedMessage> };
export type SubmitBatchOrdersReturnType = BatchOrdersResult;
export type SubmitBatchOrdersErrorType = PerpRequestErrorType | TokexValidationError;

/** 1 to MAX_BATCH_ORDERS (20) orders, or the refusal the server would answer for the whole batch. */
export function checkBatchSize(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_BATCH_ORDERS) throw new TokexValidationError('orders', `must hold 1 to ${MAX_BATCH_ORDERS} signed orders, not ${count}`);
}

/**
 * `POST orders/batch`: 1 to 20 signed orders (`signOrder`'s answers, or any `{message, signature}`),
 * placed in input order and journalled in one commit. `results` answers each order in input order,
 * `{code: 0, order}` or `{code, msg}` (that order alone refused); a refused order does not refuse
 * the others, so read every result. Resent on failure: each signed order is its own idempotency key
 * (the same batch again answers each order as placed before, `duplicate: true`).
 */
export function submitBatchOrders<T = SubmitBatchOrdersReturnType>(transport: PerpTransport, parameters: SubmitBatchOrdersParameters): Promise<T> {
  checkBatchSize(parameters.orders.length);
  // Only the two fields the route takes: a SignedOrder's orderHash would make the body invalid.
  const orders = parameters.orders.map(({ message, signature }) => ({ message, signature }));
  return transport.send('POST', 'orders/batch', { body: { orders }, idempotent: true });
}
