/**
 * An order entering the book as a taker, in two phases shared by every way an order gets there: a
 * new order (placeOrder), a trigger order that fired (triggers/fire-triggers.ts) and an amended order
 * that lost its place (amendOrder). `planEntry` decides everything and changes nothing, so each
 * caller turns a refusal into its own answer (a Rejected, or a done event for a fired trigger);
 * `executeEntry` then applies the plan with the caller's order object as the taker.
 */
import { OrderBook, type Side } from '../book/order-book.ts';
import type { OrderOutcome, RejectCode, TimeInForce, TradeEvent } from '../engine-types.ts';
import { admits, postTradeFree } from '../risk/admission.ts';
import { reservePerLot } from '../risk/margin.ts';
import { imrFor } from '../risk/margin-rates.ts';
import type { Account, EngineOrder, Instrument, Position } from '../state/entities.ts';
import type { EngineState } from '../state/engine-state.ts';
import { executeFill } from './fill.ts';
import type { MatchPlan } from './match-plan.ts';

export interface Entry {
  acct: Account;
  inst: Instrument;
  /** The account's position on the instrument, if it has one yet. */
  position: Position | null;
  side: Side;
  /** The worst price it may trade at (a market order's: clamped to the band). */
  limit: number;
  /** Lots to trade (a reduce-only order already capped to the position). */
  lots: number;
  tif: TimeInForce;
  /** Market, IOC or FOK: nothing rests. */
  ioc: boolean;
  reduceOnly: boolean;
  /** Reserve the account holds already for this order (an amendment's old remainder): freed by the entry. */
  releasedReserve?: bigint;
}

export interface PlannedEntry {
  remainingAfter: number;
  filled: number;
  rests: boolean;
  perLot: bigint;
  stp: boolean;
}

export interface EntryRefusal {
  code: RejectCode;
  message: string;
}

/** Plans the entry; on a refusal the plan is reset and nothing changed. */
export function planEntry(plan: MatchPlan, e: Entry): PlannedEntry | EntryRefusal {
  const { inst, acct, side, limit, lots, tif } = e;
  if (tif === 'POST_ONLY') {
    const best = inst.book.oppositeOf(side).best();
    if (best !== undefined && OrderBook.crosses(side, limit, best.priceTicks)) {
      return { code: 'POST_ONLY_WOULD_CROSS', message: 'timeInForce: a POST_ONLY order would take liquidity' };
    }
  }
  const remainingAfter = plan.build(inst, acct, side, limit, lots);
  const filled = lots - remainingAfter;
  if (tif === 'FOK' && remainingAfter > 0) {
    plan.reset();
    return { code: 'FOK_NOT_FILLED', message: 'timeInForce: FOK could not be filled in full' };
  }
  if (e.ioc && filled === 0 && !plan.stp) {
    plan.reset();
    return { code: 'NO_LIQUIDITY', message: 'no resting liquidity within the price and the band' };
  }
  const rests = remainingAfter > 0 && !e.ioc && !plan.stp;
  const imr = e.position === null ? imrFor(inst.spec, inst.defaultLeverage) : e.position.imrPpm;
  const perLot = rests ? reservePerLot(inst, side, limit, imr, e.reduceOnly) : 0n;
  const newReserve = perLot * BigInt(remainingAfter) - (e.releasedReserve ?? 0n);
  const post = postTradeFree(plan, acct, inst, e.position, side, newReserve);
  if (!admits(post, acct)) {
    plan.reset();
    return { code: 'INSUFFICIENT_MARGIN', message: `free collateral would be ${post}` };
  }
  return { remainingAfter, filled, rests, perLot, stp: plan.stp };
}

export function isRefusal(p: PlannedEntry | EntryRefusal): p is EntryRefusal {
  return (p as EntryRefusal).code !== undefined;
}

/**
 * Applies a plan with `order` (announced by the caller, not resting) as the taker: its fills, then
 * its end (FILLED, or EXPIRED for an IOC remainder) or its remainder resting with its reserve. The
 * position and balance events follow the fills.
 */
export function executeEntry(s: EngineState, plan: MatchPlan, order: EngineOrder, p: PlannedEntry): { status: OrderOutcome['status']; fills: TradeEvent[] } {
  const acct = order.account;
  const pos = order.position;
  const inst = pos.inst;
  const fills: TradeEvent[] = [];
  const collateralBefore = acct.collateral;
  const feeBefore = s.feeAccount.collateral;
  const n = plan.n;
  for (let i = 0; i < n; i++) {
    const maker = plan.makers[i];
    const q = plan.fillLots[i];
    if (q > 0) fills.push(executeFill(s, inst, order, maker, q, inst.takerFee));
    if (plan.cancel[i]) s.finishOrder(maker, 'EXPIRED', 'REDUCE_ONLY');
  }
  plan.reset();
  if (order.remainingLots !== p.remainingAfter) throw new Error('engine: execution diverged from the plan');

  let status: OrderOutcome['status'];
  if (p.remainingAfter === 0) {
    status = 'FILLED';
    s.emitDone(order, 'FILLED', 'FILLED', 0);
  } else if (!p.rests) {
    status = 'EXPIRED';
    s.emitDone(order, 'EXPIRED', p.stp ? 'SELF_TRADE_PREVENTION' : 'IOC_REMAINDER', p.remainingAfter);
  } else {
    status = order.filledLots > 0 ? 'PARTIALLY_FILLED' : 'NEW';
    order.reservePerLot = p.perLot;
    const reserve = p.perLot * BigInt(p.remainingAfter);
    acct.reserved += reserve;
    inst.book.add(order);
    s.linkOrder(order);
    s.events.push({
      seq: s.nextSeq++, ts: s.cmdTs, commandId: s.cmdId, type: 'orderResting', orderId: order.id, account: acct.address,
      symbol: inst.spec.symbol, side: order.side, priceTicks: order.priceTicks, remainingLots: p.remainingAfter, reserved: reserve,
    });
  }
  if (p.filled > 0) {
    s.emitPosition(pos);
    s.emitBalance(acct, acct.collateral - collateralBefore, 'trade');
    const fees = s.feeAccount.collateral - feeBefore;
    if (fees !== 0n) s.emitBalance(s.feeAccount, fees, 'fee');
  }
  return { status, fills };
}
