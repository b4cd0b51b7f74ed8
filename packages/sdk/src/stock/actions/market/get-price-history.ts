import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';

export type GetPriceHistoryParameters = { symbol: string; interval?: string; startTime?: number; endTime?: number; limit?: number };
export type GetPriceHistoryReturnType = { symbol: string; interval: string; candles: Array<Record<string, unknown>> };
export type GetPriceHistoryErrorType = StockRequestErrorType;

/** `GET prices/{symbol}/history`: candles. */
export function getPriceHistory<T = GetPriceHistoryReturnType>(transport: StockTransport, parameters: GetPriceHistoryParameters): Promise<T> {
  const { symbol, ...query } = parameters;
  return transport.call<T>('GET', `/api/v1/prices/${seg(symbol)}/history`, { query });
}
