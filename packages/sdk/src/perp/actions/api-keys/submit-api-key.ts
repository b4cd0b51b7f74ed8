import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { CreatedApiKey, SignedMessage } from '../../../perp-types.ts';

export type SubmitApiKeyParameters = SignedMessage;
export type SubmitApiKeyReturnType = CreatedApiKey;
export type SubmitApiKeyErrorType = PerpRequestErrorType;

/** `POST api-keys` (no signature): creates the key the signed message names; the secret is in this answer only. */
export function submitApiKey(transport: PerpTransport, parameters: SubmitApiKeyParameters): Promise<SubmitApiKeyReturnType> {
  return transport.send('POST', 'api-keys', { body: parameters, unsigned: true, idempotent: false });
}
