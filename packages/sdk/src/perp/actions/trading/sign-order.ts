import type { PerpTransport } from '../../perp-transport.ts';
import type { OrderInput, SignedOrder } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { buildOrder, type BuildOrderErrorType } from './build-order.ts';
import { signForChain, withinSession } from './session-signing.ts';

export type SignOrderParameters = { account: TypedDataSigner; order: OrderInput };
export type SignOrderReturnType = SignedOrder;
export type SignOrderErrorType = BuildOrderErrorType | Error;

/**
 * An order signed by `account` (the wallet the key is bound to, or a One-Click session key):
 * `orders/build`, then the signer signs the EIP-712 order (no transaction, no gas). Answers what
 * `POST orders` (or `orders/fill`, `positions/close`) takes.
 */
export async function signOrder(transport: PerpTransport, parameters: SignOrderParameters): Promise<SignOrderReturnType> {
  const { account } = parameters;
  const built = await buildOrder(transport, withinSession(transport, account, parameters.order));
  const signature = await signForChain(transport, account, built.typedData);
  return { message: built.typedData.message, signature, orderHash: built.orderHash };
}
