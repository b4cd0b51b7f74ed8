import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { AccountTransaction, Page, PageQuery } from '../../../perp-types.ts';

export type ListTransactionsParameters = { type?: string; symbol?: string } & PageQuery;
export type ListTransactionsReturnType = Page<AccountTransaction>;
export type ListTransactionsErrorType = PerpRequestErrorType;

/** `GET account/transactions`: the account's ledger (`type`, `symbol` filters). */
export function listTransactions(transport: PerpTransport, parameters: ListTransactionsParameters = {}): Promise<ListTransactionsReturnType> {
  return transport.send('GET', 'account/transactions', { query: parameters, idempotent: true });
}
