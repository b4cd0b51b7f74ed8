/**
 * Margin arithmetic (docs/perp-engine.md "Margin"): valuation, free collateral, withdrawable, order
 * reserves and the account summary. Every figure is exact bigint micro-USD, rounded against the
 * account (margins up, what it may use down).
 */
import type { Side } from '../book/order-book.ts';
import type { MarginSummary } from '../engine-types.ts';
import { ceilDiv, PPM } from '../fixed-point.ts';
import type { Account, Instrument, Position } from '../state/entities.ts';

export const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/** Unrealised PnL and signed notional of a position at `ticks` (default: its valuation price). */
export function valuation(pos: Position, ticks = pos.inst.valuationTicks): { upnl: bigint; notional: bigint } {
  const notional = BigInt(pos.sizeLots) * BigInt(ticks) * pos.inst.unit;
  return { upnl: pos.sizeLots > 0 ? notional - pos.entryNotional : notional + pos.entryNotional, notional };
}

export function initialMargin(pos: Position, notional: bigint): bigint {
  return ceilDiv(abs(notional) * pos.imrPpm, PPM);
}

export function maintenanceMargin(pos: Position, notional: bigint): bigint {
  return ceilDiv(abs(notional) * pos.inst.mmrPpm, PPM);
}

/** A position's part of free collateral: cross uPnL − IM; isolated only its deficit below zero. */
export function contribution(pos: Position, ticks: number): bigint {
  const s = pos.sizeLots;
  if (s === 0) return 0n;
  const notional = BigInt(s) * BigInt(ticks) * pos.inst.unit;
  const upnl = s > 0 ? notional - pos.entryNotional : notional + pos.entryNotional;
  if (pos.mode === 'cross') return upnl - ceilDiv((s > 0 ? notional : -notional) * pos.imrPpm, PPM);
  const t = pos.isolatedMargin + upnl;
  return t < 0n ? t : 0n;
}

/**
 * Free collateral: collateral − order reserves + Σ cross (uPnL − IM) + Σ isolated min(0, margin + uPnL).
 * What new orders and margin moves may use.
 */
export function freeCollateral(acct: Account): bigint {
  let f = acct.collateral - acct.reserved;
  const list = acct.positionList;
  for (let i = 0; i < list.length; i++) f += contribution(list[i], list[i].inst.valuationTicks);
  return f;
}

/**
 * Withdrawable, Binance's rule: min(balance, balance + cross uPnL) − cross IM − order reserves
 * + Σ isolated min(0, margin + uPnL), never below zero. `balance` is the collateral, pending
 * withdrawals already taken out of it. Unrealised profit is never withdrawable.
 */
export function withdrawable(acct: Account): bigint {
  let upnl = 0n;
  let im = 0n;
  let iso = 0n;
  const list = acct.positionList;
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (p.sizeLots === 0) continue;
    const { upnl: u, notional } = valuation(p);
    if (p.mode === 'cross') {
      upnl += u;
      im += initialMargin(p, notional);
    } else if (p.isolatedMargin + u < 0n) iso += p.isolatedMargin + u;
  }
  const base = upnl < 0n ? acct.collateral + upnl : acct.collateral;
  const w = base - im - acct.reserved + iso;
  return w > 0n ? w : 0n;
}

/** Margin reserved per lot of a resting order: initial margin, the loss against the mark if filled, the maker fee. */
export function reservePerLot(inst: Instrument, side: Side, priceTicks: number, imrPpm: bigint, reduceOnly: boolean): bigint {
  const mark = inst.markTicks !== 0 ? inst.markTicks : priceTicks;
  const unit = inst.unit;
  const p = BigInt(priceTicks);
  const gap = side === 'BUY' ? priceTicks - mark : mark - priceTicks;
  let r = ceilDiv(p * unit * inst.makerFee, PPM);
  if (gap > 0) r += BigInt(gap) * unit;
  if (!reduceOnly) r += ceilDiv(BigInt(priceTicks > mark ? priceTicks : mark) * unit * imrPpm, PPM);
  return r;
}

/** Cross equity (collateral + cross uPnL) and cross maintenance margin. */
export function crossHealth(acct: Account): { equity: bigint; mm: bigint; notional: bigint } {
  let equity = acct.collateral;
  let mm = 0n;
  let total = 0n;
  const list = acct.positionList;
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (p.sizeLots === 0 || p.mode !== 'cross') continue;
    const { upnl, notional } = valuation(p);
    equity += upnl;
    mm += maintenanceMargin(p, notional);
    total += abs(notional);
  }
  return { equity, mm, notional: total };
}

export function marginSummary(acct: Account): MarginSummary {
  let crossUpnl = 0n;
  let crossIm = 0n;
  let crossMm = 0n;
  let isoEquity = 0n;
  let liquidatable = false;
  for (const p of acct.positionList) {
    if (p.sizeLots === 0) continue;
    const { upnl, notional } = valuation(p);
    const im = initialMargin(p, notional);
    const mm = maintenanceMargin(p, notional);
    if (p.mode === 'cross') {
      crossUpnl += upnl;
      crossIm += im;
      crossMm += mm;
    } else {
      isoEquity += p.isolatedMargin + upnl;
      if (mm > 0n && p.isolatedMargin + upnl < mm) liquidatable = true;
    }
  }
  if (crossMm > 0n && acct.collateral + crossUpnl < crossMm) liquidatable = true;
  return {
    collateral: acct.collateral, equity: acct.collateral + crossUpnl + isoEquity, crossUnrealisedPnl: crossUpnl,
    crossInitialMargin: crossIm, crossMaintenanceMargin: crossMm, orderReserve: acct.reserved,
    freeCollateral: freeCollateral(acct), withdrawable: withdrawable(acct), pendingWithdrawals: acct.pendingWithdrawals, liquidatable,
  };
}

/**
 * The whole account's equity (collateral + cross uPnL + each isolated margin + uPnL) and maintenance
 * margin. When funding or fees take the wallet below zero, isolated positions no longer stand apart:
 * the account is judged as a whole (docs/perp-risk.md "When an account is liquidatable").
 */
export function totalHealth(acct: Account): { equity: bigint; mm: bigint } {
  let equity = acct.collateral;
  let mm = 0n;
  for (const p of acct.positionList) {
    if (p.sizeLots === 0) continue;
    const { upnl, notional } = valuation(p);
    equity += upnl + (p.mode === 'isolated' ? p.isolatedMargin : 0n);
    mm += maintenanceMargin(p, notional);
  }
  return { equity, mm };
}

/** A wallet below zero whose account as a whole is below maintenance. */
export function walletBelow(acct: Account): boolean {
  if (acct.collateral >= 0n) return false;
  const h = totalHealth(acct);
  return h.mm > 0n && h.equity < h.mm;
}
