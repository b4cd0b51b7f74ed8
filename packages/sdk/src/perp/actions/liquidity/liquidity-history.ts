import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { LiquidityHistoryRow, Page, PageQuery } from '../../../perp-types.ts';

export type LiquidityHistoryParameters = PageQuery;
export type LiquidityHistoryReturnType = Page<LiquidityHistoryRow>;
export type LiquidityHistoryErrorType = PerpRequestErrorType;

/** `GET liquidity/history`: the account's additions and removals, newest first. */
export function liquidityHistory<T = LiquidityHistoryReturnType>(transport: PerpTransport, parameters: LiquidityHistoryParameters = {}): Promise<T> {
  return transport.send<T>('GET', 'liquidity/history', { query: parameters, idempotent: true });
}
