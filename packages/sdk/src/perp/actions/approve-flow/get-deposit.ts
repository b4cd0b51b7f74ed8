import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { VaultTransactionView } from '../../../perp-types.ts';

export type GetDepositParameters = { txHash: string };
export type GetDepositReturnType = VaultTransactionView;
export type GetDepositErrorType = PerpRequestErrorType;

/** `GET deposit/{txHash}`. */
export function getDeposit(transport: PerpTransport, parameters: GetDepositParameters): Promise<GetDepositReturnType> {
  return transport.send('GET', `deposit/${encodeURIComponent(parameters.txHash)}`, { idempotent: true });
}
