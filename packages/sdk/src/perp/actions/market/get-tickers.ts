import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Ticker } from '../../../perp-types.ts';

export type GetTickersParameters = { symbol?: string };
export type GetTickersReturnType = Ticker[];
export type GetTickersErrorType = PerpRequestErrorType;

/** `GET tickers`: 24 h statistics, mark, index and funding of every symbol or one. */
export function getTickers(transport: PerpTransport, parameters: GetTickersParameters = {}): Promise<GetTickersReturnType> {
  return transport.send('GET', 'tickers', { query: parameters, idempotent: true });
}
