import { publicCall, type PerpPublicTransport, type PerpRequestErrorType } from '../../perp-transport.ts';

export type GetPublicServerTimeReturnType = number;
export type GetPublicServerTimeErrorType = PerpRequestErrorType;

/** `GET time` without a key (one attempt, no retry): the server's clock in ms. */
export async function getPublicServerTime(transport: PerpPublicTransport): Promise<GetPublicServerTimeReturnType> {
  return (await publicCall<{ serverTime: number }>(transport, 'GET', 'time')).serverTime;
}
