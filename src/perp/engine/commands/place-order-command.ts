/**
 * placeOrder: validate → plan → admit → execute (docs/perp-engine.md "Matching"). The plan changes
 * nothing, so every refusal (FOK short, no liquidity, admission) leaves the state as it was. A stop or
 * take-profit order is validated the same way and then waits in its instrument's trigger book
 * (docs/perp-engine.md "Trigger orders") until triggers/fire-triggers.ts enters it.
 */
import { defaultTimeInForce, isTriggerType, MAX_CLIENT_ORDER_ID, ORDER_TYPES, TIME_IN_FORCE_BY_TYPE, timeInForceAllowed, triggeredType, triggersOnRise, type TriggerOrderType } from '@tokex/contract';
import type { OrderOutcome, PlaceOrderCommand, PlaceOrderResult, Rejected } from '../engine-types.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { executeEntry, isRefusal, planEntry } from '../matching/order-entry.ts';
import { admits } from '../risk/admission.ts';
import { freeCollateral, reservePerLot } from '../risk/margin.ts';
import { imrFor } from '../risk/margin-rates.ts';
import { bandEdges, bandPpmOf, limitOutsideBand, markStale, marketLimit } from '../risk/price-band.ts';
import { EngineOrder, type Account, type Instrument, type Position } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { accountOf, checkBase, isRejected, isSafeNonNegInt, isSafePosInt } from '../state/validate.ts';

