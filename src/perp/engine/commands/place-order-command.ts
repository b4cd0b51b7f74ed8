/**
 * placeOrder: validate → plan → admit → execute (docs/perp-engine.md "Matching"). The plan changes
 * nothing, so every refusal (FOK short, no liquidity, admission) leaves the state as it was.
 */
import { defaultTimeInForce, MAX_CLIENT_ORDER_ID, TIME_IN_FORCE_BY_TYPE, timeInForceAllowed } from '@tokex/contract';
import { OrderBook } from '../book/order-book.ts';
import type { OrderOutcome, PlaceOrderCommand, PlaceOrderResult, TradeEvent } from '../engine-types.ts';
import { executeFill } from '../matching/fill.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { admits, postTradeFree } from '../risk/admission.ts';
import { reservePerLot } from '../risk/margin.ts';
import { imrFor } from '../risk/margin-rates.ts';
import { bandEdges, limitOutsideBand, markStale, marketLimit } from '../risk/price-band.ts';
import { EngineOrder } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { accountOf, checkBase, isRejected, isSafeNonNegInt } from '../state/validate.ts';

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
  if (type !== 'LIMIT' && type !== 'MARKET') return reject('INVALID', 'type: LIMIT or MARKET');
  // The journal's invariant: the API checked the same rule, but a command may come from elsewhere.
  const tif = cmd.timeInForce ?? defaultTimeInForce(type);
  if (!timeInForceAllowed(type, tif)) return reject('INVALID', `timeInForce: a ${type} order is ${TIME_IN_FORCE_BY_TYPE[type].join(', ')}`);
  const reduceOnly = cmd.reduceOnly ?? false;
  if (typeof reduceOnly !== 'boolean') return reject('INVALID', 'reduceOnly: a boolean');
  const size = cmd.sizeLots;
  if (typeof size !== 'number' || !Number.isSafeInteger(size)) return reject('INVALID', 'sizeLots: an integer number of lots');
  if (size < spec.minSizeLots || size > spec.maxSizeLots) {
    return reject('SIZE_OUT_OF_RANGE', `sizeLots: between ${spec.minSizeLots} and ${spec.maxSizeLots} lots`);
  }
  const price = cmd.priceTicks;
  let worst: number | undefined;
  if (price === undefined || price === null) {
    if (type === 'LIMIT') return reject('INVALID', 'priceTicks: required for a LIMIT order');
  } else {
    if (typeof price !== 'number' || !Number.isSafeInteger(price)) return reject('INVALID', 'priceTicks: an integer number of ticks');
    if (price <= 0 || price > spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', `priceTicks: between 1 and ${spec.maxPriceTicks}`);
    if (type === 'LIMIT' && limitOutsideBand(inst, side, price)) {
      const edges = bandEdges(inst)!;
      return reject('PRICE_OUT_OF_RANGE', `priceTicks: ${price} crosses beyond the ${spec.priceBandPpm} ppm band [${edges.low}, ${edges.high}] around the mark ${inst.markTicks}`, {
        priceBand: { side, priceTicks: price, lowTicks: edges.low, highTicks: edges.high, markTicks: inst.markTicks, bandPpm: spec.priceBandPpm },
      });
    }
    worst = price;
  }
  if (cmd.expiresAtMs !== undefined && cmd.expiresAtMs !== null) {
    if (!isSafeNonNegInt(cmd.expiresAtMs)) return reject('INVALID', 'expiresAtMs: milliseconds');
    if (cmd.ts > cmd.expiresAtMs) return reject('ORDER_EXPIRED', 'expiresAtMs: the order has expired');
  }
  let limit: number;
  if (type === 'MARKET') {
    if (markStale(inst, cmd.ts)) return reject('MARK_STALE', `the mark of ${spec.symbol} is older than ${spec.markStaleMs} ms`);
    limit = marketLimit(inst, side, worst);
  } else limit = worst as number;

  const existing = acct.positions.get(spec.symbol);
  const posSize = existing === undefined ? 0 : existing.sizeLots;
  let lots = size;
  if (reduceOnly) {
    // Reduce-only: the position must be on the other side; the size is capped to it.
    const reducible = side === 'BUY' ? -posSize : posSize;
    if (reducible <= 0) return reject('REDUCE_ONLY_WOULD_INCREASE', 'reduceOnly: no position on the other side to reduce');
    if (lots > reducible) lots = reducible;
  }
  const book = inst.book;
  if (tif === 'POST_ONLY') {
    const best = book.oppositeOf(side).best();
    if (best !== undefined && OrderBook.crosses(side, limit, best.priceTicks)) {
      return reject('POST_ONLY_WOULD_CROSS', 'timeInForce: a POST_ONLY order would take liquidity');
    }
  }

  // Plan the match without changing anything.
  const remainingAfter = plan.build(inst, acct, side, limit, lots);
  const filled = lots - remainingAfter;
  if (tif === 'FOK' && remainingAfter > 0) {
    plan.reset();
    return reject('FOK_NOT_FILLED', 'timeInForce: FOK could not be filled in full');
  }
  const ioc = type === 'MARKET' || tif === 'IOC' || tif === 'FOK';
  if (ioc && filled === 0 && !plan.stp) {
    plan.reset();
    return reject('NO_LIQUIDITY', 'no resting liquidity within the price and the band');
  }
  const rests = remainingAfter > 0 && !ioc && !plan.stp;
  const position = existing ?? null;
  const imr = position === null ? imrFor(spec, inst.defaultLeverage) : position.imrPpm;
  const perLot = rests ? reservePerLot(inst, side, limit, imr, reduceOnly) : 0n;
  const newReserve = perLot * BigInt(remainingAfter);

  const post = postTradeFree(plan, acct, inst, position, side, newReserve);
  if (!admits(post, acct)) {
    plan.reset();
    return reject('INSUFFICIENT_MARGIN', `free collateral would be ${post}`);
  }

  // Execute.
  s.begin(cmd);
  const pos = position ?? s.materialisePosition(acct, inst);
  const orderId = s.nextOrderId++;
  const order = new EngineOrder(orderId, side, limit, lots, acct, pos, type, tif, lots, reduceOnly, cid ?? null, cmd.ts);
  s.events.push({
    seq: s.nextSeq++, ts: s.cmdTs, commandId: s.cmdId, type: 'orderAccepted',
    orderId, account: acct.address, symbol: spec.symbol, side, orderType: type, timeInForce: tif,
    priceTicks: price === undefined || price === null ? null : price,
    sizeLots: lots, requestedSizeLots: size, reduceOnly, clientOrderId: cid ?? null,
  });
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
  const stp = plan.stp;
  plan.reset();
  if (order.remainingLots !== remainingAfter) throw new Error('engine: execution diverged from the plan');

  let status: OrderOutcome['status'];
  if (remainingAfter === 0) {
    status = 'FILLED';
    s.emitDone(order, 'FILLED', 'FILLED', 0);
  } else if (!rests) {
    status = 'EXPIRED';
    s.emitDone(order, 'EXPIRED', stp ? 'SELF_TRADE_PREVENTION' : 'IOC_REMAINDER', remainingAfter);
  } else {
    status = filled > 0 ? 'PARTIALLY_FILLED' : 'NEW';
    order.reservePerLot = perLot;
    acct.reserved += newReserve;
    book.add(order);
    s.linkOrder(order);
    s.events.push({
      seq: s.nextSeq++, ts: s.cmdTs, commandId: s.cmdId, type: 'orderResting',
      orderId, account: acct.address, symbol: spec.symbol, side, priceTicks: limit, remainingLots: remainingAfter, reserved: newReserve,
    });
  }
  if (filled > 0) {
    s.emitPosition(pos);
    s.emitBalance(acct, acct.collateral - collateralBefore, 'trade');
    const fees = s.feeAccount.collateral - feeBefore;
    if (fees !== 0n) s.emitBalance(s.feeAccount, fees, 'fee');
  }
  const outcome: OrderOutcome = { orderId, status, sizeLots: lots, filledLots: filled, remainingLots: rests ? remainingAfter : 0 };
  if (cidKey !== null) s.clientOrders.set(cidKey, { ...outcome, account: acct.address, clientOrderId: cid as string });
  return { ok: true, code: 'OK', events: s.end(), order: outcome, fills, duplicate: false };
}
