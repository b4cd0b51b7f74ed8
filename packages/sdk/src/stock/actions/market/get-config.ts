import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';

export type GetConfigReturnType = Record<string, unknown>;
export type GetConfigErrorType = StockRequestErrorType;

/** `GET config`: chain, product, cashier buffers, fees. */
export function getConfig<T = GetConfigReturnType>(transport: StockTransport): Promise<T> {
  return transport.call<T>('GET', '/api/v1/config');
}
