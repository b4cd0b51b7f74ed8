import type { PerpTransport } from '../../perp-transport.ts';
import type { OrderInput, PlacedOrder } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { getPositions } from '../account/get-positions.ts';
import { signOrder, type SignOrderErrorType } from './sign-order.ts';
import { submitClosePosition } from './submit-close-position.ts';

export type ClosePositionParameters = { account: TypedDataSigner; symbol: string; size?: string; worstPrice?: string };
export type ClosePositionReturnType = PlacedOrder;
export type ClosePositionErrorType = SignOrderErrorType;

/**
 * Closes `size` (default: all) of the account's position on `symbol` at market with a signed
 * reduce-only order; `worstPrice` bounds the fills.
 */
export async function closePosition<T = ClosePositionReturnType>(transport: PerpTransport, parameters: ClosePositionParameters): Promise<T> {
  const { account, symbol } = parameters;
  const positions = await getPositions(transport, { symbol });
  const position = positions.rows.find((p) => p.symbol === symbol);
  if (!position || position.side === 'FLAT') throw new Error(`no open ${symbol} position`);
  const order: OrderInput = {
    symbol,
    side: position.side === 'LONG' ? 'SELL' : 'BUY',
    type: 'MARKET',
    size: parameters.size ?? position.size,
    reduceOnly: true,
    ...(parameters.worstPrice !== undefined ? { price: parameters.worstPrice } : {}),
  };
  const { message, signature } = await signOrder(transport, { account, order });
  return submitClosePosition<T>(transport, { message, signature });
}
