import type { StockTransport } from '../../stock-transport.ts';

export type SyncTimeReturnType = number;
export type SyncTimeErrorType = Error;

/**
 * Measures the server's clock from a `GET config` (whatever its answer: a request refused for its
 * timestamp still carries it) and uses the offset for every x-api-ts from now on. Answers the offset
 * in ms. The envelope's `t` (the server's clock in ms, on every answer) is read first; a server
 * without it is measured by its `Date` header, to the second, well inside the 45 s window.
 */
export async function syncTime(transport: StockTransport): Promise<SyncTimeReturnType> {
  const before = transport.localNow();
  const { envelope, serverDate } = await transport.exchange('GET', '/api/v1/config');
  const after = transport.localNow();
  const middle = (before + after) / 2;
  if (typeof envelope.t === 'number' && Number.isFinite(envelope.t)) {
    transport.setClockOffset(Math.round(envelope.t - middle));
  } else {
    if (serverDate === undefined) throw new Error('the stock API answered without `t` or a Date header');
    // Date is truncated to the second: its middle is the best estimate.
    transport.setClockOffset(Math.round(serverDate + 500 - middle));
  }
  return transport.clockOffsetMs;
}
