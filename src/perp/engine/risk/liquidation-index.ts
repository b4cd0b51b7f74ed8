/**
 * Positions indexed by liquidation trigger price, so that a mark update costs what its crossed
 * positions cost, not what all positions cost (docs/perp-risk.md "Finding liquidatable accounts").
 *
 * An account's margin buffer B = equity − maintenance margin is shared out over its cross positions
 * in proportion to their notional; each position's trigger is how far its own mark may move against
 * it before it could have used up its share, with every rounding against the account. So while no
 * trigger of an account is crossed, the account cannot be liquidatable; a crossed trigger only asks
 * for the exact check, which decides. An isolated position is its own account with one position. An
 * account already below its maintenance margin, or with open bad debt, triggers on any mark update of
 * its instruments.
 *
 * The index is derived state: rebuilt from the positions on restore, never snapshotted.
 */
import { PPM, ceilDiv } from '../fixed-point.ts';
import type { Account, Instrument, Position } from '../state/entities.ts';
import { abs, maintenanceMargin, valuation, walletBelow } from './margin.ts';
import { heapPop, heapPush } from '../binary-heap.ts';
import { compact, isLive, longBefore, shortBefore } from './trigger-heap.ts';

const ALWAYS_LONG = Number.MAX_SAFE_INTEGER;
const ALWAYS_SHORT = 0;
/** Beyond any price (2^48 ticks is the instrument maximum): the trigger never fires. */
const MAX_TICKS = 2n ** 50n;

/** Per tick of adverse move: the equity lost plus the most the maintenance margin can grow. */
function adverseRate(p: Position): bigint {
  const lotsUnit = BigInt(p.sizeLots < 0 ? -p.sizeLots : p.sizeLots) * p.inst.unit;
  return lotsUnit + ceilDiv(lotsUnit * p.inst.mmrPpm, PPM);
}

function push(p: Position, trig: number): void {
  const long = p.sizeLots > 0;
  // A live trigger that fires no later than the new one is still a safe bound: keep it (a trigger
  // that fires early only asks for the exact check). Only a trigger moving towards the price, or to
  // the other side, is pushed: most re-arms after a trade allocate nothing.
  if (p.armed && p.liveLong === long && (long ? trig <= p.liveTrig : trig >= p.liveTrig)) return;
  p.armed = true;
  p.liveTrig = trig;
  p.liveLong = long;
  const inst = p.inst;
  const e = { trig, pos: p, version: ++p.trigVersion };
  if (p.sizeLots > 0) {
    heapPush(inst.longTriggers, e, longBefore);
    if (inst.longTriggers.length > 64 && inst.longTriggers.length > 2 * inst.positions.size) compact(inst.longTriggers, longBefore);
  } else {
    heapPush(inst.shortTriggers, e, shortBefore);
    if (inst.shortTriggers.length > 64 && inst.shortTriggers.length > 2 * inst.positions.size) compact(inst.shortTriggers, shortBefore);
  }
}

function arm(p: Position, budget: bigint, rounding: bigint): void {
  const price = p.inst.valuationTicks;
  const usable = budget - rounding;
  if (usable < 0n || price === 0) {
    push(p, p.sizeLots > 0 ? ALWAYS_LONG : ALWAYS_SHORT);
    return;
  }
  const ticks = usable / adverseRate(p);
  const t = ticks > MAX_TICKS ? Number(MAX_TICKS) : Number(ticks);
  push(p, p.sizeLots > 0 ? price - t - 1 : price + t + 1);
}

/**
 * Re-arms every position of the account. Answers true when the account (cross, or one of its
 * isolated positions) is below its maintenance margin now.
 *
 * An account with open bad debt (`openDebt`) triggers on every mark update of its instruments, as
 * one below maintenance does: the sweep settles its debt again at each (resolved once its equity is
 * back), so whether it is checked must follow from the state alone. Left to its margin, it would
 * be checked or not by what the index happened to keep: the running engine still held the ALWAYS
 * trigger of when the account was under water, where an engine restored from a snapshot re-armed
 * it at a later one, and the two resolved the debt at different commands.
 */
export function armAccount(acct: Account, openDebt: boolean): boolean {
  const below = armByMargin(acct);
  if (openDebt) {
    const list = acct.positionList;
    for (let i = 0; i < list.length; i++) if (list[i].sizeLots !== 0) arm(list[i], -1n, 0n);
  }
  return below;
}

function armByMargin(acct: Account): boolean {
  let below = false;
  let equity = acct.collateral;
  let mm = 0n;
  let total = 0n;
  let crossCount = 0n;
  const list = acct.positionList;
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (p.sizeLots === 0) {
      if (p.armed) {
        p.trigVersion++;
        p.armed = false;
      }
      continue;
    }
    const { upnl, notional } = valuation(p);
    const m = maintenanceMargin(p, notional);
    if (p.mode === 'isolated') {
      const b = p.isolatedMargin + upnl - m;
      if (m > 0n && b < 0n) below = true;
      arm(p, b < 0n ? -1n : b, 1n);
      continue;
    }
    equity += upnl;
    mm += m;
    total += abs(notional);
    crossCount++;
  }
  if (walletBelow(acct)) {
    // The wallet is negative and the account as a whole under maintenance: every position triggers.
    for (let i = 0; i < list.length; i++) if (list[i].sizeLots !== 0) arm(list[i], -1n, 0n);
    return true;
  }
  if (crossCount === 0n) return below;
  const b = equity - mm;
  if (mm > 0n && b < 0n) below = true;
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (p.sizeLots === 0 || p.mode !== 'cross') continue;
    if (b < 0n || total === 0n) {
      arm(p, -1n, 0n);
      continue;
    }
    const share = (b * abs(valuation(p).notional)) / total;
    arm(p, share, crossCount);
  }
  return below;
}

/**
 * Pops the positions of `inst` whose trigger the mark `markTicks` has crossed (live entries only)
 * and answers their accounts. Popped positions are re-armed by whoever checks them.
 */
export function crossedAccounts(inst: Instrument, markTicks: number, out: Set<Account>): void {
  const longs = inst.longTriggers;
  while (longs.length > 0 && longs[0].trig >= markTicks) {
    const e = heapPop(longs, longBefore)!;
    if (isLive(e) && e.pos.account !== null) {
      e.pos.armed = false;
      out.add(e.pos.account);
    }
  }
  const shorts = inst.shortTriggers;
  while (shorts.length > 0 && shorts[0].trig <= markTicks) {
    const e = heapPop(shorts, shortBefore)!;
    if (isLive(e) && e.pos.account !== null) {
      e.pos.armed = false;
      out.add(e.pos.account);
    }
  }
}
