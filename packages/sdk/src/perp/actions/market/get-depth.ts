import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Depth } from '../../../perp-types.ts';

export type GetDepthParameters = { symbol: string; limit?: number };
export type GetDepthReturnType = Depth;
export type GetDepthErrorType = PerpRequestErrorType;

/** `GET depth`: the book of `symbol`, `limit` levels a side. */
export function getDepth(transport: PerpTransport, parameters: GetDepthParameters): Promise<GetDepthReturnType> {
  return transport.send('GET', 'depth', { query: parameters, idempotent: true });
}
