import { sendIdempotent, type PerpTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import type { IdempotentCallOptions, LiquidityMove } from '../../../perp-types.ts';

export type RemoveLiquidityParameters = { shares: string } & IdempotentCallOptions;
export type RemoveLiquidityReturnType = LiquidityMove;
export type RemoveLiquidityErrorType = PerpRequestErrorType;

/** `POST liquidity/remove` (TRANSFER): burns `shares` for their value once the lock-up has ended. Idempotent. */
export function removeLiquidity<T = RemoveLiquidityReturnType>(transport: PerpTransport, parameters: RemoveLiquidityParameters): Promise<T> {
  const { shares, ...opts } = parameters;
  return sendIdempotent<T>(transport, 'POST', 'liquidity/remove', { shares }, opts);
}
