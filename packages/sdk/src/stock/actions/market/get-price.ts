import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { StockQuote } from '../../../stock-types.ts';

export type GetPriceParameters = { symbol: string };
export type GetPriceReturnType = StockQuote;
export type GetPriceErrorType = StockRequestErrorType;

/** `GET prices/{symbol}`: bid, ask, last and market status. */
export function getPrice(transport: StockTransport, parameters: GetPriceParameters): Promise<GetPriceReturnType> {
  return transport.call('GET', `/api/v1/prices/${seg(parameters.symbol)}`);
}
