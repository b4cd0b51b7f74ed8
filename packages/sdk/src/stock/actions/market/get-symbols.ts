import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { StockSymbol } from '../../../stock-types.ts';

export type GetSymbolsReturnType = StockSymbol[];
export type GetSymbolsErrorType = StockRequestErrorType;

/** `GET symbols`. */
export function getSymbols(transport: StockTransport): Promise<GetSymbolsReturnType> {
  return transport.call('GET', '/api/v1/symbols');
}
