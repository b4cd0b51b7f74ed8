import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { OneClickStatus, SignedMessage } from '../../../perp-types.ts';

export type SubmitOneClickParameters = SignedMessage;
export type SubmitOneClickReturnType = OneClickStatus;
export type SubmitOneClickErrorType = PerpRequestErrorType;

/** `POST one-click/enable`: the signed EnableSession message (see `enableOneClick` for the whole flow). */
export function submitOneClick(transport: PerpTransport, parameters: SubmitOneClickParameters): Promise<SubmitOneClickReturnType> {
  return transport.send('POST', 'one-click/enable', { body: parameters, idempotent: false });
}
