/**
 * Admission (docs/perp-engine.md "Admission"): an order is admitted when the account's free
 * collateral after it is ≥ 0, or not lower than before, so an account under water may reduce risk
 * but never add it. "After" is exact: the planned fills are applied to a scratch copy of the taker's
 * position with the execution's own arithmetic, and the reserve of a resting remainder is added.
 */
import type { Side } from '../book/order-book.ts';
import { ceilDiv, PPM } from '../fixed-point.ts';
import { applyFill, fillOut } from '../matching/fill.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { Position, type Account, type Instrument } from '../state/entities.ts';
import { contribution, freeCollateral } from './margin.ts';
import { imrFor } from './margin-rates.ts';

/** The taker's free collateral after the planned fills and with `newReserve` added. */
export function postTradeFree(plan: MatchPlan, acct: Account, inst: Instrument, position: Position | null, side: Side, newReserve: bigint): bigint {
  if (!plan.hasFill()) return freeCollateral(acct) - newReserve;
  const sim = (inst.scratch ??= new Position(null, inst, inst.defaultLeverage));
  if (position === null) {
    sim.sizeLots = 0;
    sim.entryNotional = 0n;
    sim.isolatedMargin = 0n;
    sim.mode = 'cross';
    sim.imrPpm = imrFor(inst.spec, inst.defaultLeverage);
  } else {
    sim.sizeLots = position.sizeLots;
    sim.entryNotional = position.entryNotional;
    sim.isolatedMargin = position.isolatedMargin;
    sim.mode = position.mode;
    sim.imrPpm = position.imrPpm;
  }
  const buy = side === 'BUY';
  let delta = 0n;
  let lastPrice = 0;
  const n = plan.n;
  for (let i = 0; i < n; i++) {
    const q = plan.fillLots[i];
    if (q === 0) continue;
    const price = plan.makers[i].priceTicks;
    const notional = BigInt(q) * BigInt(price) * inst.unit;
    const realised = applyFill(sim, buy, q, notional);
    delta += realised - fillOut.bucketIn - ceilDiv(notional * inst.takerFee, PPM);
    lastPrice = price;
  }
  let f = acct.collateral + delta - acct.reserved - newReserve;
  const list = acct.positionList;
  for (let i = 0; i < list.length; i++) {
    const pos = list[i];
    if (pos !== position) f += contribution(pos, pos.inst.valuationTicks);
  }
  // Without a mark the trade itself moves the valuation price.
  f += contribution(sim, inst.markTicks !== 0 ? inst.markTicks : lastPrice);
  return f;
}

/** Admitted: free collateral after ≥ 0, or not below what it was. */
export function admits(post: bigint, acct: Account): boolean {
  return post >= 0n || post >= freeCollateral(acct);
}
