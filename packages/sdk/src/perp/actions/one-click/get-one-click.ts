import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OneClickStatus } from '../../../perp-types.ts';

export type GetOneClickReturnType = OneClickStatus;
export type GetOneClickErrorType = PerpRequestErrorType;

/** `GET one-click`: the wallet's session signer as it stands. */
export function getOneClick(transport: PerpTransport): Promise<GetOneClickReturnType> {
  return transport.send('GET', 'one-click', { idempotent: true });
}
