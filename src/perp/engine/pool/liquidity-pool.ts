/**
 * The liquidity pool (docs/perp-risk.md "Liquidity pool"): an engine account that quotes like a
 * market maker and backstops liquidations, owned by share holders. Shares are minted and burned at
 * pool equity ÷ shares, every rounding in the pool's favour, so a share's value never falls by an
 * addition or a removal.
 */
import type { Side } from '../book/order-book.ts';
import { applyFill, fillOut } from '../matching/fill.ts';
import { contribution, valuation } from '../risk/margin.ts';
import { imrFor } from '../risk/margin-rates.ts';
import { Position, type Instrument } from '../state/entities.ts';
import type { EngineState } from '../state/engine-state.ts';

/** Pool equity at the mark: collateral + isolated margin + unrealised PnL of its positions. */
export function poolEquity(s: EngineState): bigint {
  const pool = s.pool;
  let e = pool.collateral;
  for (const p of pool.positionList) {
    if (p.sizeLots === 0) continue;
    e += valuation(p).upnl + p.isolatedMargin;
  }
  return e;
}

/** Shares an addition of `amount` mints: amount × shares ÷ equity, rounded down (1:1 into an empty pool). */
export function sharesFor(s: EngineState, amount: bigint): bigint {
  const equity = poolEquity(s);
  if (s.totalShares === 0n || equity <= 0n) return s.totalShares === 0n ? amount : 0n;
  return (amount * s.totalShares) / equity;
}

/** Collateral `shares` are worth: shares × equity ÷ total, rounded down. */
export function valueOf(s: EngineState, shares: bigint): bigint {
  if (s.totalShares === 0n) return 0n;
  const equity = poolEquity(s);
  return equity <= 0n ? 0n : (shares * equity) / s.totalShares;
}

/**
 * Whether the pool can take `lots` of a position on `side` (the pool's side) at `priceTicks` and keep
 * its free collateral ≥ 0: the takeover is simulated on a scratch copy of its position.
 */
export function poolCanTake(s: EngineState, inst: Instrument, side: Side, lots: number, priceTicks: number): boolean {
  const pool = s.pool;
  const existing = pool.positions.get(inst.spec.symbol) ?? null;
  const sim = new Position(null, inst, inst.defaultLeverage);
  if (existing !== null) {
    sim.sizeLots = existing.sizeLots;
    sim.entryNotional = existing.entryNotional;
    sim.isolatedMargin = existing.isolatedMargin;
    sim.mode = existing.mode;
    sim.imrPpm = existing.imrPpm;
  } else sim.imrPpm = imrFor(inst.spec, inst.defaultLeverage);
  const notional = BigInt(lots) * BigInt(priceTicks) * inst.unit;
  const realised = applyFill(sim, side === 'BUY', lots, notional);
  let f = pool.collateral + realised - fillOut.bucketIn - pool.reserved;
  for (const p of pool.positionList) if (p !== existing) f += contribution(p, p.inst.valuationTicks);
  f += contribution(sim, inst.valuationTicks);
  return f >= 0n;
}
