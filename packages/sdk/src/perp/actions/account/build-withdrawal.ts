import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { BuildWithdrawalBody, BuiltWithdrawal } from '../../../perp-types.ts';

export type BuildWithdrawalParameters = BuildWithdrawalBody & { retries?: number; retryDelayMs?: number };
export type BuildWithdrawalReturnType = BuiltWithdrawal;
export type BuildWithdrawalErrorType = PerpRequestErrorType;

/**
 * `POST account/withdrawals/build` (a key with TRANSFER): the EIP-712 `Withdrawal` the wallet signs
 * for `amount` under `clientWithdrawalId` (recipient the wallet itself, amount in USDC units, the
 * vault's withdrawal id, `deadline` unix seconds: default a day ahead, 300 s to 7 days). Nothing
 * is stored or reserved, so it is resent after a network failure, a 429 or a 503.
 */
export function buildWithdrawal(transport: PerpTransport, parameters: BuildWithdrawalParameters): Promise<BuildWithdrawalReturnType> {
  const { retries, retryDelayMs, ...input } = parameters;
  const body: BuildWithdrawalBody = { amount: input.amount, clientWithdrawalId: input.clientWithdrawalId, ...(input.deadline !== undefined ? { deadline: input.deadline } : {}) };
  return transport.send('POST', 'account/withdrawals/build', { body, idempotent: true, retries, retryDelayMs });
}
