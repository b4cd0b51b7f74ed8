import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PreparedVaultTransaction } from '../../../perp-types.ts';

export type PrepareDepositParameters = { address: string; amount: string };
export type PrepareDepositReturnType = PreparedVaultTransaction;
export type PrepareDepositErrorType = PerpRequestErrorType;

/** `POST deposit/prepare`: the unsigned vault deposit of `amount`. */
export function prepareDeposit(transport: PerpTransport, parameters: PrepareDepositParameters): Promise<PrepareDepositReturnType> {
  return transport.send('POST', 'deposit/prepare', { body: parameters, idempotent: false });
}
