import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OneClickStatus } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { prepareOneClick } from './prepare-one-click.ts';
import { submitOneClick } from './submit-one-click.ts';

export type EnableOneClickParameters = { wallet: TypedDataSigner; sessionAddress: string; expiresAt: number };
export type EnableOneClickReturnType = OneClickStatus;
export type EnableOneClickErrorType = PerpRequestErrorType | Error;

/**
 * Enables `sessionAddress` as the wallet's session signer until `expiresAt` (ms, at most 30 days
 * ahead): `one-click/prepare`, checks that the typed data is what was asked on this transport's chain,
 * the wallet signs it (no transaction, no gas), `one-click/enable`. It replaces any other session.
 */
export async function enableOneClick(transport: PerpTransport, parameters: EnableOneClickParameters): Promise<EnableOneClickReturnType> {
  const { wallet, sessionAddress, expiresAt } = parameters;
  const { typedData } = await prepareOneClick(transport, { sessionAddress, expiresAt });
  const m = typedData.message;
  if (String(typedData.domain.chainId) !== String(transport.chainId)) throw new Error(`perp API serves chain ${typedData.domain.chainId}, not ${transport.chainId}`);
  if (typedData.primaryType !== 'EnableSession' || m.account.toLowerCase() !== wallet.address.toLowerCase() || m.session.toLowerCase() !== sessionAddress.toLowerCase() || m.expiresAt !== String(expiresAt)) {
    throw new Error('one-click/prepare answered another authorisation than the one asked; not signed');
  }
  const signature = await wallet.signTypedData(typedData);
  return submitOneClick(transport, { message: m, signature });
}
