import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Page, PageQuery, Trade } from '../../../perp-types.ts';

export type ListTradesParameters = { symbol?: string; orderId?: string } & PageQuery;
export type ListTradesReturnType = Page<Trade>;
export type ListTradesErrorType = PerpRequestErrorType;

/** `GET trades`: the account's fills. */
export function listTrades(transport: PerpTransport, parameters: ListTradesParameters = {}): Promise<ListTradesReturnType> {
  return transport.send('GET', 'trades', { query: parameters, idempotent: true });
}
