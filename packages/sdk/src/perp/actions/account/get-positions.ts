import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Page, Position } from '../../../perp-types.ts';

export type GetPositionsParameters = { symbol?: string; page?: number; limit?: number };
export type GetPositionsReturnType = Page<Position>;
export type GetPositionsErrorType = PerpRequestErrorType;

/** `GET positions`: the account's positions, or the one of `symbol`. */
export function getPositions(transport: PerpTransport, parameters: GetPositionsParameters = {}): Promise<GetPositionsReturnType> {
  return transport.send('GET', 'positions', { query: parameters, idempotent: true });
}
