import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';

export type DeleteApiKeyParameters = { apiKey: string };
export type DeleteApiKeyReturnType = { apiKey: string; deleted: boolean };
export type DeleteApiKeyErrorType = PerpRequestErrorType;

/** `DELETE api-keys/{apiKey}`. */
export function deleteApiKey(transport: PerpTransport, parameters: DeleteApiKeyParameters): Promise<DeleteApiKeyReturnType> {
  return transport.send('DELETE', `api-keys/${encodeURIComponent(parameters.apiKey)}`, { idempotent: false });
}
