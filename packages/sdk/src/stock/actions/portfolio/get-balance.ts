import type { StockBalance } from '@tokex/contract';
import { seg, type StockTransport, type StockRequestErrorType } from '../../stock-transport.ts';

export type GetBalanceParameters = { userId: string; spenderAddress?: string };
/** `musdBalance`/`mUsdBalance` (strings), `mUsdDetail` (tokex's available, locked, total), `tokenBalances` (stocks and cash tokens), ... */
export type GetBalanceReturnType = StockBalance;
export type GetBalanceErrorType = StockRequestErrorType;

/** `GET users/{userId}/balance` (`spenderAddress`: also the allowances to it). */
export function getBalance<T = GetBalanceReturnType>(transport: StockTransport, parameters: GetBalanceParameters): Promise<T> {
  const { userId, ...query } = parameters;
  return transport.call<T>('GET', `/api/v1/users/${seg(userId)}/balance`, { query });
}
