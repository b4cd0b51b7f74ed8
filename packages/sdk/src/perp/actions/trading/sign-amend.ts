import type { PerpTransport } from '../../perp-transport.ts';
import type { AmendInput, SignedAmend } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { buildAmend, type BuildAmendErrorType } from './build-amend.ts';
import { signForChain, withinSession } from './session-signing.ts';

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
  const built = await buildAmend(transport, withinSession(transport, account, parameters.amend));
  const signature = await signForChain(transport, account, built.typedData);
  return { message: built.typedData.message, signature, amendHash: built.amendHash };
}
