import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { PerpWithdrawal } from '../../../perp-types.ts';
import { TokexTimeoutError } from '../../../errors.ts';
import { sleep } from '../../../retry-policy.ts';
import { listWithdrawals } from './list-withdrawals.ts';

export type WaitForWithdrawalParameters = { clientWithdrawalId: string; timeoutMs?: number; pollMs?: number; onWait?: (state: string) => void };
export type WaitForWithdrawalReturnType = PerpWithdrawal;
export type WaitForWithdrawalErrorType = PerpRequestErrorType | TokexTimeoutError;

/** Polls `listWithdrawals` until the withdrawal `clientWithdrawalId` is COMPLETED or FAILED (default 60 s). */
export async function waitForWithdrawal(transport: PerpTransport, parameters: WaitForWithdrawalParameters): Promise<WaitForWithdrawalReturnType> {
  const { clientWithdrawalId } = parameters;
  const until = Date.now() + (parameters.timeoutMs ?? 60_000);
  for (;;) {
    const page = await listWithdrawals(transport, { limit: 100 });
    const w = page.rows.find((r) => r.clientWithdrawalId === clientWithdrawalId);
    if (w && (w.status === 'COMPLETED' || w.status === 'FAILED')) return w;
    parameters.onWait?.(w?.status ?? 'not listed yet');
    if (Date.now() > until) throw new TokexTimeoutError(`withdrawal ${clientWithdrawalId} is ${w?.status ?? 'not listed'} after the wait`, w?.status ?? 'not listed yet');
    await sleep(parameters.pollMs ?? 250);
  }
}
