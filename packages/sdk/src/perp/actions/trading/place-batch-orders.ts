import type { PerpTransport } from '../../perp-transport.ts';
import type { BatchOrdersResult, OrderInput } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { TokexValidationError } from '../../../errors.ts';
import { signOrder, type SignOrderErrorType } from './sign-order.ts';
import { checkBatchSize, submitBatchOrders, type SubmitBatchOrdersErrorType } from './submit-batch-orders.ts';

export type PlaceBatchOrdersParameters = { account: TypedDataSigner; orders: ReadonlyArray<OrderInput> };
export type PlaceBatchOrdersReturnType = BatchOrdersResult;
export type PlaceBatchOrdersErrorType = SignOrderErrorType | SubmitBatchOrdersErrorType;

/**
 * Builds and signs each order with `account` (as `signOrder`), then places them in one
 * `POST orders/batch`. Nothing is sent if an order fails the checks made before sending (the field
 * is named `orders[i].…`). The answer holds one result per order, in input order: check each `code`.
 */
export async function placeBatchOrders<T = PlaceBatchOrdersReturnType>(transport: PerpTransport, parameters: PlaceBatchOrdersParameters): Promise<T> {
  const { account, orders } = parameters;
  checkBatchSize(orders.length);
  const signed = await Promise.all(
    orders.map((order, i) =>
      signOrder(transport, { account, order }).catch((err: unknown) => {
        if (err instanceof TokexValidationError) throw new TokexValidationError(`orders[${i}].${err.field}`, err.reason);
        throw err;
      }),
    ),
  );
  return submitBatchOrders<T>(transport, { orders: signed });
}
