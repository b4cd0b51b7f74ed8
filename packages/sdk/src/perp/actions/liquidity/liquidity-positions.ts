import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { LiquidityPosition } from '../../../perp-types.ts';

export type LiquidityPositionsReturnType = LiquidityPosition;
export type LiquidityPositionsErrorType = PerpRequestErrorType;

/** `GET liquidity/positions`: the account's shares, their value, PnL and lock-up, with the pool's equity and shares. */
export function liquidityPositions<T = LiquidityPositionsReturnType>(transport: PerpTransport): Promise<T> {
  return transport.send<T>('GET', 'liquidity/positions', { idempotent: true });
}
