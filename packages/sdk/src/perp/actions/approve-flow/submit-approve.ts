import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { VaultTransactionView } from '../../../perp-types.ts';

export type SubmitApproveParameters = { signedTransaction: `0x${string}` };
export type SubmitApproveReturnType = VaultTransactionView;
export type SubmitApproveErrorType = PerpRequestErrorType;

/** `POST approve/submit`: broadcasts the signed approve and answers once mined (or still pending). */
export function submitApprove(transport: PerpTransport, parameters: SubmitApproveParameters): Promise<SubmitApproveReturnType> {
  return transport.send('POST', 'approve/submit', { body: parameters, idempotent: false });
}
