/**
 * applySplit (docs/perp-risk.md "Stock splits"): a stock split of `ratioTo:ratioFrom` applied to the
 * stock perpetual on that stock, in one command, so that nobody's value changes with the units.
 * With the ratio in lowest terms T:F (10:1 → 10:1, 1:10 → 1:10, 6:4 → 3:2):
 *
 * 1. **Remainders.** A position is rescaled exactly only when its size is a multiple of F lots
 *    (always for a forward N:1 split). The part that is not, |size| mod F old lots, is closed against
 *    the liquidity pool at the mark before the split, like a backstop takeover without a fee: the
 *    perpetual's cash in lieu of a fractional share. At that price both sides' equity is unchanged
 *    to the unit (the entry cost released is the engine's usual, rounded so the realised PnL rounds
 *    down, and the entry cost left keeps the difference). Since every other position then scales
 *    exactly and the sizes of an instrument sum to zero, the pool's scales exactly too.
 * 2. **Positions.** size × T / F, exact; the entry cost (micro-USD) is unchanged, so the entry price
 *    is divided by the ratio exactly and every position's PnL at any post-split price p equals its
 *    PnL at p × T / F before: equity is conserved exactly at the split-adjusted price.
 * 3. **Prices.** Mark, index and last trade × F / T, rounded down to a whole tick (at least 1; at most
 *    maxPriceTicks). Valued at that whole-tick mark, an account's equity therefore reads less than
 *    one tick per lot of its new position away from the exact value (lower for a long, higher for a
 *    short; no money moves, the sum over all accounts is unchanged, and the next index sets the mark).
 * 4. **Open orders** (resting and waiting triggers), in id order: every BUY price (limit and trigger)
 *    × F / T rounded down, every SELL price rounded up, so no order becomes more aggressive than its
 *    exact adjusted price (at most one tick passive), the book cannot cross, and nothing trades
 *    because of the split. Sizes × T / F rounded down to whole lots (filled and remaining alike). An
 *    order whose remainder rounds to zero lots, or whose price leaves 1..maxPriceTicks, is cancelled
 *    (`orderDone`, reason SPLIT). Reserves are recomputed at the new price and mark. The others keep
 *    their ids and their time priority (`orderAmended` with keptPriority).
 * 5. The liquidation triggers of every account on the instrument are re-armed (their prices were
 *    in the old ticks); the engine then checks them as after any command.
 *
 * The action id is remembered on the instrument (snapshotted): a second applySplit with it answers
 * `duplicate: true` and changes nothing, so the worker may resubmit after a restart.
 */
import type { ApplySplitCommand, Rejected, SplitAccepted } from '../engine-types.ts';
import { reservePerLot } from '../risk/margin.ts';
import { transfer } from '../risk/liquidation.ts';
import { EngineOrder, type Instrument, type Position } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { checkBase, instrumentOf, isRejected, isSafePosInt } from '../state/validate.ts';
import { armTrigger, triggerReservePerLot } from './place-order-command.ts';

/** Largest term of a split ratio (the corporate-action file's and the CLI's limit is 999 999). */
export const MAX_SPLIT_RATIO = 1_000_000;
const MAX_ACTION_ID = 128;

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** ⌊x × f / t⌋ (or ⌈…⌉) of a non-negative integer, exact. */
function scaleDown(x: number, f: number, t: number, up: boolean): number {
  const num = BigInt(x) * BigInt(f);
  const den = BigInt(t);
  const q = num / den;
  return Number(up && q * den !== num ? q + 1n : q);
}

/** A price × F / T rounded down, at least 1 (a price that was set stays set), at most `max`. 0 stays 0. */
function scaleReference(ticks: number, f: number, t: number, max: number): number {
  if (ticks === 0) return 0;
  const v = scaleDown(ticks, f, t, false);
  return v < 1 ? 1 : v > max ? max : v;
}

const byAddress = (a: Position, b: Position): number => {
  const x = a.account!.address;
  const y = b.account!.address;
  return x < y ? -1 : x > y ? 1 : 0;
};

