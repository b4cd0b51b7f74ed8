import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { FundingRate } from '../../../perp-types.ts';

export type GetFundingRatesParameters = { symbol: string; startTime?: number; endTime?: number; limit?: number };
export type GetFundingRatesReturnType = FundingRate[];
export type GetFundingRatesErrorType = PerpRequestErrorType;

/** `GET funding-rates`: the funding history of `symbol`. */
export function getFundingRates(transport: PerpTransport, parameters: GetFundingRatesParameters): Promise<GetFundingRatesReturnType> {
  return transport.send('GET', 'funding-rates', { query: parameters, idempotent: true });
}
