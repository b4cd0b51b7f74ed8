import type { StockTransport } from '../../stock-transport.ts';

export type SyncTimeReturnType = number;
export type SyncTimeErrorType = Error;

/**
 * Measures the server's clock from the `Date` header of a `GET config` (whatever its answer: a
 * request refused for its timestamp still carries the header) and uses the offset for every
 * x-api-ts from now on. Second precision, well inside the 45 s window. Answers the offset in ms.
 */
export async function syncTime(transport: StockTransport): Promise<SyncTimeReturnType> {
  const before = transport.localNow();
  const { serverDate } = await transport.exchange('GET', '/api/v1/config');
  const after = transport.localNow();
  if (serverDate === undefined) throw new Error('the stock API answered without a Date header');
  // Date is truncated to the second: its middle is the best estimate.
  transport.setClockOffset(Math.round(serverDate + 500 - (before + after) / 2));
  return transport.clockOffsetMs;
}
