import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PreparedVaultTransaction } from '../../../perp-types.ts';

export type PrepareApproveParameters = { address: string; amount: string };
export type PrepareApproveReturnType = PreparedVaultTransaction;
export type PrepareApproveErrorType = PerpRequestErrorType;

/** `POST approve/prepare`: the unsigned ERC-20 approve of the margin vault for `amount`. */
export function prepareApprove(transport: PerpTransport, parameters: PrepareApproveParameters): Promise<PrepareApproveReturnType> {
  return transport.send('POST', 'approve/prepare', { body: parameters, idempotent: false });
}
