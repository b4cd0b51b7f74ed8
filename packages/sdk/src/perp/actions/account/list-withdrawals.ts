import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Page, PageQuery, PerpWithdrawal } from '../../../perp-types.ts';

export type ListWithdrawalsParameters = { status?: PerpWithdrawal['status'] } & PageQuery;
export type ListWithdrawalsReturnType = Page<PerpWithdrawal>;
export type ListWithdrawalsErrorType = PerpRequestErrorType;

/** `GET account/withdrawals`: the account's withdrawals, newest first. */
export function listWithdrawals(transport: PerpTransport, parameters: ListWithdrawalsParameters = {}): Promise<ListWithdrawalsReturnType> {
  return transport.send('GET', 'account/withdrawals', { query: parameters, idempotent: true });
}
