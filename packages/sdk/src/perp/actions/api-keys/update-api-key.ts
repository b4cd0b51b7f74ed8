import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { ApiKeyInfo, PerpPermission } from '../../../perp-types.ts';

export type UpdateApiKeyParameters = { apiKey: string; label?: string; permissions?: PerpPermission[] };
export type UpdateApiKeyReturnType = ApiKeyInfo;
export type UpdateApiKeyErrorType = PerpRequestErrorType;

/** `PATCH api-keys/{apiKey}`: a new label or permissions. */
export function updateApiKey(transport: PerpTransport, parameters: UpdateApiKeyParameters): Promise<UpdateApiKeyReturnType> {
  const { apiKey, ...body } = parameters;
  return transport.send('PATCH', `api-keys/${encodeURIComponent(apiKey)}`, { body, idempotent: false });
}
