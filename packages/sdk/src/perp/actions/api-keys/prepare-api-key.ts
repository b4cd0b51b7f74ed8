import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PerpPermission, TypedData } from '../../../perp-types.ts';

export type PrepareApiKeyParameters = { address: string; label?: string; permissions: PerpPermission[] };
export type PrepareApiKeyReturnType = { typedData: TypedData };
export type PrepareApiKeyErrorType = PerpRequestErrorType;

/** `POST api-keys/prepare` (no signature): the typed data the wallet signs to create a key. */
export function prepareApiKey(transport: PerpTransport, parameters: PrepareApiKeyParameters): Promise<PrepareApiKeyReturnType> {
  return transport.send('POST', 'api-keys/prepare', { body: parameters, unsigned: true, idempotent: false });
}
