import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { ApiKeyInfo } from '../../../perp-types.ts';

export type ListApiKeysReturnType = ApiKeyInfo[];
export type ListApiKeysErrorType = PerpRequestErrorType;

/** `GET api-keys`: the wallet's keys (never their secrets). */
export function listApiKeys(transport: PerpTransport): Promise<ListApiKeysReturnType> {
  return transport.send('GET', 'api-keys', { idempotent: true });
}
