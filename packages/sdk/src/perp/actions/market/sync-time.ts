import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import { getServerTime } from './get-server-time.ts';

export type SyncTimeReturnType = number;
export type SyncTimeErrorType = PerpRequestErrorType;

/**
 * Measures the server's clock with `GET time` and uses the offset for every X-Api-Ts from now on
 * (the server refuses timestamps 45 s away from its clock). Answers the offset in ms.
 */
export async function syncTime(transport: PerpTransport): Promise<SyncTimeReturnType> {
  const before = transport.localNow();
  const { serverTime } = await getServerTime(transport);
  const after = transport.localNow();
  // The request's middle is the best estimate of when the server read its clock.
  transport.setClockOffset(Math.round(serverTime - (before + after) / 2));
  return transport.clockOffsetMs;
}
