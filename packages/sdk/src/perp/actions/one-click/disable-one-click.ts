import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OneClickStatus } from '../../../perp-types.ts';

export type DisableOneClickReturnType = OneClickStatus;
export type DisableOneClickErrorType = PerpRequestErrorType;

/** `POST one-click/disable`: revokes the session signer at once (idempotent). */
export function disableOneClick(transport: PerpTransport): Promise<DisableOneClickReturnType> {
  return transport.send('POST', 'one-click/disable', { idempotent: false });
}
