/**
 * Price bands (docs/perp-risk.md "Price bands"): no order trades far from the mark. A limit price
 * that crosses beyond the band (a buy above mark·(1 + band), a sell below mark·(1 − band)) is refused;
 * a market order's worst price is clamped to the band edge, so what cannot fill inside it expires. A
 * band needs a mark: before the first one there is none (set a mark before opening trading), and a
 * market order on a mark older than `markStaleMs` waits for a fresh one (MARK_STALE), which after a
 * restart keeps orders from sweeping the recovered book before the price feed has spoken again.
 */
import { MARKET_BUY_LIMIT, MARKET_SELL_LIMIT, type Side } from '../book/order-book.ts';
import { PPM } from '../fixed-point.ts';
import type { Instrument } from '../state/entities.ts';

/** The band's edges in ticks around the mark: [lowest sell, highest buy]; null without a band. */
export function bandEdges(inst: Instrument): { low: number; high: number } | null {
  const band = inst.spec.priceBandPpm;
  if (band === 0 || inst.markTicks === 0) return null;
  const m = BigInt(inst.markTicks);
  const width = (m * BigInt(band)) / PPM;
  return { low: Number(m - width), high: Number(m + width) };
}

/** True when a limit price crosses beyond the band. */
export function limitOutsideBand(inst: Instrument, side: Side, priceTicks: number): boolean {
  const edges = bandEdges(inst);
  if (edges === null) return false;
  return side === 'BUY' ? priceTicks > edges.high : priceTicks < edges.low;
}

/** The worst price a market order may fill at: its own worst price, clamped to the band. */
export function marketLimit(inst: Instrument, side: Side, worst: number | undefined): number {
  const edges = bandEdges(inst);
  if (side === 'BUY') {
    const own = worst ?? MARKET_BUY_LIMIT;
    return edges === null ? own : Math.min(own, edges.high);
  }
  const own = worst ?? MARKET_SELL_LIMIT;
  return edges === null ? own : Math.max(own, edges.low);
}

/** A market order needs a mark no older than the instrument's `markStaleMs` (0 turns the check off). */
export function markStale(inst: Instrument, ts: number): boolean {
  const limit = inst.spec.markStaleMs;
  return limit > 0 && inst.markTicks !== 0 && ts - inst.markTs > limit;
}
