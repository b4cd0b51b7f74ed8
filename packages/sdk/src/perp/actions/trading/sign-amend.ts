import { DEFAULT_ORDER_TTL_MS } from '@tokex/contract';
import type { PerpTransport } from '../../perp-transport.ts';
import type { AmendInput, SessionSigner, SignedAmend } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { buildAmend, type BuildAmendErrorType } from './build-amend.ts';

export type SignAmendParameters = { account: TypedDataSigner; amend: AmendInput };
export type SignAmendReturnType = SignedAmend;
export type SignAmendErrorType = BuildAmendErrorType | Error;

/**
 * An amendment signed by `account` (the key's wallet, or a One-Click session key):
 * `orders/amend/build`, then the signer signs the EIP-712 AmendOrder. Answers what
 * `POST orders/amend` takes (`submitAmend`), with its hash.
 */
export async function signAmend(transport: PerpTransport, parameters: SignAmendParameters): Promise<SignAmendReturnType> {
  const { account } = parameters;
  let { amend } = parameters;
  const sessionEnd = (account as Partial<SessionSigner>).expiresAt;
  // A session may not sign beyond its own life, as for orders.
  if (amend.expiry === undefined && typeof sessionEnd === 'number') amend = { ...amend, expiry: Math.min(transport.now() + DEFAULT_ORDER_TTL_MS, sessionEnd) };
  const built = await buildAmend(transport, amend);
  if (String(built.typedData.domain.chainId) !== String(transport.chainId)) {
    throw new Error(`perp API serves chain ${built.typedData.domain.chainId}, not ${transport.chainId}`);
  }
  const signature = await account.signTypedData(built.typedData);
  return { message: built.typedData.message, signature, amendHash: built.amendHash };
}
