import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';
import type { StockUserInfo } from '@tokex/contract';

export type GetUserParameters = { userId: string };
/** `userId`, `userAddress` (Anchored's), `address`, `oneClick` (`status` enable|disabled, `delegationStatus`, `delegatee`), `boundToKey`, `timestamp`. */
export type GetUserReturnType = StockUserInfo;
export type GetUserErrorType = StockRequestErrorType;

/** `GET users/{userId}`: One Click state and whether the wallet is bound to this key. */
export function getUser<T = GetUserReturnType>(transport: StockTransport, parameters: GetUserParameters): Promise<T> {
  return transport.call<T>('GET', `/api/v1/users/${seg(parameters.userId)}`);
}
