import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Kline, KlineIntervalName } from '../../../perp-types.ts';

export type GetKlinesParameters = { symbol: string; interval: KlineIntervalName; type?: string; startTime?: number; endTime?: number; limit?: number };
export type GetKlinesReturnType = Kline[];
export type GetKlinesErrorType = PerpRequestErrorType;

/** `GET klines`: candles of `symbol` (`type` trade, mark or index as the API documents). */
export function getKlines(transport: PerpTransport, parameters: GetKlinesParameters): Promise<GetKlinesReturnType> {
  return transport.send('GET', 'klines', { query: parameters, idempotent: true });
}
