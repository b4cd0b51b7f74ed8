import type { PerpTransport } from '../../perp-transport.ts';
import type { OrderInput, SessionSigner, SignedOrder } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { buildOrder, type BuildOrderErrorType } from './build-order.ts';

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
  let { order } = parameters;
  const sessionEnd = (account as Partial<SessionSigner>).expiresAt;
  // A session may not sign beyond its own life: the default ten minutes end with the session.
  if (order.expiry === undefined && typeof sessionEnd === 'number') order = { ...order, expiry: Math.min(transport.now() + 10 * 60_000, sessionEnd) };
  const built = await buildOrder(transport, order);
  if (String(built.typedData.domain.chainId) !== String(transport.chainId)) {
    throw new Error(`perp API serves chain ${built.typedData.domain.chainId}, not ${transport.chainId}`);
  }
  const signature = await account.signTypedData(built.typedData);
  return { message: built.typedData.message, signature, orderHash: built.orderHash };
}
