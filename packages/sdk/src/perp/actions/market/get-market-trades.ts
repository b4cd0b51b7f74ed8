import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { MarketTrade, Page, PageQuery } from '../../../perp-types.ts';

export type GetMarketTradesParameters = { symbol: string } & PageQuery;
export type GetMarketTradesReturnType = Page<MarketTrade>;
export type GetMarketTradesErrorType = PerpRequestErrorType;

/** `GET market-trades`: the public trades of `symbol`, newest first. */
export function getMarketTrades(transport: PerpTransport, parameters: GetMarketTradesParameters): Promise<GetMarketTradesReturnType> {
  return transport.send('GET', 'market-trades', { query: parameters, idempotent: true });
}
