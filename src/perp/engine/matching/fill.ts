/**
 * The execute phase of a fill: one taker against one resting maker, at the maker's price. Position
 * arithmetic (entry cost, realised PnL, isolated margin) is `applyFill`, used by the real execution
 * and by admission's scratch simulation alike, so the two can never disagree.
 */
import type { TradeEvent } from '../engine-types.ts';
import { ceilDiv, floorDiv, PPM } from '../fixed-point.ts';
import type { EngineState } from '../state/engine-state.ts';
import type { EngineOrder, Instrument, Position } from '../state/entities.ts';

/** Out-value of applyFill: margin moved into an isolated position (negative: released). */
export const fillOut = { bucketIn: 0n };

/**
 * Applies a fill of `lots` (notional given) to a position: increases add to the entry cost; decreases
 * release a share of it (rounded so the realised PnL is rounded down) and realise PnL; a flip does
 * both. Isolated positions move initial margin from the wallet on increase (rounded up) and back on
 * decrease (a share, rounded up; all of it when flat). Returns the realised PnL; the margin moved into
 * the position is left in `fillOut.bucketIn` (negative when released).
 */
export function applyFill(p: Position, buy: boolean, lots: number, notional: bigint): bigint {
  const s = p.sizeLots;
  const isolated = p.mode === 'isolated';
  let bucketIn = 0n;
  let realised = 0n;
  if (s === 0 || s > 0 === buy) {
    p.entryNotional += notional;
    p.sizeLots = buy ? s + lots : s - lots;
    if (isolated) bucketIn = ceilDiv(notional * p.imrPpm, PPM);
  } else {
    const held = s > 0 ? s : -s;
    const close = lots < held ? lots : held;
    const closeNotional = close === lots ? notional : BigInt(close) * (notional / BigInt(lots));
    const e = p.entryNotional;
    let released: bigint;
    if (close === held) released = e;
    else if (s > 0) released = ceilDiv(e * BigInt(close), BigInt(held));
    else released = floorDiv(e * BigInt(close), BigInt(held));
    realised = s > 0 ? closeNotional - released : released - closeNotional;
    p.entryNotional = e - released;
    if (isolated) {
      const b = p.isolatedMargin;
      bucketIn = close === held ? -b : -ceilDiv(b * BigInt(close), BigInt(held));
    }
    const open = lots - close;
    if (open > 0) {
      const openNotional = notional - closeNotional;
      p.entryNotional = openNotional;
      if (isolated) bucketIn += ceilDiv(openNotional * p.imrPpm, PPM);
    }
    p.sizeLots = buy ? s + lots : s - lots;
  }
  p.isolatedMargin += bucketIn;
  fillOut.bucketIn = bucketIn;
  return realised;
}

/**
 * One fill of the taker against a resting maker, at the maker's price. `takerFeePpm` is the
 * instrument's taker fee, or 0 for a liquidation (which pays the liquidation fee instead).
 */
export function executeFill(s: EngineState, inst: Instrument, taker: EngineOrder, maker: EngineOrder, lots: number, takerFeePpm: bigint): TradeEvent {
  const price = maker.priceTicks;
  const notional = BigInt(lots) * BigInt(price) * inst.unit;
  inst.book.reduce(maker, lots);
  maker.filledLots += lots;
  taker.filledLots += lots;
  taker.remainingLots -= lots;
  inst.lastTradeTicks = price;

  const mAcct = maker.account;
  const mPos = maker.position;
  const makerRealised = applyFill(mPos, maker.side === 'BUY', lots, notional);
  const makerFee = ceilDiv(notional * inst.makerFee, PPM);
  const makerDelta = makerRealised - makerFee - fillOut.bucketIn;
  mAcct.collateral += makerDelta;
  mAcct.reserved -= maker.reservePerLot * BigInt(lots);
  mAcct.realisedPnl += makerRealised;
  mAcct.feesPaid += makerFee;
  mPos.realisedPnl += makerRealised;

  const tAcct = taker.account;
  const tPos = taker.position;
  const takerRealised = applyFill(tPos, taker.side === 'BUY', lots, notional);
  const takerFee = takerFeePpm === 0n ? 0n : ceilDiv(notional * takerFeePpm, PPM);
  tAcct.collateral += takerRealised - takerFee - fillOut.bucketIn;
  tAcct.realisedPnl += takerRealised;
  tAcct.feesPaid += takerFee;
  tPos.realisedPnl += takerRealised;

  const fees = makerFee + takerFee;
  s.feeAccount.collateral += fees;
  s.feeAccount.feesReceived += fees;
  s.markDirty(mAcct);
  s.markDirty(tAcct);

  const trade: TradeEvent = {
    seq: s.nextSeq++, ts: s.cmdTs, commandId: s.cmdId, type: 'trade',
    symbol: inst.spec.symbol, priceTicks: price, sizeLots: lots, notional, takerSide: taker.side,
    makerOrderId: maker.id, takerOrderId: taker.id, makerAccount: mAcct.address, takerAccount: tAcct.address,
    makerFee, takerFee, makerRealisedPnl: makerRealised, takerRealisedPnl: takerRealised,
  };
  s.events.push(trade);
  if (maker.remainingLots === 0) {
    s.unlinkOrder(maker);
    s.emitDone(maker, 'FILLED', 'FILLED', 0);
  }
  s.emitPosition(mPos);
  s.emitBalance(mAcct, makerDelta, 'trade');
  return trade;
}