export function placeOrderCommand(s: EngineState, plan: MatchPlan, cmd: PlaceOrderCommand): PlaceOrderResult {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct;
  if (acct.system) return reject('ACCOUNT_RESERVED', 'account: the fee account and the insurance fund do not trade');

  const cid = cmd.clientOrderId;
  let cidKey: string | null = null;
  if (cid !== undefined && cid !== null) {
    if (typeof cid !== 'string' || cid.length === 0 || cid.length > MAX_CLIENT_ORDER_ID) {
      return reject('INVALID', `clientOrderId: a string of 1..${MAX_CLIENT_ORDER_ID} characters`);
    }
    cidKey = acct.address + '\n' + cid;
    const first = s.clientOrders.get(cidKey);
    if (first !== undefined) {
      return {
        ok: true, code: 'OK', events: [], fills: [], duplicate: true,
        order: { orderId: first.orderId, status: first.status, sizeLots: first.sizeLots, filledLots: first.filledLots, remainingLots: first.remainingLots },
      };
    }
  }

  const inst = typeof cmd.symbol === 'string' ? s.instruments.get(cmd.symbol) : undefined;
  if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(cmd.symbol)}`);
  const spec = inst.spec;
  const side = cmd.side;
  if (side !== 'BUY' && side !== 'SELL') return reject('INVALID', 'side: BUY or SELL');
  const type = cmd.type;
  if (!(ORDER_TYPES as readonly string[]).includes(type)) return reject('INVALID', `type: one of ${ORDER_TYPES.join(', ')}`);
  // The journal's invariant: the API checked the same rule, but a command may come from elsewhere.
  const tif = cmd.timeInForce ?? defaultTimeInForce(type);
  if (!timeInForceAllowed(type, tif)) return reject('INVALID', `timeInForce: a ${type} order is ${TIME_IN_FORCE_BY_TYPE[type].join(', ')}`);
  const reduceOnly = cmd.reduceOnly ?? false;
  if (typeof reduceOnly !== 'boolean') return reject('INVALID', 'reduceOnly: a boolean');
  const trigger = isTriggerType(type);
  const closePosition = cmd.closePosition ?? false;
  if (typeof closePosition !== 'boolean') return reject('INVALID', 'closePosition: a boolean');
  if (closePosition && !trigger) return reject('INVALID', 'closePosition: only a trigger order closes the position');
  const size = closePosition ? 0 : cmd.sizeLots;
  if (!closePosition) {
    if (typeof size !== 'number' || !Number.isSafeInteger(size)) return reject('INVALID', 'sizeLots: an integer number of lots');
    if (size < spec.minSizeLots || size > spec.maxSizeLots) {
      return reject('SIZE_OUT_OF_RANGE', `sizeLots: between ${spec.minSizeLots} and ${spec.maxSizeLots} lots`);
    }
  }
  const price = cmd.priceTicks;
  const limitType = triggeredType(type) === 'LIMIT';
  let worst: number | undefined;
  if (price === undefined || price === null) {
    if (limitType) return reject('INVALID', `priceTicks: required for a ${type} order`);
  } else {
    if (typeof price !== 'number' || !Number.isSafeInteger(price)) return reject('INVALID', 'priceTicks: an integer number of ticks');
    if (price <= 0 || price > spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', `priceTicks: between 1 and ${spec.maxPriceTicks}`);
    // A trigger's limit is checked against the band when it fires, around the mark of that moment.
    if (type === 'LIMIT' && limitOutsideBand(inst, side, price)) {
      const edges = bandEdges(inst)!;
      return reject('PRICE_OUT_OF_RANGE', `priceTicks: ${price} crosses beyond the ${bandPpmOf(inst)} ppm band [${edges.low}, ${edges.high}] around the mark ${inst.markTicks}`, {
        priceBand: { side, priceTicks: price, lowTicks: edges.low, highTicks: edges.high, markTicks: inst.markTicks, bandPpm: bandPpmOf(inst) },
      });
    }
    worst = price;
  }
  if (cmd.expiresAtMs !== undefined && cmd.expiresAtMs !== null) {
    if (!isSafeNonNegInt(cmd.expiresAtMs)) return reject('INVALID', 'expiresAtMs: milliseconds');
    if (cmd.ts > cmd.expiresAtMs) return reject('ORDER_EXPIRED', 'expiresAtMs: the order has expired');
  }
  if (trigger) return placeTrigger(s, cmd, acct, inst, type as TriggerOrderType, size, worst, tif, reduceOnly, closePosition, cidKey);
  if (cmd.triggerPriceTicks !== undefined && cmd.triggerPriceTicks !== null) return reject('INVALID', `triggerPriceTicks: not for a ${type} order`);

  let limit: number;
  if (type === 'MARKET') {
    if (markStale(inst, cmd.ts)) return reject('MARK_STALE', `the mark of ${spec.symbol} is older than ${spec.markStaleMs} ms`);
    limit = marketLimit(inst, side, worst);
  } else limit = worst as number;

  const existing = acct.positions.get(spec.symbol) ?? null;
  let lots = size;
  if (reduceOnly) {
    // Reduce-only: the position must be on the other side; the size is capped to it.
    const reducible = reducibleBy(existing, side);
    if (reducible <= 0) return reject('REDUCE_ONLY_WOULD_INCREASE', 'reduceOnly: no position on the other side to reduce');
    if (lots > reducible) lots = reducible;
  }
  const planned = planEntry(plan, { acct, inst, position: existing, side, limit, lots, tif, ioc: type === 'MARKET' || tif === 'IOC' || tif === 'FOK', reduceOnly });
  if (isRefusal(planned)) return reject(planned.code, planned.message);

  s.begin(cmd);
  const pos = existing ?? s.materialisePosition(acct, inst);
  const orderId = s.nextOrderId++;
  const order = new EngineOrder(orderId, side, limit, lots, acct, pos, type, tif, lots, reduceOnly, cid ?? null, cmd.ts);
  s.events.push({
    seq: s.nextSeq++, ts: s.cmdTs, commandId: s.cmdId, type: 'orderAccepted',
    orderId, account: acct.address, symbol: spec.symbol, side, orderType: type, timeInForce: tif,
    priceTicks: price === undefined || price === null ? null : price,
    sizeLots: lots, requestedSizeLots: size, reduceOnly, clientOrderId: cid ?? null,
  });
  const { status, fills } = executeEntry(s, plan, order, planned);
  const outcome: OrderOutcome = { orderId, status, sizeLots: lots, filledLots: planned.filled, remainingLots: planned.rests ? planned.remainingAfter : 0 };
  if (cidKey !== null) s.clientOrders.set(cidKey, { ...outcome, account: acct.address, clientOrderId: cid as string });
  return { ok: true, code: 'OK', events: s.end(), order: outcome, fills, duplicate: false };
}

/** Lots a reduce-only order on `side` may trade: the position on the other side (0 when none). */
export function reducibleBy(position: Position | null, side: 'BUY' | 'SELL'): number {
  if (position === null) return 0;
  return side === 'BUY' ? -position.sizeLots : position.sizeLots;
}

/**
 * A stop or take-profit order waits off the book (docs/perp-engine.md "Trigger orders"). Refused when
 * the price it watches has already reached its trigger (it would fire at once: send the order it
 * carries instead), or when that price was never set. One that can open exposure reserves margin as
 * a resting order at its limit price (at its trigger price for the market types); a reduce-only or
 * closePosition one reserves nothing, as it can only shrink a position.
 */
function placeTrigger(
  s: EngineState,
  cmd: PlaceOrderCommand,
  acct: Account,
  inst: Instrument,
  type: TriggerOrderType,
  size: number,
  worst: number | undefined,
  tif: PlaceOrderCommand['timeInForce'] & string,
  reduceOnly: boolean,
  closePosition: boolean,
  cidKey: string | null,
): PlaceOrderResult | Rejected {
  const spec = inst.spec;
  const side = cmd.side;
  const trig = cmd.triggerPriceTicks;
  if (!isSafePosInt(trig) || trig > spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', `triggerPriceTicks: between 1 and ${spec.maxPriceTicks}`);
  const by = cmd.triggerBy ?? 'MARK';
  if (by !== 'MARK' && by !== 'LAST') return reject('INVALID', 'triggerBy: MARK or LAST');
  const watched = by === 'MARK' ? inst.markTicks : inst.lastTradeTicks;
  if (watched === 0) return reject('NO_TRIGGER_PRICE', `triggerBy: ${spec.symbol} has no ${by === 'MARK' ? 'mark' : 'last trade'} price yet`);
  const rise = triggersOnRise(type, side);
  if (rise ? watched >= trig : watched <= trig) {
    return reject('TRIGGER_WOULD_FIRE', `triggerPriceTicks: ${trig} is already reached by the ${by === 'MARK' ? 'mark' : 'last trade'} price ${watched}`);
  }
  const existing = acct.positions.get(spec.symbol) ?? null;
  let lots = size;
  if (closePosition || reduceOnly) {
    const reducible = reducibleBy(existing, side);
    if (reducible <= 0) {
      return existing === null || existing.sizeLots === 0
        ? reject('POSITION_NOT_OPEN', `no open ${spec.symbol} position for a ${closePosition ? 'closePosition' : 'reduce-only'} trigger`)
        : reject('REDUCE_ONLY_WOULD_INCREASE', `side: a ${side} trigger would not reduce the ${spec.symbol} position`);
    }
    if (closePosition) lots = 0;
    else if (lots > reducible) lots = reducible;
  }
  const perLot = triggerReservePerLot(inst, side, worst ?? 0, trig, reduceOnly || closePosition, existing === null ? imrFor(spec, inst.defaultLeverage) : existing.imrPpm);
  if (perLot > 0n) {
    const post = freeCollateral(acct) - perLot * BigInt(lots);
    if (!admits(post, acct)) return reject('INSUFFICIENT_MARGIN', `free collateral would be ${post}`);
  }

  s.begin(cmd);
  const pos = existing ?? s.materialisePosition(acct, inst);
  const orderId = s.nextOrderId++;
  const cid = cmd.clientOrderId ?? null;
  const order = new EngineOrder(orderId, side, worst ?? 0, lots, acct, pos, type, tif, lots, reduceOnly || closePosition, cid, cmd.ts);
  order.trigger = { priceTicks: trig, by, rise, closePosition, armed: true };
  order.reservePerLot = perLot;
  armTrigger(s, order);
  s.emit({
    type: 'orderAccepted', orderId, account: acct.address, symbol: spec.symbol, side, orderType: type, timeInForce: tif,
    priceTicks: worst ?? null, sizeLots: lots, requestedSizeLots: size, reduceOnly: reduceOnly || closePosition, clientOrderId: cid,
    triggerPriceTicks: trig, triggerBy: by, ...(closePosition ? { closePosition: true as const } : {}),
  });
  const outcome: OrderOutcome = { orderId, status: 'UNTRIGGERED', sizeLots: lots, filledLots: 0, remainingLots: lots };
  if (cidKey !== null) s.clientOrders.set(cidKey, { ...outcome, account: acct.address, clientOrderId: cid as string });
  return { ok: true, code: 'OK', events: s.end(), order: outcome, fills: [], duplicate: false };
}

/**
 * The reserve per lot of a waiting trigger order: a resting order's at its limit price (at its
 * trigger price for the market types, `limitTicks` 0), nothing for a reduce-only one.
 */
export function triggerReservePerLot(inst: Instrument, side: 'BUY' | 'SELL', limitTicks: number, triggerTicks: number, reduceOnly: boolean, imrPpm: bigint): bigint {
  return reduceOnly ? 0n : reservePerLot(inst, side, limitTicks === 0 ? triggerTicks : limitTicks, imrPpm, false);
}

/** Puts an armed trigger order in its instrument's trigger book and its account's open orders, with its reserve. */
export function armTrigger(s: EngineState, order: EngineOrder): void {
  s.triggers.set(order.id, order);
  order.position.inst.triggers.add(order);
  s.linkOrder(order);
  order.account.reserved += order.reservePerLot * BigInt(order.remainingLots);
  if (order.trigger!.closePosition) order.position.closeTriggers++;
}
