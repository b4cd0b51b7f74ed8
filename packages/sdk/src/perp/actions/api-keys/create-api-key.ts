import { publicCall, type PerpPublicTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { CreatedApiKey, PerpPermission } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';

export type CreateApiKeyParameters = { account: TypedDataSigner; label?: string; permissions: PerpPermission[]; chainId?: number | string };
export type CreateApiKeyReturnType = CreatedApiKey;
export type CreateApiKeyErrorType = PerpRequestErrorType | Error;

/**
 * Creates a key for `account`'s wallet: `api-keys/prepare`, the wallet signs the typed data (no
 * transaction, no gas), `POST api-keys`. The secret is in the answer only: keep it.
 */
export async function createApiKey(transport: PerpPublicTransport, parameters: CreateApiKeyParameters): Promise<CreateApiKeyReturnType> {
  const { account, chainId } = parameters;
  const prepared = await publicCall<{ typedData: { domain: { chainId: number }; message: Record<string, unknown> } }>(transport, 'POST', 'api-keys/prepare', {
    address: account.address,
    label: parameters.label ?? '',
    permissions: parameters.permissions,
  });
  // Signing a domain of another chain than the one the caller meant would create a key there.
  if (chainId !== undefined && String(prepared.typedData.domain.chainId) !== String(chainId)) {
    throw new Error(`perp API serves chain ${prepared.typedData.domain.chainId}, not ${chainId}`);
  }
  const signature = await account.signTypedData(prepared.typedData);
  return publicCall<CreatedApiKey>(transport, 'POST', 'api-keys', { message: prepared.typedData.message, signature });
}
