import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { VaultTransactionView } from '../../../perp-types.ts';

export type GetApproveParameters = { txHash: string };
export type GetApproveReturnType = VaultTransactionView;
export type GetApproveErrorType = PerpRequestErrorType;

/** `GET approve/{txHash}`. */
export function getApprove(transport: PerpTransport, parameters: GetApproveParameters): Promise<GetApproveReturnType> {
  return transport.send('GET', `approve/${encodeURIComponent(parameters.txHash)}`, { idempotent: true });
}
