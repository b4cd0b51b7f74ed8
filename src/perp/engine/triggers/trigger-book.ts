/**
 * An instrument's untriggered stop and take-profit orders, indexed by trigger price, so that a price
 * update costs what the orders it fires cost, not what all resting triggers cost (the approach of
 * the liquidation triggers, risk/liquidation-index.ts). Four heaps: by the watched price (MARK or
 * LAST) and by direction. A rising trigger fires when the price is at or above it, so its heap keeps
 * the lowest trigger on top; a falling one the highest. Ties go to the older order.
 *
 * Deletion is lazy: a cancelled or fired order is only marked (`trigger.armed = false`) and its entry
 * skipped when it reaches the top. A heap is rebuilt when its stale entries outnumber its live ones,
 * which keeps it within twice the orders waiting. Derived state: rebuilt from the orders on restore.
 */
import { heapPop, heapPush } from '../risk/trigger-heap.ts';
import type { EngineOrder } from '../state/entities.ts';
import type { TriggerBy } from '../engine-types.ts';

interface Entry {
  trig: number;
  id: number;
  order: EngineOrder;
}

const riseBefore = (a: Entry, b: Entry): boolean => a.trig < b.trig || (a.trig === b.trig && a.id < b.id);
const fallBefore = (a: Entry, b: Entry): boolean => a.trig > b.trig || (a.trig === b.trig && a.id < b.id);

const live = (e: Entry): boolean => e.order.trigger !== null && e.order.trigger.armed;

class Heap {
  readonly entries: Entry[] = [];
  /** Live entries (armed orders). */
  live = 0;
  constructor(readonly before: (a: Entry, b: Entry) => boolean) {}

  push(order: EngineOrder, trig: number): void {
    heapPush(this.entries, { trig, id: order.id, order }, this.before);
    this.live++;
  }

  /** Pops every live entry the price has reached, in firing order (nearest trigger first). */
  popReached(priceTicks: number, rise: boolean, out: EngineOrder[]): void {
    const h = this.entries;
    while (h.length > 0) {
      const top = h[0];
      if (live(top)) {
        if (rise ? top.trig > priceTicks : top.trig < priceTicks) return;
        this.live--;
        out.push(top.order);
      }
      heapPop(h, this.before);
    }
  }

  /** An armed entry was disarmed (cancelled): compacts when stale entries outnumber live ones. */
  dropped(): void {
    this.live--;
    if (this.entries.length > 64 && this.entries.length > 2 * this.live) {
      const keep = this.entries.filter(live);
      this.entries.length = 0;
      for (const e of keep) heapPush(this.entries, e, this.before);
    }
  }
}

export class TriggerBook {
  private readonly markRise = new Heap(riseBefore);
  private readonly markFall = new Heap(fallBefore);
  private readonly lastRise = new Heap(riseBefore);
  private readonly lastFall = new Heap(fallBefore);

  /** Orders waiting (for reads and tests). */
  get size(): number {
    return this.markRise.live + this.markFall.live + this.lastRise.live + this.lastFall.live;
  }

  /** Whether any order watches the last trade price (checked after every trade). */
  get watchesLast(): boolean {
    return this.lastRise.live + this.lastFall.live > 0;
  }

  private heap(by: TriggerBy, rise: boolean): Heap {
    if (by === 'MARK') return rise ? this.markRise : this.markFall;
    return rise ? this.lastRise : this.lastFall;
  }

  /** Indexes an armed trigger order. */
  add(order: EngineOrder): void {
    const t = order.trigger!;
    this.heap(t.by, t.rise).push(order, t.priceTicks);
  }

  /** Disarms an order leaving the index unfired (cancelled). */
  remove(order: EngineOrder): void {
    const t = order.trigger!;
    t.armed = false;
    this.heap(t.by, t.rise).dropped();
  }

  /**
   * Disarms and answers the orders watching `by` that `priceTicks` has reached, in ascending id
   * (the order they were placed in), so that a replay fires them in the same order.
   */
  reached(by: TriggerBy, priceTicks: number): EngineOrder[] {
    const out: EngineOrder[] = [];
    if (priceTicks <= 0) return out;
    this.heap(by, true).popReached(priceTicks, true, out);
    this.heap(by, false).popReached(priceTicks, false, out);
    for (const o of out) o.trigger!.armed = false;
    if (out.length > 1) out.sort((a, b) => a.id - b.id);
    return out;
  }
}
