import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';

export type GetUnderlyingPriceParameters = { symbol: string };
export type GetUnderlyingPriceReturnType = { symbol: string; underlying: string; exchange: string; price: string; timestamp: number; marketStatus: 'open' | 'closed'; stale?: boolean };
export type GetUnderlyingPriceErrorType = StockRequestErrorType;

/** `GET underlying/{symbol}/price`: the underlying share's price. */
export function getUnderlyingPrice<T = GetUnderlyingPriceReturnType>(transport: StockTransport, parameters: GetUnderlyingPriceParameters): Promise<T> {
  return transport.call<T>('GET', `/api/v1/underlying/${seg(parameters.symbol)}/price`);
}
