import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { AccountAsset } from '../../../perp-types.ts';

export type GetAssetsReturnType = AccountAsset[];
export type GetAssetsErrorType = PerpRequestErrorType;

/** `GET account/assets`. */
export function getAssets(transport: PerpTransport): Promise<GetAssetsReturnType> {
  return transport.send('GET', 'account/assets', { idempotent: true });
}
