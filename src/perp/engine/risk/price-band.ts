/**
 * Price bands (docs/perp-risk.md "Price bands"): no order trades far from the mark. A limit price
 * that crosses beyond the band (a buy above mark·(1 + band), a sell below mark·(1 − band)) is refused;
 * a market order's worst price is clamped to the band edge, so what cannot fill inside it expires. A
 * band needs a mark: before the first one there is none (set a mark before opening trading), and a
 * market order on a mark older than `markStaleMs` waits for a fresh one (MARK_STALE), which after a
 * restart keeps orders from sweeping the recovered book before the price feed has spoken again.
 *
 * While the underlying's market is closed (a stock perpetual overnight, at the weekend, on a
 * holiday: the mark command says so with `marketOpen: false`), the perpetual trades on against a
 * frozen index and the band is CLOSED_MARKET_BAND_FACTOR times wider (docs/perp-risk.md
 * "Closed-market band"). This is the only place that rule lives: the limit check, the market
 * order clamp and the mark's clamp around the index (pricing/mark-price.ts, through
 * the mark task) all take their width from `effectiveBandPpm`.
 */
import { MARKET_BUY_LIMIT, MARKET_SELL_LIMIT, type Side } from '../book/order-book.ts';
import { PPM } from '../fixed-point.ts';
import type { Instrument } from '../state/entities.ts';

/**
 * How much wider every band is while the underlying's market is closed: ×2, so ±5 % becomes ±10 %.
 * A frozen index cannot follow news that breaks while the exchange is shut, so the perpetual itself
 * has to find the price, and ±5 % would pin it to the last close. Ten per cent covers almost every
 * overnight or weekend gap of a large US stock (earnings moves beyond it happen, and then the band
 * moves with the mark, which follows the book within the widened clamp), while still keeping a
 * single market order from walking a thin overnight book far. Venues that list equity perpetuals
 * widen (or drop) their limits outside regular hours for the same reason.
 */
export const CLOSED_MARKET_BAND_FACTOR = 2;

/** The band width in ppm with the market open or closed (capped below 100 %, so that the low edge stays a price). */
export function effectiveBandPpm(bandPpm: number, marketOpen: boolean): number {
  if (marketOpen || bandPpm === 0) return bandPpm;
  return Math.min(bandPpm * CLOSED_MARKET_BAND_FACTOR, 900_000);
}

/** The width of the instrument's band now, in ppm (0: no band). */
export function bandPpmOf(inst: Instrument): number {
  return effectiveBandPpm(inst.spec.priceBandPpm, !inst.marketClosed);
}

/** The band's edges in ticks around the mark: [lowest sell, highest buy]; null without a band. */
export function bandEdges(inst: Instrument): { low: number; high: number } | null {
  const band = bandPpmOf(inst);
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
