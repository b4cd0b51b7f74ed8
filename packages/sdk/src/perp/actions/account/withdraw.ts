import type { PerpTransport } from '../../perp-transport.ts';
import type { PerpWithdrawal } from '../../../perp-types.ts';
import { signWithdrawal, type SignWithdrawalErrorType, type SignWithdrawalParameters } from './sign-withdrawal.ts';
import { submitWithdrawal } from './submit-withdrawal.ts';

export type WithdrawParameters = SignWithdrawalParameters;
export type WithdrawReturnType = PerpWithdrawal;
export type WithdrawErrorType = SignWithdrawalErrorType;

/**
 * Withdraws `amount` USD of collateral to the wallet (a key with TRANSFER): `account/withdrawals/build`,
 * the wallet signs the EIP-712 Withdrawal (`signWithdrawal`: never a One-Click session key), then
 * `POST account/withdrawals` reserves it and the margin vault pays it against that signature.
 * `clientWithdrawalId` names the withdrawal: the one signed body is resent after a network
 * failure, a 429, a 503 or a 50001/50002 and answered as the same withdrawal (`duplicate: true`);
 * calling again with the same id later answers it too. Poll `listWithdrawals` (or
 * `waitForWithdrawal`) for `COMPLETED`.
 */
export async function withdraw(transport: PerpTransport, parameters: WithdrawParameters): Promise<WithdrawReturnType> {
  const signed = await signWithdrawal(transport, parameters);
  return submitWithdrawal(transport, { ...signed, retries: parameters.retries, retryDelayMs: parameters.retryDelayMs });
}
