/**
 * Funding (docs/perp-engine.md "Funding"): every open position pays or receives |size| × mark × unit
 * × |rate| / 1e9, payers rounded up and receivers down, the remainder to the fee account. A payment
 * that leaves an account below maintenance is not left there silently: the command's liquidation sweep
 * takes it at once, and what it cannot pay becomes bad debt handled as any other (docs/perp-risk.md).
 */
import type { ApplyFundingCommand } from '../engine-types.ts';
import { ceilDiv, floorDiv, RATE_E9 } from '../fixed-point.ts';
import type { Account, Instrument, Position } from '../state/entities.ts';
import type { EngineState } from '../state/engine-state.ts';

/** Charges one funding interval on `inst`; answers nothing, emits the payments and the summary. */
export function chargeFunding(s: EngineState, inst: Instrument, cmd: ApplyFundingCommand): void {
  const rate = cmd.rateE9;
  const mark = inst.valuationTicks;
  const open: Position[] = [];
  for (const p of inst.positions) if (p.sizeLots !== 0) open.push(p);
  // Account order: the events do not depend on the order positions were opened in.
  open.sort((a, b) => ((a.account as Account).address < (b.account as Account).address ? -1 : 1));
  let paid = 0n;
  let received = 0n;
  const absRate = rate < 0n ? -rate : rate;
  if (rate !== 0n && mark !== 0) {
    const markUnit = BigInt(mark) * inst.unit;
    for (const pos of open) {
      const acct = pos.account as Account;
      const exact = BigInt(pos.sizeLots < 0 ? -pos.sizeLots : pos.sizeLots) * markUnit * absRate;
      // Positive rate: longs pay. Payers round up, receivers round down.
      const pays = rate > 0n ? pos.sizeLots > 0 : pos.sizeLots < 0;
      const amount = pays ? -ceilDiv(exact, RATE_E9) : floorDiv(exact, RATE_E9);
      if (pays) paid -= amount;
      else received += amount;
      pos.funding += amount;
      acct.funding += amount;
      acct.collateral += amount;
      s.markDirty(acct);
      s.emit({ type: 'fundingPayment', account: acct.address, symbol: inst.spec.symbol, sizeLots: pos.sizeLots, markPriceTicks: mark, rateE9: rate, amount });
      if (amount !== 0n) s.emitBalance(acct, amount, 'funding');
    }
  }
  const remainder = paid - received;
  if (remainder !== 0n) {
    s.feeAccount.collateral += remainder;
    s.feeAccount.funding += remainder;
    s.emitBalance(s.feeAccount, remainder, 'funding');
  }
  inst.lastFundingTs = cmd.ts;
  inst.lastFundingRateE9 = rate;
  s.emit({ type: 'fundingApplied', symbol: inst.spec.symbol, rateE9: rate, markPriceTicks: mark, paid, received, remainder });
}
