import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';

export type GetServerTimeReturnType = { serverTime: number };
export type GetServerTimeErrorType = PerpRequestErrorType;

/** `GET time` (no signature): the server's clock in ms. */
export function getServerTime(transport: PerpTransport): Promise<GetServerTimeReturnType> {
  return transport.send('GET', 'time', { unsigned: true, idempotent: true });
}
