import type { StockPriceHistory } from '@tokex/contract';
import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';

/** `startTime` and `endTime` are Unix seconds (as Anchored documents them). */
export type GetPriceHistoryParameters = { symbol: string; interval?: string; startTime?: number; endTime?: number; limit?: number; adjustment?: string };
export type GetPriceHistoryReturnType = StockPriceHistory;
export type GetPriceHistoryErrorType = StockRequestErrorType;

/** The interval asked when none is given: what the API answered by default before it required one. */
export const DEFAULT_HISTORY_INTERVAL = '1m';

/**
 * `GET prices/{symbol}/history`: candles. The API requires `interval` and `endTime`; the SDK sends
 * `1m` and now (Unix seconds, on the server's clock after `syncTime`) when they are left out, so a
 * call that asks only for the latest candles reads them as it always did.
 */
export function getPriceHistory<T = GetPriceHistoryReturnType>(transport: StockTransport, parameters: GetPriceHistoryParameters): Promise<T> {
  const { symbol, ...query } = parameters;
  const full = { ...query, interval: query.interval ?? DEFAULT_HISTORY_INTERVAL, endTime: query.endTime ?? Math.floor(transport.now() / 1000) };
  return transport.call<T>('GET', `/api/v1/prices/${seg(symbol)}/history`, { query: full });
}