export function applySplitCommand(s: EngineState, cmd: ApplySplitCommand): SplitAccepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const inst = instrumentOf(s, cmd.symbol);
  if (isRejected(inst)) return inst;
  const { actionId, ratioTo, ratioFrom } = cmd;
  if (typeof actionId !== 'string' || actionId.length === 0 || actionId.length > MAX_ACTION_ID) return reject('INVALID', `actionId: a string of 1..${MAX_ACTION_ID} characters`);
  if (!isSafePosInt(ratioTo) || ratioTo > MAX_SPLIT_RATIO) return reject('INVALID', `ratioTo: an integer 1..${MAX_SPLIT_RATIO}`);
  if (!isSafePosInt(ratioFrom) || ratioFrom > MAX_SPLIT_RATIO) return reject('INVALID', `ratioFrom: an integer 1..${MAX_SPLIT_RATIO}`);
  if (ratioTo === ratioFrom) return reject('INVALID', 'ratioTo: must differ from ratioFrom (a split changes the share count)');
  if (inst.splits.has(actionId)) return { ok: true, code: 'OK', events: [], duplicate: true };
  const g = gcd(ratioTo, ratioFrom);
  const T = ratioTo / g;
  const F = ratioFrom / g;
  const max = inst.spec.maxPriceTicks;
  // Positions, in address order so that a restored engine emits exactly what the live one did.
  const positions = [...inst.positions].filter((p) => p.account !== null && p.sizeLots !== 0).sort(byAddress);
  const oldValuation = inst.valuationTicks;

  s.begin(cmd);

  // 1. Remainders below F old lots, closed against the pool at the pre-split mark.
  let remainders = 0;
  if (F > 1 && oldValuation > 0) {
    let poolPos: Position | null = null;
    for (const p of positions) {
      if (p.account === s.pool) continue;
      const held = p.sizeLots < 0 ? -p.sizeLots : p.sizeLots;
      const r = held % F;
      if (r === 0) continue;
      poolPos ??= s.materialisePosition(s.pool, inst);
      transfer(s, p, poolPos, r, oldValuation, 'split');
      remainders++;
    }
    if (poolPos !== null && !positions.includes(poolPos) && poolPos.sizeLots !== 0) {
      positions.push(poolPos);
      positions.sort(byAddress);
    }
  }

  // 2. Reference prices in the new units.
  inst.markTicks = scaleReference(inst.markTicks, F, T, max);
  inst.indexTicks = scaleReference(inst.indexTicks, F, T, max);
  inst.lastTradeTicks = scaleReference(inst.lastTradeTicks, F, T, max);

  // 3. Positions: exact (sizes are multiples of F now; the pool's by the zero sum). Their
  //    liquidation triggers were in old ticks: every one goes stale and is re-armed below.
  let rescaled = 0;
  for (const p of positions) {
    if (p.sizeLots !== 0) {
      const scaled = (BigInt(p.sizeLots) * BigInt(T)) / BigInt(F);
      p.sizeLots = Number(scaled);
      rescaled++;
    }
    p.trigVersion++;
    p.armed = false;
    s.markDirty(p.account!);
    s.emitPosition(p);
  }
  for (const p of inst.positions) {
    if (p.armed) {
      p.trigVersion++;
      p.armed = false;
    }
  }
  inst.longTriggers.length = 0;
  inst.shortTriggers.length = 0;

  // 4. Open orders, oldest first (a level's queue is id order, as a restore rebuilds it).
  const open = [...s.orders.values(), ...s.triggers.values()].filter((o) => o.position.inst === inst).sort((a, b) => a.id - b.id);
  let adjusted = 0;
  let canceled = 0;
  for (const o of open) {
    s.release(o);
    if (rescaleOrder(s, inst, o, T, F, max)) adjusted++;
    else canceled++;
  }

  inst.splits.add(actionId);
  s.emit({ type: 'markPrice', symbol: inst.spec.symbol, markPriceTicks: inst.markTicks, indexPriceTicks: inst.indexTicks, ...(inst.marketClosed ? { marketOpen: false as const } : {}) });
  s.emit({
    type: 'split', symbol: inst.spec.symbol, actionId, ratioTo, ratioFrom, markPriceTicks: inst.markTicks, indexPriceTicks: inst.indexTicks,
    lastTradePriceTicks: inst.lastTradeTicks, positions: rescaled, remainders, ordersAdjusted: adjusted, ordersCanceled: canceled,
  });
  return { ok: true, code: 'OK', events: s.end(), duplicate: false };
}

/** Puts a released order back in the new units; answers false when it was cancelled instead. */
function rescaleOrder(s: EngineState, inst: Instrument, o: EngineOrder, T: number, F: number, max: number): boolean {
  const buy = o.side === 'BUY';
  const price = o.priceTicks === 0 ? 0 : scaleDown(o.priceTicks, F, T, !buy);
  const trig = o.trigger === null ? 0 : scaleDown(o.trigger.priceTicks, F, T, !buy);
  const closePosition = o.trigger !== null && o.trigger.closePosition;
  const remaining = scaleDown(o.remainingLots, T, F, false);
  const filled = scaleDown(o.filledLots, T, F, false);
  const priceOk = o.priceTicks === 0 || (price >= 1 && price <= max);
  const trigOk = o.trigger === null || (trig >= 1 && trig <= max);
  if ((!closePosition && remaining === 0) || !priceOk || !trigOk) {
    s.emitDone(o, 'CANCELED', 'SPLIT', o.remainingLots);
    return false;
  }
  const size = closePosition && o.sizeLots === 0 ? 0 : filled + remaining;
  const order = new EngineOrder(o.id, o.side, price, remaining, o.account, o.position, o.type, o.timeInForce, size, o.reduceOnly, o.clientOrderId, o.createdTs);
  order.filledLots = filled;
  const imr = o.position.imrPpm;
  if (o.trigger !== null) {
    order.trigger = { ...o.trigger, priceTicks: trig, armed: true };
    order.reservePerLot = triggerReservePerLot(inst, o.side, price, trig, o.reduceOnly || closePosition, imr);
    armTrigger(s, order);
  } else {
    order.reservePerLot = reservePerLot(inst, o.side, price, imr, o.reduceOnly);
    inst.book.add(order);
    s.linkOrder(order);
    o.account.reserved += order.reservePerLot * BigInt(remaining);
  }
  const a = o.account.address;
  const symbol = inst.spec.symbol;
  s.emit({
    type: 'orderAmended', orderId: o.id, account: a, symbol, side: o.side, priceTicks: price, sizeLots: size, remainingLots: remaining, keptPriority: true,
    ...(o.trigger !== null ? { triggerPriceTicks: trig } : {}),
  });
  if (o.trigger === null) {
    s.emit({ type: 'orderResting', orderId: o.id, account: a, symbol, side: o.side, priceTicks: price, remainingLots: remaining, reserved: order.reservePerLot * BigInt(remaining) });
  }
  return true;
}
