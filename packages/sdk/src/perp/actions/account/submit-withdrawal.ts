import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PerpWithdrawal, WithdrawBody } from '../../../perp-types.ts';

export type SubmitWithdrawalParameters = WithdrawBody & { retries?: number; retryDelayMs?: number };
export type SubmitWithdrawalReturnType = PerpWithdrawal;
export type SubmitWithdrawalErrorType = PerpRequestErrorType;

/**
 * `POST account/withdrawals` (a key with TRANSFER): the wallet's signed withdrawal
 * (`signWithdrawal`); the engine reserves `amount` at once and the margin vault pays the wallet
 * against that signature. The body is resent as it is after a network failure, a 429, a 503 or a
 * 50001/50002: the same `clientWithdrawalId` answers the same withdrawal (`duplicate: true`).
 */
export function submitWithdrawal(transport: PerpTransport, parameters: SubmitWithdrawalParameters): Promise<SubmitWithdrawalReturnType> {
  // The four fields only: the endpoint refuses any other (a SignedWithdrawal also carries withdrawalId).
  const body: WithdrawBody = { amount: parameters.amount, clientWithdrawalId: parameters.clientWithdrawalId, deadline: parameters.deadline, signature: parameters.signature };
  return transport.send('POST', 'account/withdrawals', { body, idempotent: true, retries: parameters.retries, retryDelayMs: parameters.retryDelayMs });
}
