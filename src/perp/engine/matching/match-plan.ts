/**
 * The plan phase of matching: walks the opposite side from the best price and records what a taker
 * would do, changing nothing but scratch fields, so that every check (FOK, admission) runs before the
 * state changes and a refused order leaves nothing behind. Reused arrays: no allocation per order.
 */
import type { Side } from '../book/order-book.ts';
import type { Account, EngineOrder, Instrument } from '../state/entities.ts';

export class MatchPlan {
  makers: EngineOrder[] = [];
  fillLots: number[] = [];
  /** The maker is a reduce-only order that can no longer reduce: cancel it when the match reaches it. */
  cancel: boolean[] = [];
  n = 0;
  /** The walk stopped at the taker's own resting order (self-trade prevention). */
  stp = false;
  private touched: Account[] = [];

  /**
   * Plans `lots` of `acct` on `side` up to `limit`; returns the lots the taker would have left.
   * Records fills per maker, stale reduce-only makers to cancel, and a stop at the taker's own order.
   */
  build(inst: Instrument, acct: Account, side: Side, limit: number, lots: number): number {
    const levels = inst.book.oppositeOf(side).levels;
    this.n = 0;
    this.stp = false;
    let remaining = lots;
    const buy = side === 'BUY';
    outer: for (let li = levels.length - 1; li >= 0 && remaining > 0; li--) {
      const level = levels[li];
      if (buy ? level.priceTicks > limit : level.priceTicks < limit) break;
      for (let m = level.head as EngineOrder | null; m !== null && remaining > 0; m = m.next as EngineOrder | null) {
        const mAcct = m.account;
        if (mAcct === acct) {
          this.stp = true;
          break outer;
        }
        let cap = m.remainingLots;
        let cancel = false;
        if (m.reduceOnly) {
          // What the maker can still reduce after the fills already planned for its account.
          const size = m.position.sizeLots;
          const reducible = Math.max(0, (m.side === 'SELL' ? size : -size) - mAcct.planLots);
          if (reducible < cap) {
            cap = reducible;
            cancel = true;
          }
        }
        const q = cap < remaining ? cap : remaining;
        if (q > 0) {
          if (mAcct.planLots === 0) this.touched.push(mAcct);
          mAcct.planLots += q;
          remaining -= q;
        }
        const i = this.n++;
        this.makers[i] = m;
        this.fillLots[i] = q;
        this.cancel[i] = cancel && q === cap;
      }
    }
    return remaining;
  }

  hasFill(): boolean {
    for (let i = 0; i < this.n; i++) if (this.fillLots[i] > 0) return true;
    return false;
  }

  reset(): void {
    const touched = this.touched;
    if (touched.length !== 0) {
      for (let i = 0; i < touched.length; i++) touched[i].planLots = 0;
      touched.length = 0;
    }
    // Drop maker references so cancelled orders can be collected.
    for (let i = 0; i < this.n; i++) this.makers[i] = undefined as unknown as EngineOrder;
    this.n = 0;
  }
}
