/**
 * Trigger orders firing (docs/perp-engine.md "Trigger orders"). MARK triggers fire in the setMarkPrice
 * command, against the mark it sets (so never on a stale mark); LAST triggers fire at the end of any
 * command, against the instrument's last trade price then, and only while the mark is fresh, since
 * what they enter is bounded by the band around it. An order fires once: it leaves the trigger book,
 * its reserve is released, and it enters the book under its own id as the LIMIT or MARKET order it
 * carries, through the same plan and admission as a new order. What could not enter then (outside the
 * band, no longer reducing, short of margin, a POST_ONLY that would cross, an IOC with nothing to
 * take) ends EXPIRED with that reason; nothing is left half-done.
 *
 * The other half: every closePosition trigger of a position is cancelled (POSITION_CLOSED) at the end
 * of the command that brought the position to zero, so a take-profit and a stop-loss on one position
 * act as one-cancels-the-other.
 */
import { triggeredType } from '@tokex/contract';
import type { DoneReason, RejectCode, TriggerBy } from '../engine-types.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { executeEntry, isRefusal, planEntry } from '../matching/order-entry.ts';
import { limitOutsideBand, markStale, marketLimit } from '../risk/price-band.ts';
import { EngineOrder, type Instrument } from '../state/entities.ts';
import type { EngineState } from '../state/engine-state.ts';
import { reducibleBy } from '../commands/place-order-command.ts';

const REASON_OF: Partial<Record<RejectCode, DoneReason>> = {
  INSUFFICIENT_MARGIN: 'INSUFFICIENT_MARGIN',
  POST_ONLY_WOULD_CROSS: 'POST_ONLY_WOULD_CROSS',
  FOK_NOT_FILLED: 'IOC_REMAINDER',
  NO_LIQUIDITY: 'IOC_REMAINDER',
};

/** Fires the orders of `inst` watching `by` that `priceTicks` has reached, oldest first. */
export function fireTriggers(s: EngineState, plan: MatchPlan, inst: Instrument, by: TriggerBy, priceTicks: number, ts: number): number {
  const fired = inst.triggers.reached(by, priceTicks);
  for (const o of fired) fireOne(s, plan, o, priceTicks, ts);
  return fired.length;
}

function fireOne(s: EngineState, plan: MatchPlan, o: EngineOrder, firedAt: number, ts: number): void {
  const t = o.trigger!;
  const acct = o.account;
  const pos = o.position;
  const inst = pos.inst;
  // Out of the trigger book with its reserve: what enters is a new order object under the same id.
  s.release(o);
  const type = triggeredType(o.type);
  const side = o.side;
  let lots = o.sizeLots;
  if (o.reduceOnly) {
    const reducible = reducibleBy(pos, side);
    lots = t.closePosition ? Math.max(0, reducible) : Math.min(lots, Math.max(0, reducible));
  }
  const limit = type === 'MARKET' ? marketLimit(inst, side, o.priceTicks === 0 ? undefined : o.priceTicks) : o.priceTicks;
  s.emit({
    type: 'orderTriggered', orderId: o.id, account: acct.address, symbol: inst.spec.symbol, triggerBy: t.by, triggerPriceTicks: t.priceTicks,
    firedAtTicks: firedAt, sizeLots: lots, priceTicks: limit,
  });
  const order = new EngineOrder(o.id, side, limit, lots, acct, pos, o.type, o.timeInForce, lots, o.reduceOnly, o.clientOrderId, o.createdTs);
  let reason: DoneReason | null = null;
  if (lots === 0) reason = 'REDUCE_ONLY';
  else if (type === 'LIMIT' && limitOutsideBand(inst, side, limit)) reason = 'PRICE_BAND';
  else if (type === 'MARKET' && markStale(inst, ts)) reason = 'PRICE_BAND';
  if (reason === null) {
    const ioc = type === 'MARKET' || o.timeInForce === 'IOC' || o.timeInForce === 'FOK';
    const planned = planEntry(plan, { acct, inst, position: pos, side, limit, lots, tif: o.timeInForce, ioc, reduceOnly: o.reduceOnly });
    if (!isRefusal(planned)) {
      executeEntry(s, plan, order, planned);
      return;
    }
    reason = REASON_OF[planned.code] ?? 'INSUFFICIENT_MARGIN';
  }
  s.emitDone(order, 'EXPIRED', reason, lots);
}

/**
 * The end of every accepted command: cancels the closePosition triggers of positions it brought to
 * zero, and fires the LAST triggers its trades reached, until neither has anything left to do (each
 * order fires or is cancelled once, so this ends).
 */
export function settleTriggers(s: EngineState, plan: MatchPlan, ts: number): void {
  for (;;) {
    let acted = false;
    while (s.flattened.length > 0) {
      const p = s.flattened.pop()!;
      if (p.sizeLots !== 0 || p.closeTriggers === 0) continue;
      for (let o = p.account!.ordersHead; o !== null; ) {
        const next = o.accNext;
        if (o.position === p && o.trigger !== null && o.trigger.closePosition && s.triggers.get(o.id) === o) {
          s.finishOrder(o, 'CANCELED', 'POSITION_CLOSED');
          acted = true;
        }
        o = next;
      }
    }
    for (const inst of s.instruments.values()) {
      if (!inst.triggers.watchesLast || inst.lastTradeTicks === 0 || markStale(inst, ts) || inst.markTicks === 0) continue;
      if (fireTriggers(s, plan, inst, 'LAST', inst.lastTradeTicks, ts) > 0) acted = true;
    }
    if (!acted) return;
  }
}

/** Whether settleTriggers has anything to look at (cheap: checked after every command). */
export function triggersPending(s: EngineState): boolean {
  if (s.flattened.length > 0) return true;
  if (s.triggers.size === 0) return false;
  for (const inst of s.instruments.values()) if (inst.triggers.watchesLast) return true;
  return false;
}
