import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { VaultTransactionView } from '../../../perp-types.ts';

export type SubmitDepositParameters = { signedTransaction: `0x${string}` };
export type SubmitDepositReturnType = VaultTransactionView;
export type SubmitDepositErrorType = PerpRequestErrorType;

/** `POST deposit/submit`: broadcasts the signed deposit and answers once mined (or still pending). */
export function submitDeposit(transport: PerpTransport, parameters: SubmitDepositParameters): Promise<SubmitDepositReturnType> {
  return transport.send('POST', 'deposit/submit', { body: parameters, idempotent: false });
}
