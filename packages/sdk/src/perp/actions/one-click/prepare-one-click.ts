import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { EnableSessionTypedData } from '../../../perp-types.ts';

export type PrepareOneClickParameters = { sessionAddress: string; expiresAt: number };
export type PrepareOneClickReturnType = { typedData: EnableSessionTypedData };
export type PrepareOneClickErrorType = PerpRequestErrorType;

/** `POST one-click/prepare`: the EnableSession typed data for the wallet to sign (nothing is stored). */
export function prepareOneClick(transport: PerpTransport, parameters: PrepareOneClickParameters): Promise<PrepareOneClickReturnType> {
  return transport.send('POST', 'one-click/prepare', { body: parameters, idempotent: false });
}
