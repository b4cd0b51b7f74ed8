import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';

export type GetPositionsParameters = { userId: string };
export type GetPositionsReturnType<R = Record<string, unknown>> = R[];
export type GetPositionsErrorType = StockRequestErrorType;

/** `GET users/{userId}/positions`. */
export function getPositions<R = Record<string, unknown>>(transport: StockTransport, parameters: GetPositionsParameters): Promise<GetPositionsReturnType<R>> {
  return transport.call<R[]>('GET', `/api/v1/users/${seg(parameters.userId)}/positions`);
}
