/**
 * Position settings: leverage and margin mode (setLeverage), and isolated margin moves
 * (adjustMargin). Both check their margin rule before changing anything.
 */
import { triggerReservePerLot } from './place-order-command.ts';
import type { Accepted, AdjustMarginCommand, MarginMode, Rejected, SetLeverageCommand } from '../engine-types.ts';
import { ceilDiv, PPM } from '../fixed-point.ts';
import { abs, freeCollateral, reservePerLot, valuation, withdrawable } from '../risk/margin.ts';
import { imrFor } from '../risk/margin-rates.ts';
import type { EngineOrder } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { MAX_AMOUNT, accountOf, checkBase, instrumentOf, isRejected, isSafePosInt } from '../state/validate.ts';

export function setLeverageCommand(s: EngineState, cmd: SetLeverageCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct;
  const inst = instrumentOf(s, cmd.symbol);
  if (isRejected(inst)) return inst;
  const leverage = cmd.leverage;
  if (!isSafePosInt(leverage)) return reject('INVALID', 'leverage: a positive integer');
  if (leverage > inst.spec.maxLeverage) return reject('LEVERAGE_EXCEEDED', `leverage: at most ${inst.spec.maxLeverage}`);
  const mode = cmd.marginMode;
  if (mode !== undefined && mode !== null && mode !== 'cross' && mode !== 'isolated') return reject('INVALID', 'marginMode: cross or isolated');
  const existing = acct.positions.get(inst.spec.symbol);
  const newMode: MarginMode = mode ?? existing?.mode ?? 'cross';
  if (existing !== undefined) {
    if (newMode !== existing.mode && (existing.sizeLots !== 0 || existing.openOrders > 0)) {
      return reject('MARGIN_MODE_LOCKED', 'marginMode: changes only with no position and no open orders on the symbol');
    }
    const newImr = imrFor(inst.spec, leverage);
    if (existing.sizeLots !== 0 && existing.mode === 'isolated') {
      const { upnl, notional } = valuation(existing);
      const need = ceilDiv(abs(notional) * newImr, PPM);
      if (existing.isolatedMargin + (upnl < 0n ? upnl : 0n) < need) {
        return reject('INSUFFICIENT_MARGIN', 'leverage: the isolated margin would not cover the initial margin; add margin first');
      }
    }
    // Tentatively apply: the position's rate and the reserves of its open orders at the current mark.
    const pre = freeCollateral(acct);
    const oldImr = existing.imrPpm;
    const oldLeverage = existing.leverage;
    const saved: Array<[EngineOrder, bigint]> = [];
    existing.imrPpm = newImr;
    existing.leverage = leverage;
    for (let o = acct.ordersHead; o !== null; o = o.accNext) {
      if (o.position !== existing) continue;
      saved.push([o, o.reservePerLot]);
      // A waiting trigger order reserves by its own rule (place-order-command.ts).
      const perLot =
        o.trigger !== null ? triggerReservePerLot(inst, o.side, o.priceTicks, o.trigger.priceTicks, o.reduceOnly, newImr) : reservePerLot(inst, o.side, o.priceTicks, newImr, o.reduceOnly);
      acct.reserved += (perLot - o.reservePerLot) * BigInt(o.remainingLots);
      o.reservePerLot = perLot;
    }
    const post = freeCollateral(acct);
    if (post < 0n && post < pre) {
      existing.imrPpm = oldImr;
      existing.leverage = oldLeverage;
      for (const [o, perLot] of saved) {
        acct.reserved += (perLot - o.reservePerLot) * BigInt(o.remainingLots);
        o.reservePerLot = perLot;
      }
      return reject('INSUFFICIENT_MARGIN', `leverage: free collateral would be ${post}`);
    }
    s.begin(cmd);
    existing.mode = newMode;
  } else {
    s.begin(cmd);
    const pos = s.materialisePosition(acct, inst);
    pos.leverage = leverage;
    pos.imrPpm = imrFor(inst.spec, leverage);
    pos.mode = newMode;
  }
  s.markDirty(acct);
  s.emit({ type: 'leverageChanged', account: acct.address, symbol: inst.spec.symbol, leverage, marginMode: newMode });
  return { ok: true, code: 'OK', events: s.end() };
}

export function adjustMarginCommand(s: EngineState, cmd: AdjustMarginCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const amount = cmd.amount;
  if (typeof amount !== 'bigint' || amount === 0n || abs(amount) > MAX_AMOUNT) return reject('INVALID', 'amount: a non-zero bigint of micro-USD');
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct;
  const inst = instrumentOf(s, cmd.symbol);
  if (isRejected(inst)) return inst;
  const pos = acct.positions.get(inst.spec.symbol);
  if (pos === undefined || pos.sizeLots === 0 || pos.mode !== 'isolated') return reject('POSITION_NOT_OPEN', 'symbol: no open isolated position');
  if (amount > 0n) {
    const max = withdrawable(acct);
    if (amount > max) return reject('INSUFFICIENT_MARGIN', `amount: more than the free ${max}`);
  } else {
    const { upnl, notional } = valuation(pos);
    const need = ceilDiv(abs(notional) * pos.imrPpm, PPM);
    const removable = pos.isolatedMargin + (upnl < 0n ? upnl : 0n) - need;
    const cap = removable < pos.isolatedMargin ? removable : pos.isolatedMargin;
    if (-amount > cap) return reject('INSUFFICIENT_MARGIN', `amount: at most ${cap > 0n ? cap : 0n} can be removed`);
  }
  s.begin(cmd);
  pos.isolatedMargin += amount;
  acct.collateral -= amount;
  s.markDirty(acct);
  s.emitPosition(pos);
  s.emitBalance(acct, -amount, 'margin');
  return { ok: true, code: 'OK', events: s.end() };
}
