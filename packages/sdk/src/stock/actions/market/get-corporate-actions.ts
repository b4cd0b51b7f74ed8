import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { StockPage } from '../../../stock-types.ts';

export type GetCorporateActionsParameters = { symbol?: string; page?: number; limit?: number };
export type GetCorporateActionsReturnType<R = Record<string, unknown>> = StockPage<R>;
export type GetCorporateActionsErrorType = StockRequestErrorType;

/** `GET corporate-action`. */
export function getCorporateActions<R = Record<string, unknown>>(transport: StockTransport, parameters: GetCorporateActionsParameters = {}): Promise<GetCorporateActionsReturnType<R>> {
  return transport.call('GET', '/api/v1/corporate-action', { query: parameters });
}
