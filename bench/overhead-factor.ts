/**
 * Issue 40's overhead factor: what the server spends on an accepted signed order against the floor
 * no venue can remove, native signer recovery alone and a bare Fastify route's server CPU for the
 * request that carried it:
 *
 *   factor = server CPU per accepted order ÷ (recovery alone per operation + bare route CPU per request ÷ orders a request carries)
 *
 * A WebSocket frame carries one order, so its floor is recovery plus a whole bare request (the
 * issue's definition; the stream pays no HTTP, which makes this the generous reading for it).
 * All inputs come from the same run of bench/perp-orders-bench.ts.
 */
export interface OverheadFactor {
  /** µs of server CPU per accepted order. */
  cpuUsPerOrder: number;
  /** µs of native recovery alone, one operation (1e6 ÷ recoveries a second). */
  recoveryUs: number;
  /** µs of bare-route server CPU that one order's share of a request costs. */
  floorUsPerOrder: number;
  /** cpuUsPerOrder ÷ (recoveryUs + floorUsPerOrder). */
  factor: number;
}

export function overheadFactor(o: { cpuUsPerOrder: number; nativeRecoverPerSec: number; floorCpuUsPerRequest: number; ordersPerRequest: number }): OverheadFactor {
  if (!(o.nativeRecoverPerSec > 0) || !(o.ordersPerRequest >= 1) || !(o.floorCpuUsPerRequest >= 0) || !(o.cpuUsPerOrder >= 0)) {
    throw new RangeError(`overhead factor: bad inputs ${JSON.stringify(o)}`);
  }
  const recoveryUs = 1e6 / o.nativeRecoverPerSec;
  const floorUsPerOrder = o.floorCpuUsPerRequest / o.ordersPerRequest;
  return { cpuUsPerOrder: o.cpuUsPerOrder, recoveryUs, floorUsPerOrder, factor: o.cpuUsPerOrder / (recoveryUs + floorUsPerOrder) };
}
