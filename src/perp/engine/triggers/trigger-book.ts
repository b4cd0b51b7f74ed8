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
import { heapPop, heapPush } from '../binary-heap.ts';
import type { TriggerBy } from '../engine-types.ts';

/** What a trigger order waits for (docs/perp-engine.md "Trigger orders"). */
export interface OrderTrigger {
  priceTicks: number;
  by: TriggerBy;
  /** Fires when the watched price rises to priceTicks (else when it falls to it). */
  rise: boolean;
  closePosition: boolean;
  /** In its instrument's trigger book, waiting; false once fired or cancelled (its heap entries are then stale). */
  armed: boolean;
}

/**
 * What the book reads of an order: structural, so that state/entities.ts, whose instruments each hold
 * a book of their EngineOrders, is not imported back.
 */
export interface TriggerBookOrder {
  readonly id: number;
  trigger: OrderTrigger | null;
}

interface Entry<O extends TriggerBookOrder> {
  trig: number;
  id: number;
  order: O;
}

const riseBefore = <O extends TriggerBookOrder>(a: Entry<O>, b: Entry<O>): boolean => a.trig < b.trig || (a.trig === b.trig && a.id < b.id);
const fallBefore = <O extends TriggerBookOrder>(a: Entry<O>, b: Entry<O>): boolean => a.trig > b.trig || (a.trig === b.trig && a.id < b.id);

const live = <O extends TriggerBookOrder>(e: Entry<O>): boolean => e.order.trigger !== null && e.order.trigger.armed;

class Heap<O extends TriggerBookOrder> {
  readonly entries: Entry<O>[] = [];
  /** Live entries (armed orders). */
  live = 0;
  constructor(readonly before: (a: Entry<O>, b: Entry<O>) => boolean) {}

  push(order: O, trig: number): void {
    heapPush(this.entries, { trig, id: order.id, order }, this.before);
    this.live++;
  }

  /** Pops every live entry the price has reached, in firing order (nearest trigger first). */
  popReached(priceTicks: number, rise: boolean, out: O[]): void {
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

export class TriggerBook<O extends TriggerBookOrder = TriggerBookOrder> {
  private readonly markRise = new Heap<O>(riseBefore);
  private readonly markFall = new Heap<O>(fallBefore);
  private readonly lastRise = new Heap<O>(riseBefore);
  private readonly lastFall = new Heap<O>(fallBefore);

  /** Orders waiting (for reads and tests). */
  get size(): number {
    return this.markRise.live + this.markFall.live + this.lastRise.live + this.lastFall.live;
  }

  /** Whether any order watches the last trade price (checked after every trade). */
  get watchesLast(): boolean {
    return this.lastRise.live + this.lastFall.live > 0;
  }

  private heap(by: TriggerBy, rise: boolean): Heap<O> {
    if (by === 'MARK') return rise ? this.markRise : this.markFall;
    return rise ? this.lastRise : this.lastFall;
  }

  /** Indexes an armed trigger order. */
  add(order: O): void {
    const t = order.trigger!;
    this.heap(t.by, t.rise).push(order, t.priceTicks);
  }

  /** Disarms an order leaving the index unfired (cancelled). */
  remove(order: O): void {
    const t = order.trigger!;
    t.armed = false;
    this.heap(t.by, t.rise).dropped();
  }

  /**
   * Disarms and answers the orders watching `by` that `priceTicks` has reached, in ascending id
   * (the order they were placed in), so that a replay fires them in the same order.
   */
  reached(by: TriggerBy, priceTicks: number): O[] {
    const out: O[] = [];
    if (priceTicks <= 0) return out;
    this.heap(by, true).popReached(priceTicks, true, out);
    this.heap(by, false).popReached(priceTicks, false, out);
    for (const o of out) o.trigger!.armed = false;
    if (out.length > 1) out.sort((a, b) => a.id - b.id);
    return out;
  }
}
