import { sendIdempotent, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { IdempotentCallOptions, LiquidityMove } from '../../../perp-types.ts';

export type AddLiquidityParameters = { amount: string } & IdempotentCallOptions;
export type AddLiquidityReturnType = LiquidityMove;
export type AddLiquidityErrorType = PerpRequestErrorType;

/** `POST liquidity/add` (TRANSFER): moves `amount` USD of withdrawable collateral into the pool for shares. Idempotent. */
export function addLiquidity<T = AddLiquidityReturnType>(transport: PerpTransport, parameters: AddLiquidityParameters): Promise<T> {
  const { amount, ...opts } = parameters;
  return sendIdempotent<T>(transport, 'POST', 'liquidity/add', { amount }, opts);
}
