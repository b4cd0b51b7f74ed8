import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PerpWithdrawal } from '../../../perp-types.ts';

export type WithdrawParameters = { amount: string; clientWithdrawalId: string; retries?: number; retryDelayMs?: number };
export type WithdrawReturnType = PerpWithdrawal;
export type WithdrawErrorType = PerpRequestErrorType;

/**
 * `POST account/withdrawals` (a key with TRANSFER): reserves `amount` USD at once and has the
 * margin vault pay it to the key's own wallet. `clientWithdrawalId` names the withdrawal: sending
 * it again answers the same withdrawal (`duplicate: true`), so the call is retried with it after a
 * network failure, a 429, a 503 or a 50001/50002. Poll `listWithdrawals` (or `waitForWithdrawal`) for `COMPLETED`.
 */
export function withdraw(transport: PerpTransport, parameters: WithdrawParameters): Promise<WithdrawReturnType> {
  return transport.send('POST', 'account/withdrawals', {
    body: { amount: parameters.amount, clientWithdrawalId: parameters.clientWithdrawalId },
    idempotent: true,
    retries: parameters.retries,
    retryDelayMs: parameters.retryDelayMs,
  });
}
