/**
 * amendOrder (docs/perp-engine.md "Amend"): a new price and/or total size for an order resting on the
 * book, under the same id. Priority follows what exchanges do (Binance's modify, CME's rule): a
 * smaller size at the same price keeps the order's place in the queue, since nobody behind it loses
 * anything; a new price or a larger size re-queues it at the back of its (new) level, as a new order
 * would be, and a new price that crosses the book first trades as a taker, through the same plan and
 * admission as a new order (a POST_ONLY one is refused instead). An untriggered trigger order is not
 * amended (cancel it and place another): its trigger is part of what its owner signed.
 */
import { OrderBook } from '../book/order-book.ts';
import type { AmendOrderCommand, AmendOrderResult, OrderOutcome } from '../engine-types.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { executeEntry, isRefusal, planEntry } from '../matching/order-entry.ts';
import { bandEdges, bandPpmOf, limitOutsideBand } from '../risk/price-band.ts';
import { EngineOrder } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { accountOf, checkBase, isRejected, isSafeNonNegInt, isSafePosInt } from '../state/validate.ts';
import { reducibleBy } from './place-order-command.ts';

export function amendOrderCommand(s: EngineState, plan: MatchPlan, cmd: AmendOrderCommand): AmendOrderResult {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const found = accountOf(s, cmd.account);
  if (isRejected(found)) return found.code === 'UNKNOWN_ACCOUNT' ? reject('ORDER_NOT_FOUND', 'orderId: no such order for this account') : found;
  const acct = found;
  const id = cmd.orderId;
  if (!isSafePosInt(id)) return reject('INVALID', 'orderId: a positive integer');
  const waiting = s.triggers.get(id);
  if (waiting !== undefined && waiting.account === acct) {
    return reject('ORDER_NOT_AMENDABLE', 'orderId: a trigger order that has not fired is not amended; cancel it and place another');
  }
  const o = s.orders.get(id);
  if (o === undefined || o.account !== acct) {
    return reject(o === undefined && waiting === undefined && id < s.nextOrderId ? 'ORDER_NOT_OPEN' : 'ORDER_NOT_FOUND', 'orderId: no such open order for this account');
  }
  if (cmd.expiresAtMs !== undefined && cmd.expiresAtMs !== null) {
    if (!isSafeNonNegInt(cmd.expiresAtMs)) return reject('INVALID', 'expiresAtMs: milliseconds');
    if (cmd.ts > cmd.expiresAtMs) return reject('ORDER_EXPIRED', 'expiresAtMs: the amendment has expired');
  }
  const inst = o.position.inst;
  const spec = inst.spec;
  const price = cmd.priceTicks ?? o.priceTicks;
  const size = cmd.sizeLots ?? o.sizeLots;
  if (!isSafePosInt(price)) return reject('INVALID', 'priceTicks: an integer number of ticks');
  if (price > spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', `priceTicks: between 1 and ${spec.maxPriceTicks}`);
  if (!isSafePosInt(size)) return reject('INVALID', 'sizeLots: an integer number of lots');
  if (size < spec.minSizeLots || size > spec.maxSizeLots) return reject('SIZE_OUT_OF_RANGE', `sizeLots: between ${spec.minSizeLots} and ${spec.maxSizeLots} lots`);
  if (size <= o.filledLots) return reject('ORDER_NOT_AMENDABLE', `sizeLots: must be above the ${o.filledLots} lots already filled (cancel the order instead)`);
  if (price === o.priceTicks && size === o.sizeLots) return reject('ORDER_NOT_AMENDABLE', 'nothing to change: the price and size are the order\'s own');
  const side = o.side;
  if (price !== o.priceTicks && limitOutsideBand(inst, side, price)) {
    const edges = bandEdges(inst)!;
    return reject('PRICE_OUT_OF_RANGE', `priceTicks: ${price} crosses beyond the ${bandPpmOf(inst)} ppm band [${edges.low}, ${edges.high}] around the mark ${inst.markTicks}`, {
      priceBand: { side, priceTicks: price, lowTicks: edges.low, highTicks: edges.high, markTicks: inst.markTicks, bandPpm: bandPpmOf(inst) },
    });
  }
  const remaining = size - o.filledLots;
  if (o.reduceOnly && remaining > o.remainingLots && remaining > reducibleBy(o.position, side)) {
    return reject('REDUCE_ONLY_WOULD_INCREASE', 'sizeLots: a reduce-only order may not outgrow the position');
  }

  if (price === o.priceTicks && remaining < o.remainingLots) {
    // Smaller at the same price: in place, keeping its priority; only its reserve shrinks.
    s.begin(cmd);
    const cut = o.remainingLots - remaining;
    inst.book.reduce(o, cut);
    o.sizeLots = size;
    acct.reserved -= o.reservePerLot * BigInt(cut);
    s.emit({ type: 'orderAmended', orderId: id, account: acct.address, symbol: spec.symbol, side, priceTicks: price, sizeLots: size, remainingLots: remaining, keptPriority: true });
    s.emit({ type: 'orderResting', orderId: id, account: acct.address, symbol: spec.symbol, side, priceTicks: price, remainingLots: remaining, reserved: o.reservePerLot * BigInt(remaining) });
    const order: OrderOutcome = { orderId: id, status: o.filledLots > 0 ? 'PARTIALLY_FILLED' : 'NEW', sizeLots: size, filledLots: o.filledLots, remainingLots: remaining };
    return { ok: true, code: 'OK', events: s.end(), order, fills: [] };
  }

  // Re-queued: planned as a new order would be, with the old remainder's reserve freed.
  if (o.timeInForce === 'POST_ONLY') {
    const best = inst.book.oppositeOf(side).best();
    if (best !== undefined && OrderBook.crosses(side, price, best.priceTicks)) return reject('POST_ONLY_WOULD_CROSS', 'priceTicks: the POST_ONLY order would take liquidity');
  }
  const oldReserve = o.reservePerLot * BigInt(o.remainingLots);
  const planned = planEntry(plan, { acct, inst, position: o.position, side, limit: price, lots: remaining, tif: o.timeInForce, ioc: false, reduceOnly: o.reduceOnly, releasedReserve: oldReserve });
  if (isRefusal(planned)) return reject(planned.code, planned.message);

  s.begin(cmd);
  s.release(o);
  const order = new EngineOrder(id, side, price, remaining, acct, o.position, o.type, o.timeInForce, size, o.reduceOnly, o.clientOrderId, o.createdTs);
  order.filledLots = o.filledLots;
  s.emit({ type: 'orderAmended', orderId: id, account: acct.address, symbol: spec.symbol, side, priceTicks: price, sizeLots: size, remainingLots: remaining, keptPriority: false });
  const { status, fills } = executeEntry(s, plan, order, planned);
  const outcome: OrderOutcome = { orderId: id, status, sizeLots: size, filledLots: order.filledLots, remainingLots: planned.rests ? planned.remainingAfter : 0 };
  return { ok: true, code: 'OK', events: s.end(), order: outcome, fills };
}
