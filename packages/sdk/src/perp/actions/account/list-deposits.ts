import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { AccountDeposit, Page, PageQuery } from '../../../perp-types.ts';

export type ListDepositsParameters = PageQuery;
export type ListDepositsReturnType = Page<AccountDeposit>;
export type ListDepositsErrorType = PerpRequestErrorType;

/** `GET account/deposits`: vault deposits as the indexer saw them, newest first. */
export function listDeposits(transport: PerpTransport, parameters: ListDepositsParameters = {}): Promise<ListDepositsReturnType> {
  return transport.send('GET', 'account/deposits', { query: parameters, idempotent: true });
}
