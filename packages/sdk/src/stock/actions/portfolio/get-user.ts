import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { OneClickState } from '../../../stock-types.ts';

export type GetUserParameters = { userId: string };
export type GetUserReturnType = { userId: string; address: string; oneClick: OneClickState; boundToKey: boolean; timestamp: number };
export type GetUserErrorType = StockRequestErrorType;

/** `GET users/{userId}`: One Click state and whether the wallet is bound to this key. */
export function getUser<T = GetUserReturnType>(transport: StockTransport, parameters: GetUserParameters): Promise<T> {
  return transport.call<T>('GET', `/api/v1/users/${seg(parameters.userId)}`);
}
